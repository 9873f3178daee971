"""Faithfulness of an explanation: ERASER comprehensiveness and sufficiency (DeYoung et al., 2020).

Comprehensiveness: how much the target's probability drops when the top-k% tokens are deleted.
Sufficiency: how much it drops when only the top-k% tokens are kept. Both are averaged over
k = 10..50% (AOPC). A faithful explanation has high comprehensiveness and low sufficiency.
Special tokens are never deleted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from explorer.explain.attribution import ALIASES, METHODS, Attribution, attribute, quantity_of
from explorer.model import problem
from explorer.model.checkpoints import Checkpoint, forward_inputs
from explorer.model.heads import Head, run_head
from explorer.model.kernel import attention_kernel
from explorer.model.readable import word_index
from explorer.runtime import budget
from explorer.runtime.jobs import Progress, span

FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
ProbFn = Callable[[list[list[int]]], np.ndarray]  # id sequences -> (batch,) target probability


@dataclass(frozen=True)
class Faithfulness:
    method: str
    comprehensiveness: float  # AOPC; higher is more faithful
    sufficiency: float  # AOPC; lower is more faithful
    completeness_error: float | None  # lig only
    seconds: float


def erasures(items: Sequence, index: Sequence[int | None], *, word_scores, fractions=FRACTIONS) -> list[list]:
    """The sequences comprehensiveness and sufficiency need for one ranking, the one erasure loop: per fraction,
    the items with the top-k% words deleted, then only those words' items (and the specials) kept. `index`: per
    item its word (None: a special, never deleted), `word_scores` per word. Ties keep word order."""
    n = len(word_scores)
    order = sorted(range(n), key=lambda w: -float(word_scores[w]))
    out = []
    for f in fractions:
        top = set(order[:max(1, math.ceil(f * n - 1e-9))])
        out.append([t for t, w in zip(items, index) if w is None or w not in top])
        out.append([t for t, w in zip(items, index) if w is None or w in top])
    return out


def aopc(full: float, probs: Sequence[float]) -> tuple[float, float]:
    """(comprehensiveness, sufficiency) AOPC from the full text's probability and `erasures`' probabilities."""
    p = np.asarray(probs, np.float64)
    return float(np.mean(full - p[0::2])), float(np.mean(full - p[1::2]))


def token_aopc(prob: ProbFn, ids: list, *, special: list[bool], scores, fractions=FRACTIONS) -> tuple[float, float]:
    """(comprehensiveness, sufficiency) AOPC for one ranking of tokens (each text token a word of its own;
    `special` ones never deleted); ties keep token order. One batch: the full text, then its erasures."""
    index = word_index(range(len(ids)), special)  # every text token its own word (distinct word ids)
    text_scores = [scores[i] for i, sp in enumerate(special) if not sp]
    seqs = erasures(ids, index, word_scores=text_scores, fractions=fractions)
    p = np.asarray(prob([list(ids), *seqs]), dtype=np.float64)
    return aopc(p[0], p[1:])


def model_prob(ck: Checkpoint, head: Head, *, target: int, typed: bool = False, token: bool = False) -> ProbFn:
    """The target's probability (softmax/sigmoid as the problem type says) for padded id batches.
    `typed`: the items are (id, segment) pairs, and the segments go in as token_type_ids.
    `token`: a token classifier; each item ends with a flag marking the explained token, whose position moves
    as tokens are deleted: the probability is read there."""
    ptype = problem.problem_type(ck.model.config)
    pad = ck.tokenizer.pad_token_id or 0
    device = ck.model.device

    def prob(batch: list[list]) -> np.ndarray:
        # Batches within HEAD_EXPLORER_BATCH_MB at the longest row's length; masked padding changes nothing.
        rows = budget.batch_rows(ck.model.config, max(len(s) for s in batch), device=device)
        return np.concatenate([padded([batch[i] for i in r]) for r in budget.chunks(len(batch), rows)])

    def padded(batch: list[list]) -> np.ndarray:
        width = max(len(s) for s in batch)
        extra, at = {}, None
        if token:
            at = [next(k for k, item in enumerate(s) if item[-1]) for s in batch]
            batch = [[item[:2] if typed else item[0] for item in s] for s in batch]
        if typed:
            extra["token_type_ids"] = torch.tensor([[g for _, g in s] + [0] * (width - len(s)) for s in batch],
                                                   device=device)
            batch = [[i for i, _ in s] for s in batch]
        ids = torch.tensor([s + [pad] * (width - len(s)) for s in batch], device=device)
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in batch], device=device)
        with torch.inference_mode(), attention_kernel(ck, "sdpa"):  # no weights read: the fast kernel
            hidden = ck.model.base_model(input_ids=ids, attention_mask=mask, **extra).last_hidden_state
            logits = run_head(head, hidden, mask)[-1][1]
            if at is not None:  # (batch, seq, labels) -> (batch, labels) at each row's explained token
                logits = logits[torch.arange(len(at), device=device), torch.tensor(at, device=device)]
            return quantity_of(logits, target, quantity="probability", ptype=ptype).double().cpu().numpy()

    return prob


def of(ck: Checkpoint, head: Head, *, a: Attribution) -> tuple[float, float]:
    """AOPC comprehensiveness and sufficiency of one attribution. A sentence pair keeps each remaining
    token's segment, where the model reads segments. A token classifier's explained token (a.target_token) is
    never deleted, as special tokens are not: without it there is no prediction to read."""
    typed = 1 in a.segments and "token_type_ids" in ck.tokenizer.model_input_names \
        and "token_type_ids" in forward_inputs(ck.model)
    items = list(zip(a.token_ids, a.segments)) if typed else list(a.token_ids)
    kept = list(a.special)
    if a.target_token is not None:
        items = [(*(item if typed else (item,)), i == a.target_token) for i, item in enumerate(items)]
        kept[a.target_token] = True
    return token_aopc(model_prob(ck, head, target=a.target, typed=typed, token=a.target_token is not None), items,
                      special=kept, scores=a.scores)


def compare_methods(ck: Checkpoint, head: Head, *, text: str, target: int | None = None, quantity: str = "logit",
            baseline: str = "pad", window: int = 1, methods=METHODS,
            progress: Progress | None = None, text_pair: str | None = None,
            target_token: int | None = None) -> list[Faithfulness]:
    """Run every method on `text` (paired with `text_pair` if given) and score each explanation's faithfulness.
    A method named twice (or by another name, as "ig" for "lig") runs once. `target_token`: a token
    classifier's explained token (attribution.attribute's), its probability read where it moves."""
    methods = tuple(dict.fromkeys(ALIASES.get(m, m) for m in methods))
    rows = []
    for k, method in enumerate(methods):
        sub = span(progress, k / len(methods), (k + 1) / len(methods), f"{method}: ")
        a = attribute(ck, head, text=text, method=method, target=target, quantity=quantity, baseline=baseline,
                      window=window, progress=sub,
                      text_pair=text_pair, target_token=target_token)
        comp, suff = of(ck, head, a=a)
        rows.append(Faithfulness(method, comp, suff, a.error, a.seconds))
    return rows
