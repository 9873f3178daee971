"""Token attributions through any head: which tokens drove this logit (or probability)?

Every method runs through one differentiable function built from the checkpoint's encoder
and the chosen head (which may differ from the checkpoint's own): word embeddings ->
encoder (via `inputs_embeds`) -> `run_head` -> the target's logit or probability. The model
is only read: gradients go to the input embeddings, never to parameters.

Baselines replace the text tokens and keep the special tokens ([CLS], [SEP], <s>, ...), so
special tokens get exactly zero from lig/ig and occlusion.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients, LayerIntegratedGradients, Occlusion, Saliency

from . import probabilities
from .analysis import encode, max_length
from .checkpoints import Checkpoint
from .heads import Head, run_head

METHODS = ("lig", "ig", "saliency", "input_x_gradient", "occlusion")
INTEGRATED = ("lig", "ig")
BASELINES = ("pad", "mask", "zero")
QUANTITIES = ("logit", "probability")
TOLERANCE = 0.01  # completeness: |Σ attributions − (f(x) − f(baseline))| ≤ 1% of |f(x) − f(baseline)|
# Gauss-Legendre step counts tried in turn; most short texts pass at the first.
STEP_SCHEDULE = (16, 32, 64, 128, 256)
TOKENS_PER_BATCH = 2048  # bounds memory for long texts: internal batch = this // seq
OCCLUSION_WARN_TOKENS = 128

Progress = Callable[[float, str], None]  # (fraction done, message); may raise to cancel


class AttributionError(ValueError):
    """Bad attribution request; the message is one line, meant for the user."""


@dataclass(frozen=True, eq=False)
class Attribution:
    method: str
    target: int
    target_label: str
    quantity: str  # "logit" or "probability" (softmax/sigmoid as the problem type says)
    baseline: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    special: tuple[bool, ...]
    word_ids: tuple[int | None, ...]
    scores: np.ndarray  # (seq,) one score per token, summed over the hidden dimensions
    f_x: float | None  # the quantity at the input
    f_baseline: float | None  # the quantity at the baseline (lig/ig)
    delta: float | None  # convergence delta: Σ scores − (f_x − f_baseline) (lig/ig)
    n_steps: int | None
    window: int | None
    truncated_tokens: int
    max_length: int
    seconds: float

    @property
    def error(self) -> float | None:
        """Relative completeness error |delta| / |f(x) − f(baseline)|."""
        if self.delta is None:
            return None
        return abs(self.delta) / max(abs(self.f_x - self.f_baseline), 1e-6)

    def words(self) -> tuple[tuple[str, ...], np.ndarray]:
        return merge_words(self.tokens, self.word_ids, self.scores)


def merge_words(tokens, word_ids, scores) -> tuple[tuple[str, ...], np.ndarray]:
    """Sum subword scores per word; special tokens (word id None) stay on their own."""
    words: list[str] = []
    sums: list[float] = []
    last = object()
    for tok, wid, s in zip(tokens, word_ids, np.asarray(scores, dtype=np.float64)):
        if wid is not None and wid == last:
            words[-1] += _piece(tok)
            sums[-1] += s
        else:
            words.append(_strip_start(tok))
            sums.append(float(s))
        last = wid
    return tuple(words), np.asarray(sums)


def _piece(tok: str) -> str:
    return tok[2:] if tok.startswith("##") else tok.lstrip("Ġ▁")


def _strip_start(tok: str) -> str:
    return tok.lstrip("Ġ▁")


def baseline_ids(ck: Checkpoint, ids: list[int], special: list[bool], kind: str) -> list[int]:
    """Token ids of the pad or mask baseline: every text token replaced, specials kept."""
    tok = ck.tokenizer
    fill = tok.pad_token_id if kind == "pad" else tok.mask_token_id
    if fill is None:
        raise AttributionError(f"this tokenizer has no {kind} token; choose another baseline")
    return [i if s else fill for i, s in zip(ids, special)]


def quantity_of(logits: torch.Tensor, target: int, quantity: str, ptype: str) -> torch.Tensor:
    """(batch, labels) -> (batch,): the target's logit, or its probability under the problem type."""
    if quantity == "logit" or ptype == "regression":
        return logits[:, target]
    if ptype == "multi_label_classification":
        return torch.sigmoid(logits[:, target])
    return torch.softmax(logits, dim=-1)[:, target]


