"""Monte-Carlo dropout on the head, done functionally: the shared model stays in eval mode.

Each of N samples draws its own keep-mask from a seeded torch.Generator inside heads.run_head,
so the same (p, N, seed) always gives the same samples and no module's .training flag changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.model.problem import ProblemType
from explorer.model.analysis import AnalysisError
from explorer.model.heads import Head, head_device, is_per_token, run_head
from explorer.model.steps import Op
from explorer.runtime import budget


@dataclass(frozen=True)
class MCDropout:
    p: float
    logits: np.ndarray  # (samples, labels)
    probs: np.ndarray  # (samples, labels): each sample through the problem type's own rule
    eval_logits: np.ndarray  # (labels,)
    eval_probs: np.ndarray  # (labels,)
    agreement: float  # share of samples whose predicted label equals the eval-mode prediction

    @property
    def mean(self) -> np.ndarray:  # (labels,)
        return self.logits.mean(axis=0)

    @property
    def std(self) -> np.ndarray:  # (labels,)
        return self.logits.std(axis=0)


@dataclass(frozen=True)
class MaskSample:
    step: str  # the dropout step's name and position, e.g. "dropout #1"
    before: np.ndarray  # (features,) the step's input in this sample
    after: np.ndarray  # (features,)
    keep: np.ndarray  # (features,) bool
    scale: float  # 1/(1-p) applied to kept features


def _inputs(hidden: np.ndarray, batch: int, token_ids=None,
            device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    h = torch.as_tensor(np.asarray(hidden, dtype=np.float32), device=device)  # (seq, hidden), on the head's device
    # The token ids matter where the head pools the last non-pad token (a pad id may end the text).
    ids = None if token_ids is None else torch.tensor([list(token_ids)] * batch, device=device)
    return h.unsqueeze(0).expand(batch, -1, -1), torch.ones(batch, h.shape[0], dtype=torch.long, device=device), ids


def dropout_steps(head: Head) -> list[int]:
    """Indices of the head's dropout steps: one for bert, two for roberta."""
    return [i for i, s in enumerate(head.steps) if s.op == Op.DROPOUT]


def mc_dropout(head: Head, hidden: np.ndarray, *, p: float, samples: int, seed: int = 0,
               ptype: str = ProblemType.SINGLE, token_ids=None) -> MCDropout:
    """`hidden`: (seq, hidden) last encoder layer. Returns N head passes with dropout at rate p;
    probabilities follow `ptype` (softmax, sigmoid, or the raw value for regression). A per-token head
    (heads.is_per_token) reads each token's vector alone: give it one token's, (1, hidden), for that token's tag."""
    if not 0.0 <= p < 1.0:
        raise AnalysisError("dropout_p", p=p)
    x, mask, ids = _inputs(hidden, samples, token_ids, head_device(head))
    # The samples share one expanded input, but a mean-pooling head (or an own head) materialises
    # (samples, seq, hidden): run them in batches within HEAD_EXPLORER_BATCH_MB (x2: the pooled product and
    # its input). A short text is one batch; the generator runs on across batches, so a result
    # depends only on (p, N, seed) and the budget.
    rows = budget.rows_within(2 * x.shape[1] * x.shape[2] * x.element_size(), x.device)
    with torch.inference_mode():
        gen = torch.Generator().manual_seed(seed)
        logits = np.concatenate([run_head(head, x[r.start:r.stop], mask[r.start:r.stop], dropout_p=p, generator=gen,
                                          input_ids=None if ids is None else ids[r.start:r.stop])[-1][1].cpu().numpy()
                                 for r in budget.chunks(samples, rows)]).astype(np.float64)
        ev = run_head(head, x[:1], mask[:1], input_ids=None if ids is None else ids[:1])[-1][1][0]
        ev = ev.cpu().numpy().astype(np.float64)
    if is_per_token(head):  # (samples, 1, labels): the one token's rows
        logits, ev = logits[:, 0], ev[0]
    ptype = ProblemType(ptype)
    want = ptype.predict(ev, head.labels)
    agree = float(np.mean([ptype.predict(z, head.labels) == want for z in logits]))
    return MCDropout(p=p, logits=logits, probs=ptype.probabilities(logits), eval_logits=ev,
                     eval_probs=ptype.probabilities(ev), agreement=agree)


def mask_sample(head: Head, hidden: np.ndarray, *, p: float, seed: int = 0, which: int = 0,
                token_ids=None) -> MaskSample:
    """One sample's keep-mask at the head's `which`-th dropout step, with what goes in and out."""
    idx = dropout_steps(head)[which]
    x, mask, ids = _inputs(hidden, 1, token_ids, head_device(head))
    with torch.inference_mode():
        steps = run_head(head, x, mask, dropout_p=p, generator=torch.Generator().manual_seed(seed), input_ids=ids)
    # The input as this sample saw it: an earlier dropout step may already have changed it.
    before = (steps[idx - 1][1] if idx else x[:, 0])[0].cpu().numpy()
    after = steps[idx][1][0].cpu().numpy()
    if is_per_token(head):  # one token's vector in: its (1, features) row
        before, after = (before if idx == 0 else before[0]), after[0]
    keep = ~((after == 0) & (before != 0))
    return MaskSample(step=f"{head.steps[idx].name} #{which + 1}", before=before, after=after, keep=keep,
                      scale=1.0 / (1.0 - p) if p < 1 else float("inf"))
