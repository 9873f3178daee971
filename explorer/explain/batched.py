"""Attributions of many texts at once: their integration points share padded forward/backward passes.

`attribute_many` gives what `attribute` gives text by text (the same Attribution objects, each lig
path adaptive to its own tolerance or flagged `converged: false`), but packs the gradients every
text's path needs next into batches of rows within the memory budget (HEAD_EXPLORER_BATCH_MB) and an
optional internal batch size. Rows are sorted by length so a batch pads little.

Padding changes no text's numbers: each text is padded on the right, so its tokens keep their
positions (a left-padding tokenizer's side is not used: decoders would shift their position ids),
padded positions are masked out of attention (causal decoders never read later positions anyway),
last-token pooling reads the mask (and an own head sees its placeholder pad ids there), and the
integrand is read on the text's own positions only. What remains is float rounding of a larger
batch (1e-6 relative here; tests/test_attribution_batched.py holds it to 1e-5).
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch

from explorer.explain.attribution import (
    INTEGRATED, TOLERANCE, Attribution, Forward, Inputs, IntegralPath, assemble, attribute, check_target,
    check_target_token, checked_method, path_gradients, prepare_inputs, quantity_of,
)
from explorer.explain.request import AttributionError, MethodOutput, Request
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head, head_at_precision
from explorer.runtime import budget
from explorer.runtime.device import halving_on_oom
from explorer.runtime.jobs import Progress, span

Job = tuple[int, float]  # (text, alpha): one row, the point b + alpha (x − b) of that text's path


def attribute_many(ck: Checkpoint, head: Head, *, texts: Sequence[str], method: str = "lig",
                   target: int | Sequence[int | None] | None = None, quantity: str = "logit", baseline: str = "pad",
                   n_steps: int | None = None, window: int = 1, tolerance: float = TOLERANCE,
                   progress: Progress | None = None, text_pairs: Sequence[str | None] | None = None,
                   batch_size: int | None = None, dtype: str | torch.dtype | None = None) -> list[Attribution]:
    """`attribute` for each text (and its pair), in text order; lig's points in shared batches.

    target: one label for every text, one per text (None: that text's predicted label), or None.
    batch_size: at most this many rows per forward/backward (default: what the memory budget allows).
    Other methods than lig run text by text. `seconds` of each result is its share of the batch time.
    dtype: the forwards' precision, as `attribute` takes it.
    """
    method = checked_method(method, baseline, quantity=quantity, n_steps=n_steps)
    if dtype is not None:
        ck, head = head_at_precision(ck, head, dtype)
    n = len(texts)
    targets = [target] * n if target is None or isinstance(target, (int, np.integer)) else list(target)
    pairs = list(text_pairs) if text_pairs is not None else [None] * n
    if len(targets) != n or len(pairs) != n:
        raise AttributionError("attribution_many_lengths", n=n, targets=len(targets), pairs=len(pairs))
    for t in targets:
        check_target(ck, t)
    if n == 0:
        return []
    if method not in INTEGRATED:
        return [attribute(ck, head, text=text, method=method, target=t, quantity=quantity, baseline=baseline,
                          n_steps=n_steps, window=window, tolerance=tolerance,
                          progress=span(progress, k / n, (k + 1) / n, f"{k + 1}/{n}: "), text_pair=pair)
                for k, (text, t, pair) in enumerate(zip(texts, targets, pairs))]
    start = time.perf_counter()
    inps = [prepare_inputs(ck, text, text_pair=pair, baseline=baseline) for text, pair in zip(texts, pairs)]
    check_target_token(head, None, n=len(inps[0].ids))  # a token classifier's head: explain one token at a time
    rows = _Rows(ck, head, quantity, inps, batch_size, progress)
    rows.predict([k for k, t in enumerate(targets) if t is None], targets)
    if n_steps:
        results = _fixed(rows, targets, n_steps)
    else:
        results = _adaptive(rows, targets, tolerance)
    seconds = (time.perf_counter() - start) / max(1, n)
    request = Request(method, quantity, baseline, tolerance)
    return [assemble(ck, inp, request=request, target=t, out=r, seconds=seconds) for inp, t,
            r in zip(inps, targets, results)]


def _adaptive(rows: _Rows, targets: list[int], tolerance: float) -> list[MethodOutput]:
    """Every text's IntegralPath, driven in rounds: the points all unfinished paths need go in shared batches."""
    paths = [IntegralPath(rows.model, inp.x, inp.b, 0) for inp in rows.inps]
    active = list(range(len(paths)))
    while active:
        needs = {k: paths[k].needs() for k in active}
        jobs = [(k, a) for k in active for a in needs[k]]
        vals, dens = rows.gradients(jobs, targets, len(active))
        i = 0
        for k in active:  # jobs are in text order: each text's rows are consecutive
            m = len(needs[k])
            paths[k].record(needs[k], vals[i:i + m], dens[i:i + m])
            i += m
        active = [k for k in active if not paths[k].advance(tolerance)]
    return [p.result() for p in paths]


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(alphas, weights) of the n-point Gauss-Legendre rule on [0, 1]: numpy's nodes and weights on [-1, 1]
    moved and halved, the rule captum's `method="gausslegendre"` integrates with."""
    nodes, weights = np.polynomial.legendre.leggauss(n)  # (n,), (n,)
    return 0.5 * (1 + nodes), 0.5 * weights


def _fixed(rows: _Rows, targets: list[int], n_steps: int) -> list[MethodOutput]:
    """Captum's Gauss-Legendre rule at n_steps (what `attribute` runs with n_steps), every text's nodes
    in shared batches; f(x) and f(b) from one batched forward without gradients."""
    alphas, weights = gauss_legendre(n_steps)
    n = len(rows.inps)
    _, dens = rows.gradients([(k, a) for k in range(n) for a in alphas], targets, n)
    ends = rows.values([(k, a) for k in range(n) for a in (1.0, 0.0)], targets)
    out = []
    for k in range(n):
        scores = weights @ np.stack(dens[k * n_steps:(k + 1) * n_steps])  # (seq,)
        f_x, f_b = float(ends[2 * k]), float(ends[2 * k + 1])
        out.append(MethodOutput(scores, f_x, f_b, float(scores.sum() - (f_x - f_b)), n_steps))
    return out


class _Rows:
    """Runs rows of many texts' paths through one Forward in padded batches, longest texts first."""

    def __init__(self, ck: Checkpoint, head: Head, quantity: str, inps: list[Inputs], batch_size: int | None,
                 progress: Progress | None):
        self.ck, self.inps, self.cap, self.progress = ck, inps, batch_size or 2**31, progress
        self.model = Forward(ck, head, None, quantity, None, inps[0].enc)
        self.pad_id = ck.tokenizer.pad_token_id if ck.tokenizer.pad_token_id is not None else 0
        self.done = 0.0  # progress reported so far (kept monotonic)

    def predict(self, which: list[int], targets: list[int | None]) -> None:
        """Set targets[k] to text k's predicted label (its largest logit), for each k in `which`."""
        if which:
            logits = self._run([(k, 1.0) for k in which], None, grad=False)
            for k, row in zip(which, logits):
                targets[k] = int(np.argmax(row))

    def values(self, jobs: list[Job], targets: list[int]) -> np.ndarray:  # (rows,) the quantity, no gradients
        logits = torch.from_numpy(np.stack(self._run(jobs, targets, grad=False)))
        picked = torch.tensor([targets[k] for k, _ in jobs])
        return quantity_of(logits, picked, quantity=self.model.quantity, ptype=self.model.ptype).double().numpy()

    def gradients(self, jobs: list[Job], targets: list[int], active: int) -> tuple[list[float], list[np.ndarray]]:
        """f and the integrand (seq_k,) at each job's point."""
        out = self._run(jobs, targets, grad=True, active=active)
        return [v for v, _ in out], [g for _, g in out]

    def _run(self, jobs: list[Job], targets: list[int] | None, grad: bool, active: int = 0) -> list:
        out: list = [None] * len(jobs)
        order = sorted(range(len(jobs)), key=lambda i: -len(self.inps[jobs[i][0]].ids))
        config, device = self.ck.model.config, self.ck.model.device
        i = 0
        while i < len(order):
            seq = len(self.inps[jobs[order[i]][0]].ids)  # the longest left: this batch's padded length
            size = min(self.cap, budget.batch_rows(config, seq, grad=grad, device=device))
            part = [jobs[j] for j in order[i:i + size]]
            got = halving_on_oom(lambda s: self._batches(part, targets, grad, s), size, device)
            for j, value in zip(order[i:i + size], got):
                out[j] = value
            i += size
            if grad and self.progress is not None:
                n = len(self.inps)
                self.done = max(self.done, (n - active + active * i / len(order) / 2) / n)
                self.progress(min(self.done, 1.0), f"{n - active}/{n}")
        return out

    def _batches(self, jobs: list[Job], targets: list[int] | None, grad: bool, size: int) -> list:
        out = []
        for chunk in budget.chunks(len(jobs), size):
            out += self._batch([jobs[i] for i in chunk], targets, grad)
        return out

    def _batch(self, jobs: list[Job], targets: list[int] | None, grad: bool) -> list:
        """One padded batch: (value, integrand (seq_k,)) per job with grad, else its logits (labels,)."""
        owners = [k for k, _ in jobs]
        lengths = [len(self.inps[k].ids) for k in owners]
        seq = max(lengths)
        self.model.feed(self._enc(owners, seq))
        b = torch.cat([_pad3(self.inps[k].b, seq) for k in owners])  # (rows, seq, hidden)
        d = torch.cat([_pad3(self.inps[k].x - self.inps[k].b, seq) for k in owners])
        if targets is not None:
            self.model.target = torch.tensor([targets[k] for k in owners], device=d.device)
        if not grad:
            a = torch.tensor([a for _, a in jobs], dtype=d.dtype, device=d.device).view(-1, 1, 1)
            with torch.no_grad():
                return list(self.model.logits(b + a * d).float().cpu().numpy())
        vals, dens = path_gradients(self.model, b, d=d, alphas=[a for _, a in jobs])
        return [(v, g[:n]) for v, g, n in zip(vals, dens, lengths)]

    def _enc(self, owners: list[int], seq: int) -> dict:
        """The texts' tokenizer tensors, each padded on the right to `seq` (rows, seq): masked, pad ids."""
        enc = {key: torch.cat([_pad2(self.inps[k].enc[key], seq, self.pad_id if key == "input_ids" else 0)
                               for k in owners]) for key in self.inps[owners[0]].enc.keys()}
        mask = torch.cat([_pad2(torch.ones_like(self.inps[k].enc["input_ids"]), seq, 0) for k in owners])
        enc["attention_mask"] = mask  # also where the tokenizer gives none: padding must be masked
        own = self.model.head.own
        if own is not None:  # an own head pools by its ids: its placeholder pad ids where padding is
            enc["input_ids"] = torch.where(mask.bool(), enc["input_ids"], own.placeholder_ids(mask))
        return enc


def _pad2(t: torch.Tensor, seq: int, fill: int) -> torch.Tensor:  # (1, n) -> (1, seq)
    return torch.nn.functional.pad(t, (0, seq - t.shape[1]), value=fill)


def _pad3(t: torch.Tensor, seq: int) -> torch.Tensor:  # (1, n, hidden) -> (1, seq, hidden), zeros after n
    return torch.nn.functional.pad(t, (0, 0, 0, seq - t.shape[1]))