class _Model:
    """The differentiable path word embeddings -> encoder -> head -> quantity, plus a tick counter."""

    def __init__(self, ck: Checkpoint, head: Head, target: int, quantity: str, progress: Progress | None):
        self.ck, self.head, self.target, self.quantity = ck, head, target, quantity
        self.ptype = probabilities.problem_type(ck.model.config)
        self.progress = progress
        self.calls, self.total, self.span, self.message = 0, 1, (0.0, 1.0), ""

    def logits(self, word_embeds: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch, labels)
        mask = torch.ones(word_embeds.shape[:2], dtype=torch.long)
        hidden = self.ck.model.base_model(inputs_embeds=word_embeds, attention_mask=mask).last_hidden_state
        return run_head(self.head, hidden, mask)[-1][1]

    def __call__(self, word_embeds: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch,)
        logits = self.logits(word_embeds)
        self.calls += 1
        if self.progress is not None:
            lo, hi = self.span
            self.progress(min(hi, lo + (hi - lo) * self.calls / self.total), self.message)
        return quantity_of(logits, self.target, self.quantity, self.ptype)

    def expect(self, calls: int, span: tuple[float, float], message: str) -> None:
        self.calls, self.total, self.span, self.message = 0, max(1, calls), span, message

    def value(self, word_embeds: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            return self(word_embeds).double().numpy()


def _embed(ck: Checkpoint, ids: list[int]) -> torch.Tensor:  # (1, seq, hidden)
    with torch.no_grad():
        return ck.model.get_input_embeddings()(torch.tensor([ids])).detach()


def attribute(
    ck: Checkpoint,
    head: Head,
    text: str,
    method: str = "lig",
    target: int | None = None,
    quantity: str = "logit",
    baseline: str = "pad",
    n_steps: int | None = None,
    window: int = 1,
    tolerance: float = TOLERANCE,
    progress: Progress | None = None,
) -> Attribution:
    """Attribute the target's quantity to the tokens of `text` (truncated to the model's maximum).

    target: label index, default the predicted one. n_steps (lig/ig): None picks the fewest
    Gauss-Legendre steps from STEP_SCHEDULE whose completeness error is ≤ `tolerance`.
    """
    if method not in METHODS:
        raise AttributionError(f"unknown method '{method}'; choose one of: {', '.join(METHODS)}")
    if baseline not in BASELINES:
        raise AttributionError(f"unknown baseline '{baseline}'; choose one of: {', '.join(BASELINES)}")
    if quantity not in QUANTITIES:
        raise AttributionError(f"unknown quantity '{quantity}'; choose logit or probability")
    if n_steps is not None and n_steps < 1:
        raise AttributionError("n_steps must be at least 1")
    start = time.perf_counter()
    enc, dropped = encode(ck, text)
    ids = enc["input_ids"][0].tolist()
    special_ids = set(ck.tokenizer.all_special_ids)
    special = [i in special_ids for i in ids]
    try:
        word_ids = tuple(enc.word_ids(0))
    except (ValueError, AttributeError):  # slow tokenizers have no word ids
        word_ids = tuple(None if s else k for k, s in enumerate(special))
    window = max(1, min(int(window), len(ids)))
    x = _embed(ck, ids)
    b = torch.zeros_like(x) if baseline == "zero" else _embed(ck, baseline_ids(ck, ids, special, baseline))
    if baseline == "zero":  # keep the specials here too, so every baseline treats them alike
        keep = torch.tensor(special).view(1, -1, 1)
        b = torch.where(keep, x, b)
    labels = ck.labels
    if target is None:  # the predicted label: the largest logit
        target = int(_Model(ck, head, 0, "logit", None).logits(x)[0].argmax())
    if not 0 <= target < len(labels):
        raise AttributionError(f"target {target} is out of range: the head has {len(labels)} labels")
    model = _Model(ck, head, target, quantity, progress)
    f_x = f_b = delta = steps = None
    if method in INTEGRATED:
        scores, f_x, f_b, delta, steps = _integrated(model, method, x, b, n_steps, tolerance)
    elif method == "occlusion":
        scores, f_x = _occlusion(model, x, b, window)
    else:
        algo = Saliency(model) if method == "saliency" else InputXGradient(model)
        model.expect(1, (0.0, 1.0), method)
        x_req = x.clone().requires_grad_(True)
        attr = algo.attribute(x_req, abs=True) if method == "saliency" else algo.attribute(x_req)
        scores = attr[0].sum(-1).detach().double().numpy()
    return Attribution(
        method=method, target=target, target_label=labels[target], quantity=quantity, baseline=baseline,
        tokens=tuple(ck.tokenizer.convert_ids_to_tokens(ids)), token_ids=tuple(ids), special=tuple(special),
        word_ids=word_ids, scores=np.asarray(scores, dtype=np.float64), f_x=f_x, f_baseline=f_b, delta=delta,
        n_steps=steps, window=window if method == "occlusion" else None, truncated_tokens=dropped,
        max_length=max_length(ck), seconds=time.perf_counter() - start,
    )


def _integrated(model: _Model, method: str, x, b, n_steps, tolerance):
    """Run lig or ig, doubling Gauss-Legendre steps until the completeness error is ≤ tolerance."""
    if method == "lig":
        emb = model.ck.model.base_model.embeddings
        # The embeddings' final LayerNorm output is the embeddings' output (dropout is off in eval);
        # hooking it works for DistilBERT too, whose embeddings module gets input_ids=None first.
        algo = LayerIntegratedGradients(model, getattr(emb, "LayerNorm", emb))
    else:
        algo = IntegratedGradients(model)
    f_x, f_b = (float(v) for v in model.value(torch.cat([x, b])))
    diff = f_x - f_b
    schedule = (n_steps,) if n_steps else STEP_SCHEDULE
    batch = max(1, TOKENS_PER_BATCH // x.shape[1])
    for k, n in enumerate(schedule):
        span = (k / len(schedule), (k + 1) / len(schedule))
        model.expect(math.ceil(n / batch) + (2 if method == "lig" else 0), span, f"n_steps={n}")
        attr = algo.attribute(x, baselines=b, n_steps=n, method="gausslegendre", internal_batch_size=batch)
        scores = attr[0].sum(-1).detach().double().numpy()
        delta = float(scores.sum() - diff)
        if abs(delta) <= tolerance * max(abs(diff), 1e-6):
            break
    return scores, f_x, f_b, delta, n


def _occlusion(model: _Model, x, b, window: int):
    seq = x.shape[1]
    per_eval = max(1, TOKENS_PER_BATCH // seq)
    windows = seq - window + 1
    model.expect(math.ceil(windows / per_eval) + 1, (0.0, 1.0), f"window={window}")
    attr = Occlusion(model).attribute(
        x, sliding_window_shapes=(window, x.shape[2]), strides=(1, x.shape[2]), baselines=b,
        perturbations_per_eval=per_eval,
    )
    # Occlusion spreads each window's drop over every element it covers: one hidden column suffices.
    return attr[0, :, 0].detach().double().numpy(), float(model.value(x)[0])


def occlusion_is_costly(n_tokens: int, window: int = 1) -> bool:
    """One forward pass per window position: warn above OCCLUSION_WARN_TOKENS."""
    return n_tokens - window + 1 > OCCLUSION_WARN_TOKENS


def table(a: Attribution, level: str = "token") -> list[dict]:
    """Rows for a CSV download: position, token (or word), score."""
    if level == "word":
        words, scores = a.words()
        return [{"position": i, "word": w, "score": float(s)} for i, (w, s) in enumerate(zip(words, scores))]
    return [{"position": i, "token": tok, "special": sp, "score": float(s)}
            for i, (tok, sp, s) in enumerate(zip(a.tokens, a.special, a.scores))]
