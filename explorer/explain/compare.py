"""The same encoder output through every head kind: steps, logits, and which heads are untrained."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.model import problem
from explorer.model.problem import ProblemType
from explorer.model.heads import Head, head_device, is_per_token, run_head


@dataclass(frozen=True)
class HeadResult:
    kind: str
    steps: tuple[str, ...]
    logits: np.ndarray  # (labels,)
    probs: np.ndarray  # (labels,) by the problem type's own rule
    predicted: problem.Prediction
    new_parameters: tuple[str, ...]  # empty when every layer came from the checkpoint


def compare_heads(hidden: np.ndarray, heads: dict[str, Head], *, labels: tuple[str, ...], ptype: str,
            token_ids=None) -> list[HeadResult]:
    """`hidden`: (seq, hidden) last encoder layer, run once and shared by every head (eval mode).
    `token_ids`: the text's ids, where a head pools the last non-pad token (a pad id may end the text).
    A per-token head (heads.is_per_token) reads each token's vector alone: give one token's, (1, hidden)."""
    out = []
    for kind, head in heads.items():
        device = head_device(head)  # heads of one checkpoint share its device; each is asked anyway
        x = torch.as_tensor(np.asarray(hidden, dtype=np.float32), device=device)[None]  # (1, seq, hidden)
        mask = torch.ones(1, x.shape[1], dtype=torch.long, device=device)
        ids = None if token_ids is None else torch.tensor([list(token_ids)], device=device)
        with torch.inference_mode():
            logits = run_head(head, x, mask, input_ids=ids)[-1][1][0].cpu().numpy().astype(np.float64)
        if is_per_token(head):  # (1, labels): the one token's row
            logits = logits[0]
        out.append(HeadResult(kind=kind, steps=tuple(s.name for s in head.steps), logits=logits,
                              probs=ProblemType(ptype).probabilities(logits),
                              predicted=ProblemType(ptype).predict(logits, labels),
                              new_parameters=head.new_parameters))
    return out
