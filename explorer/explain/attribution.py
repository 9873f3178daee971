"""Token attributions through any head: which tokens drove this logit (or probability)?

Every method runs through one differentiable function built from the checkpoint's encoder
and the chosen head (which may differ from the checkpoint's own): word embeddings ->
encoder (via `inputs_embeds`) -> `run_head` -> the target's logit or probability. The model
is only read: gradients go to the input embeddings, never to parameters.

One baseline definition for every architecture: each text token's input embedding (the output of
`get_input_embeddings()`) is replaced by the pad token's (mask: the mask token's; zero: zeros), and
everything else goes in as for the input: special tokens, positions, segments (token_type_ids where
the model takes them), the attention mask, and the ids the head pools by. Special tokens therefore
get exactly zero from lig and occlusion. lig is integrated gradients on that path, from the baseline's
embeddings to the input's. With `n_steps` it is Captum's IntegratedGradients on those embeddings with its
Gauss-Legendre rule; without (the default) it is this module's own adaptive rule (IntegralPath: nested
Romberg/Simpson intervals halved where the path bends, until the completeness error is within the
tolerance). "ig" is accepted as another name for it and not offered as a method of its own: integrated
gradients on the same embeddings is the same integral, and on decoders (RoPE, no embeddings module) there
is no other input to integrate over. Saliency, InputXGradient and Occlusion are Captum's; the sampled
methods are in explorer/explain/sampled.py, many texts at once in explorer/explain/batched.py.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient, IntegratedGradients, Occlusion, Saliency
from scipy.integrate import romb

from explorer.explain import sampled
from explorer.explain.request import AttributionError, MethodOutput, Request
from explorer.model import problem
from explorer.model.analysis import encode, encoder_inputs, max_length, readable, segments, token_info
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head, head_at_precision, is_per_token, run_head
from explorer.model.kernel import attention_kernel
from explorer.model.problem import ProblemType
from explorer.model.readable import word_index
from explorer.model.tokens import pair_boundary
from explorer.results import JsonResult, rounded
from explorer.runtime import budget, precision
from explorer.runtime.device import halving_on_oom
from explorer.runtime.jobs import Progress

METHODS = ("lig", "saliency", "input_x_gradient", "occlusion", *sampled.METHODS)
ALIASES = {"ig": "lig"}  # accepted names for a method; results carry the method's own name
BASELINE_DEFINITION = ("each text token's input embedding (get_input_embeddings) replaced by the pad token's "
                       "(mask: the mask token's; zero: zeros); special tokens, positions, segments and the "
                       "attention mask as in the input")
INTEGRATED = ("lig",)
BASELINES = ("pad", "mask", "zero")
QUANTITIES = ("logit", "probability")
TOLERANCE = 0.01  # completeness: |Σ attributions − (f(x) − f(baseline))| ≤ 1% of |f(x) − f(baseline)|
# Automatic n_steps (see IntegralPath): the path starts as one interval of 2**ROMBERG_LEVEL + 1 equally spaced
# points, and halving an interval costs 2**ROMBERG_LEVEL new gradients.
ROMBERG_LEVEL = 2
TOKEN_TOLERANCE = 0.1  # the pair's per-token error estimate, as a share of Σ|scores| (pessimistic: see IntegralPath)
MAX_STEPS = 257  # gradients on the path before giving up and reporting the error (64 intervals)
OCCLUSION_WARN_TOKENS = 128



@dataclass(frozen=True, eq=False)
class Attribution(JsonResult):
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
    f_baseline: float | None  # the quantity at the baseline (lig)
    delta: float | None  # convergence delta: Σ scores − (f_x − f_baseline) (lig)
    n_steps: int | None  # lig: gradients computed on the path (every one, kept or not)
    window: int | None
    truncated_tokens: int
    max_length: int
    seconds: float
    segments: tuple[int, ...] = ()  # per token: 0 = text A, 1 = text B (see Analysis.segments)
    tolerance: float = TOLERANCE  # the completeness error asked for
    shown: tuple[str, ...] = ()  # per token: the form views show (see Analysis.shown)
    pieces: tuple[str, ...] = ()  # per token: its share of its word's decoded text (see Analysis.pieces)
    sampling: sampled.Sampling | None = None  # sampled methods: samples, seeds, the two runs' agreement
    target_token: int | None = None  # a token classifier: the token whose logit (or probability) is explained
    dtype: str = "float32"  # the precision the forwards ran in (explorer/runtime/precision.py)

    @property
    def error(self) -> float | None:
        """Relative completeness error |delta| / |f(x) − f(baseline)|."""
        if self.delta is None:
            return None
        return abs(self.delta) / max(abs(self.f_x - self.f_baseline), 1e-6)

    @property
    def converged(self) -> bool | None:
        """lig: whether the completeness error is within the tolerance (None for other methods). None for
        gradient_shap too: it samples its path instead of refining it, so it has nothing to converge and
        no completeness to promise; its error is information (sampled.completeness_gap), not a failure."""
        return None if self.error is None or self.sampling is not None else self.error <= self.tolerance

    def words(self) -> tuple[tuple[str, ...], np.ndarray]:
        return merge_words(self.tokens, self.word_ids, scores=self.scores, pieces=self.pieces, special=self.special)

    def to_dict(self) -> dict:
        """The attribution as JSON-safe values (what `analyze --attributions --json` prints)."""
        words, word_scores = self.words()
        return {"method": self.method, "target": self.target_label, "tokens": list(self.tokens),
                "scores": rounded(self.scores), "words": list(words), "word_scores": rounded(word_scores),
                "f_x": self.f_x, "f_baseline": self.f_baseline, "delta": self.delta, "error": self.error,
                "converged": self.converged, "n_steps": self.n_steps, "baseline": self.baseline,
                "baseline_definition": BASELINE_DEFINITION,
                "sampling": None if self.sampling is None else self.sampling.to_dict(),
                "target_token": self.target_token, "dtype": self.dtype}

    def _repr_html_(self) -> str:
        from explorer.text.highlight import highlight_html

        return highlight_html(self.shown, self.scores, title=f"{self.method}: {self.target_label}",
                              pair_at=pair_start(self))


def merge_words(tokens, word_ids, *, scores, pieces=(), special=None) -> tuple[tuple[str, ...], np.ndarray]:
    """Sum subword scores per word, words as readable.word_index groups them; each special token stays an
    entry of its own, in place. `special`: per token, is it a special token (None: the tokens of no word id,
    which is what a fast tokenizer gives its special tokens).

    pieces: each token's share of its word's text as the tokenizer decodes it (Analysis.pieces), which
    concatenate to the word on every tokenizer. Without them, the vocabulary strings with WordPiece's
    "##" and a leading "Ġ"/"▁" stripped: right on ASCII text only (byte-level tokens stay undecoded).
    """
    special = [w is None for w in word_ids] if special is None else special
    words: list[str] = []
    sums: list[float] = []
    index = word_index(word_ids, special)
    for k, (tok, i, s) in enumerate(zip(tokens, index, np.asarray(scores, dtype=np.float64))):
        if i is not None and k and index[k - 1] == i:
            words[-1] += pieces[k] if pieces else _piece(tok)
            sums[-1] += s
        else:
            words.append(pieces[k] if pieces else _strip_start(tok))
            sums.append(float(s))
    return tuple(words), np.asarray(sums)


def pair_start(a: Attribution, level: str = "token") -> int | None:
    """Index of text B's first token (or word, at level "word"); None for one text."""
    k = pair_boundary(a.segments)
    if k is None or level != "word":
        return k
    # [SEP] keeps words from spanning the two texts
    return len(merge_words(a.tokens[:k], a.word_ids[:k], scores=a.scores[:k], pieces=a.pieces[:k],
                           special=a.special[:k])[0])


def _piece(tok: str) -> str:
    return tok[2:] if tok.startswith("##") else tok.lstrip("Ġ▁")


def _strip_start(tok: str) -> str:
    return tok.lstrip("Ġ▁")


def baseline_ids(ck: Checkpoint, ids: list[int], *, special: list[bool], kind: str) -> list[int]:
    """Token ids of the pad or mask baseline: every text token replaced, specials kept."""
    tok = ck.tokenizer
    fill = tok.pad_token_id if kind == "pad" else tok.mask_token_id
    if fill is None:
        raise AttributionError("attribution_no_baseline_token", kind=kind)
    return [i if s else fill for i, s in zip(ids, special)]


def quantity_of(logits: torch.Tensor, target: int | torch.Tensor, *, quantity: str, ptype: str) -> torch.Tensor:
    """(batch, labels) -> (batch,): the target's logit, or its probability under the problem type.
    target: one label for every row, or (batch,) one per row (rows of several texts, attribute_many)."""
    if quantity == "logit" or ptype == ProblemType.REGRESSION:
        values = logits
    elif ptype == ProblemType.MULTI:
        values = torch.sigmoid(logits)
    else:
        values = torch.softmax(logits, dim=-1)
    return values[:, target] if isinstance(target, int) else values.gather(1, target.view(-1, 1))[:, 0]


class Ticks:
    """Progress by forward calls: `expect(calls, span, message)` before a stage, then each call moves the
    fraction through `span` (lo, hi) toward hi, reported as `progress(fraction, message)`."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.calls, self.total, self.span, self.message = 0, 1, (0.0, 1.0), ""

    def expect(self, calls: int, span: tuple[float, float], message: str) -> None:
        self.calls, self.total, self.span, self.message = 0, max(1, calls), span, message

    def tick(self) -> None:
        self.calls += 1
        if self.progress is not None:
            lo, hi = self.span
            self.progress(min(hi, lo + (hi - lo) * self.calls / self.total), self.message)


class Forward:
    """The differentiable path word embeddings -> encoder -> head -> quantity (of `target`; at `token` for a
    token classifier), a callable for Captum; each call ticks `ticks`."""

    def __init__(self, ck: Checkpoint, head: Head, target: int, quantity: str, progress: Progress | None,
                 enc: dict, token: int | None = None):
        self.ck, self.head, self.target, self.quantity, self.token = ck, head, target, quantity, token
        # A token classifier trains with cross-entropy on every token whatever config.problem_type says.
        self.ptype = problem.problem_type(ck.model.config) if token is None else ProblemType.SINGLE
        self.ticks = Ticks(progress)
        self.feed(enc)

    def feed(self, enc) -> None:
        """What the next calls' rows take besides the embeddings: enc's tensors (1 or rows, seq), the
        ones the encoder takes (mask, segments) and the ids the head pools by."""
        self.extra = {k: v for k, v in encoder_inputs(enc, self.ck).items() if k != "input_ids"}
        self.ids = enc["input_ids"]

    def logits(self, embeds: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch, labels), float32
        n = embeds.shape[0]
        extra = {k: v.expand(n, -1) for k, v in self.extra.items()}
        # The path's points are float32 (embed_ids); the model reads them in its own dtype, and its logits come back
        # in float32: Captum's and our sums over steps and hidden dimensions, and lig's completeness rule, are
        # float32 (or wider) arithmetic whatever precision the forwards ran in (explorer/runtime/precision.py).
        with attention_kernel(self.ck, "sdpa"):  # no attention weights read: the fast kernel
            hidden = self.ck.model.base_model(inputs_embeds=embeds.to(self.ck.model.dtype), **extra).last_hidden_state
        mask = extra.get("attention_mask", torch.ones(embeds.shape[:2], dtype=torch.long, device=embeds.device))
        logits = run_head(self.head, hidden, mask, input_ids=self.ids.expand(n, -1))[-1][1].float()
        return logits if self.token is None else logits[:, self.token]  # a token head's (batch, seq, labels)

    def __call__(self, word_embeds: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch,)
        logits = self.logits(word_embeds)
        self.ticks.tick()
        return quantity_of(logits, self.target, quantity=self.quantity, ptype=self.ptype)

    def value(self, embeds: torch.Tensor) -> np.ndarray:  # (batch, seq, hidden) -> (batch,)
        with torch.no_grad():
            return self(embeds).double().cpu().numpy()

    def predict(self, embeds: torch.Tensor, row: int = 0) -> np.ndarray:
        """Set the target to the predicted label of embeds[row]; returns the quantity for every row."""
        with torch.no_grad():
            logits = self.logits(embeds)
        self.target = int(logits[row].argmax())
        return quantity_of(logits, self.target, quantity=self.quantity, ptype=self.ptype).double().cpu().numpy()


def embed_ids(ck: Checkpoint, ids: list[int]) -> torch.Tensor:  # (1, seq, hidden) float32 (Forward.logits)
    with torch.no_grad():
        return ck.model.get_input_embeddings()(torch.tensor([ids], device=ck.model.device)).detach().float()


def attribute(
    ck: Checkpoint,
    head: Head,
    *, text: str,
    method: str = "lig",
    target: int | None = None,
    quantity: str = "logit",
    baseline: str = "pad",
    n_steps: int | None = None,
    window: int = 1,
    tolerance: float = TOLERANCE,
    progress: Progress | None = None,
    text_pair: str | None = None,
    n_samples: int | None = None,
    seed: int = sampled.SEED,
    target_token: int | None = None,
    dtype: str | torch.dtype | None = None,
) -> Attribution:
    """Attribute the target's quantity to the tokens of `text` (truncated to the model's maximum).

    target: label index, default the predicted one. n_steps (lig): None refines the path
    until the completeness error is ≤ `tolerance` (see IntegralPath). method "ig" is "lig" (see ALIASES).
    n_samples, seed: the sampled methods' (see explorer.explain.sampled; None: the default within the caps).
    target_token: with a per-token head (a token classifier), the position (special tokens counted) whose
    logit or probability is explained; required there, refused elsewhere.
    dtype: the forwards' precision (float32, bfloat16, float16; None: the model's own), on a cached cast copy
    (explorer/runtime/precision.py); scores are summed and lig's completeness is checked in float32 or wider.
    """
    method = checked_method(method, baseline, quantity=quantity, n_steps=n_steps)
    if dtype is not None:
        ck, head = head_at_precision(ck, head, dtype)
    start = time.perf_counter()
    check_target(ck, target)
    inp = prepare_inputs(ck, text, text_pair=text_pair, baseline=baseline)
    enc, x, b = inp.enc, inp.x, inp.b
    window = max(1, min(int(window), len(inp.ids)))
    check_target_token(head, target_token, n=len(inp.ids))
    model = Forward(ck, head, target, quantity, progress, enc, target_token)
    request = Request(method, quantity, baseline, tolerance, window if method == "occlusion" else None, target_token)
    if method in INTEGRATED:
        out = _integrated(model, x, b, n_steps, tolerance)
    else:
        if model.target is None:  # the predicted label: the largest logit
            model.predict(x)
        if method in sampled.METHODS:
            out = sampled.attribute_sampled(model, x, b=b, special=inp.special, word_ids=inp.word_ids, method=method,
                                            n_samples=n_samples, seed=seed)
        elif method == "occlusion":
            out = _occlusion(model, x, b, window)
        else:  # Captum's Saliency (|gradient|) or InputXGradient, summed over the hidden dimensions
            algo = Saliency(model) if method == "saliency" else InputXGradient(model)
            model.ticks.expect(1, (0.0, 1.0), method)
            x_req = x.clone().requires_grad_(True)
            attr = algo.attribute(x_req, abs=True) if method == "saliency" else algo.attribute(x_req)
            out = MethodOutput(attr[0].detach().float().sum(-1).double().cpu().numpy())
    return assemble(ck, inp, request=request, target=model.target, out=out, seconds=time.perf_counter() - start)


def checked_method(method: str, baseline: str, *, quantity: str, n_steps: int | None) -> str:
    """The method's own name (see ALIASES); raises AttributionError for a request no method takes."""
    method = ALIASES.get(method, method)
    if method not in METHODS:
        raise AttributionError("attribution_unknown_method", method=method, choices=", ".join(METHODS))
    if baseline not in BASELINES:
        raise AttributionError("attribution_unknown_baseline", baseline=baseline, choices=", ".join(BASELINES))
    if quantity not in QUANTITIES:
        raise AttributionError("attribution_unknown_quantity", quantity=quantity)
    if n_steps is not None and n_steps < 1:
        raise AttributionError("attribution_steps")
    return method


def check_target(ck: Checkpoint, target: int | None) -> None:
    if target is not None and not 0 <= target < len(ck.labels):
        raise AttributionError("attribution_target", target=target, n=len(ck.labels))


@dataclass(frozen=True, eq=False)
class Inputs:
    """One text's encoding, tokens and path ends: x the input's word embeddings, b the baseline's."""
    enc: dict  # the tokenizer's tensors, (1, seq) each
    dropped: int
    ids: list[int]
    special: list[bool]
    word_ids: tuple[int | None, ...]
    tokens: tuple[str, ...]
    segments: tuple[int, ...]
    x: torch.Tensor  # (1, seq, hidden)
    b: torch.Tensor  # (1, seq, hidden)


def prepare_inputs(ck: Checkpoint, text: str, *, text_pair: str | None, baseline: str) -> Inputs:
    enc, dropped = encode(ck, text, text_pair)
    ids, special, word_ids = token_info(ck, enc)
    x = embed_ids(ck, ids)
    b = torch.zeros_like(x) if baseline == "zero" else embed_ids(ck, baseline_ids(ck, ids, special=special,
                                                                                  kind=baseline))
    if baseline == "zero":  # keep the specials here too, so every baseline treats them alike
        keep = torch.tensor(special, device=x.device).view(1, -1, 1)
        b = torch.where(keep, x, b)
    return Inputs(enc, dropped, ids, special, word_ids, tuple(ck.tokenizer.convert_ids_to_tokens(ids)),
                   segments(enc), x, b)


def assemble(ck: Checkpoint, inp: Inputs, *, request: Request, target: int, out: MethodOutput,
             seconds: float) -> Attribution:
    """The public result: one text's tokens and how they read, the request, and what the method computed."""
    return Attribution(
        method=request.method, target=target, target_label=ck.labels[target], quantity=request.quantity,
        baseline=request.baseline, tokens=inp.tokens, token_ids=tuple(inp.ids), special=tuple(inp.special),
        word_ids=inp.word_ids, scores=np.asarray(out.scores, dtype=np.float64), f_x=out.f_x,
        f_baseline=out.f_baseline, delta=out.delta, n_steps=out.n_steps, window=request.window,
        truncated_tokens=inp.dropped, max_length=max_length(ck), seconds=seconds, segments=inp.segments,
        tolerance=request.tolerance, sampling=out.sampling, target_token=request.target_token,
        dtype=precision.dtype_name(precision.model_dtype(ck.model)),
        **readable(ck, inp.tokens, inp.special, inp.word_ids, inp.segments),
    )


def check_target_token(head: Head, token: int | None, *, n: int) -> None:
    """A per-token head needs the token to explain; a head with one row per text takes none."""
    if is_per_token(head) and token is None:
        raise AttributionError("attribution_needs_token", n=n)
    if not is_per_token(head) and token is not None:
        raise AttributionError("attribution_token_for_text_head")
    if token is not None and not 0 <= token < n:
        raise AttributionError("attribution_token_range", token=token, n=n, last=n - 1)


def _integrated(model: Forward, x, b, n_steps, tolerance) -> MethodOutput:
    """Integrated gradients from b to x (1, seq, hidden): scores (seq,), f(x), f(b), delta and steps.

    With n_steps this is one Captum call (Gauss-Legendre), as Captum's own defaults do. Otherwise
    the path is integrated adaptively with nested dyadic rules (see IntegralPath): steps go where the path
    bends, and every gradient already paid for is kept when an interval is refined.
    """
    batch = budget.batch_rows(model.ck.model.config, x.shape[1], grad=True, device=x.device)  # one batch (batch_mb)
    if n_steps:
        if model.target is None:
            model.predict(x)
        f_x, f_b = model.value(torch.cat([x, b]))
        model.ticks.expect(math.ceil(n_steps / batch), (0.0, 1.0), f"{n_steps} steps")
        attr = halving_on_oom(lambda size: IntegratedGradients(model).attribute(
            x, baselines=b, n_steps=n_steps, method="gausslegendre", internal_batch_size=size), batch, x.device)
        scores = attr[0].detach().float().sum(-1).double().cpu().numpy()
        return MethodOutput(scores, float(f_x), float(f_b), float(scores.sum() - (f_x - f_b)), n_steps)
    return IntegralPath(model, x, b, batch).integrate(tolerance)


def path_gradients(model: Forward, b: torch.Tensor, *, d: torch.Tensor,
                   alphas: list[float]) -> tuple[list[float], np.ndarray]:
    """f and the per-token integrand (grad · d) at b + alpha d for each alpha, in one forward/backward.

    b, d: (1, seq, hidden) for one text, or (rows, seq, hidden), one row per alpha (attribute_many).
    Returns (rows,) values and (rows, seq) integrand.
    """
    a = torch.tensor(alphas, dtype=d.dtype, device=d.device).view(-1, 1, 1)
    points = (b + a * d).requires_grad_(True)  # (rows, seq, hidden)
    out = model(points)
    grad, = torch.autograd.grad(out.sum(), points)  # rows are independent: the sum's gradient is each row's
    # The product and its sum over the hidden dimensions in float32 (the rule reads this sum): a bfloat16 sum of
    # 384 terms loses the 1% it is checked against.
    return out.detach().double().cpu().tolist(), (grad.float() * d.float()).sum(-1).detach().double().cpu().numpy()


@dataclass(frozen=True, eq=False)
class Ruled:
    """One interval of the path, ruled: `value` (seq,) its Romberg integral per token, `gap` its completeness gap
    Σ value − (f(end) − f(start)), `pair` (seq,) Romberg minus Simpson on the same points (the error estimate)."""
    value: np.ndarray
    gap: float
    pair: np.ndarray


class IntegralPath:
    """Adaptive quadrature of the path integrand with nested rules that reuse every evaluated point.

    Each interval holds 2**ROMBERG_LEVEL + 1 equally spaced points; its value is Romberg's
    extrapolation over them (scipy.integrate.romb: Boole's rule for 5 points) and its error estimate
    (the pair) is the difference to the same rule on every other point (Simpson). Halving an interval
    reuses 3 of each half's 5 points, so a refinement costs 4 gradients, not a fresh rule (why not
    Gauss-Kronrod: its nodes do not nest across a halving, so a split throws away 15 gradients).
    Every gradient computed is a node of some interval of the final partition, so none is wasted.
    The forward pass of each gradient also gives f at that point, so the completeness gap of every
    interval, Σ its scores − (f(end) − f(start)), is exact and free: it catches what both rules of
    the pair may miss (a bend between their points, as RMSNorm makes near a zero pad embedding).

    Done when the completeness error is ≤ tolerance and the pair's estimate of the per-token error
    (Σ over intervals of ‖Romberg − Simpson‖₁) is ≤ TOKEN_TOLERANCE of Σ|scores|: a sum can be
    complete while its tokens are not. Otherwise the intervals with the largest |gap| (or, once
    complete, the largest ‖pair‖₁) are halved, until MAX_STEPS gradients; then the error is reported
    as it is (converged: false).

    The rule is driven in rounds (needs -> gradients -> record -> advance), so attribute_many can
    compute the gradients of many texts' paths in the same batches; integrate drives one path alone.
    """

    def __init__(self, model: Forward, x, b, batch: int):
        self.model, self.x, self.b, self.batch = model, x, b, batch
        self.f: dict[float, float] = {}  # alpha -> f(b + alpha (x − b))
        self.g: dict[float, np.ndarray] = {}  # alpha -> (seq,) per-token integrand
        self.parts: dict[tuple[float, float], Ruled] = {}  # each interval of the partition, once ruled
        self.todo: list[tuple[float, float]] = [(0.0, 1.0)]  # intervals to rule once their points are in
        self.scores: np.ndarray | None = None  # (seq,) once advance has ruled

    def needs(self) -> list[float]:
        """The alphas the intervals in todo need and that have no gradient yet."""
        return sorted({a for iv in self.todo for a in self.nodes(iv)} - set(self.g))

    def record(self, alphas: list[float], vals, dens) -> None:
        self.f.update(zip(alphas, vals))
        self.g.update(zip(alphas, dens))

    def evaluate(self, alphas: list[float]) -> None:
        """Gradients (and f) at the new alphas, in batches within the memory budget."""
        new = sorted(set(alphas) - set(self.g))
        if not new:
            return
        if self.model.target is None:
            self.model.predict(self.x)
        done = len(self.g)
        self.model.ticks.expect(math.ceil(len(new) / self.batch),
                          (done / MAX_STEPS, min(1.0, (done + len(new)) / MAX_STEPS)), f"{done + len(new)} steps")
        d = self.x - self.b
        for rows in budget.chunks(len(new), self.batch):
            part = [new[i] for i in rows]
            self.record(part, *halving_on_oom(lambda size: self._grads(part, d, size), self.batch, self.x.device))

    def _grads(self, alphas: list[float], d, size: int):  # -> (n,) values, (n, seq) integrand
        vals, dens = [], []
        for rows in budget.chunks(len(alphas), size):
            v, g = path_gradients(self.model, self.b, d=d, alphas=[alphas[i] for i in rows])
            vals += v
            dens.extend(g)
        return vals, dens

    def nodes(self, iv: tuple[float, float]) -> list[float]:
        k = 2 ** ROMBERG_LEVEL
        return [iv[0] + (iv[1] - iv[0]) * i / k for i in range(k)] + [iv[1]]

    def rule(self, iv: tuple[float, float]) -> None:
        y = np.stack([self.g[a] for a in self.nodes(iv)])  # (points, seq)
        h = (iv[1] - iv[0]) / 2 ** ROMBERG_LEVEL
        value, low = romb(y, h, axis=0), romb(y[::2], 2 * h, axis=0)
        self.parts[iv] = Ruled(value, float(value.sum()) - (self.f[iv[1]] - self.f[iv[0]]), value - low)

    def advance(self, tolerance: float) -> bool:
        """Rule the intervals in todo (their points all in); True when done, else todo holds the halves."""
        for iv in self.todo:
            self.rule(iv)
        self.todo = []
        self.scores = scores = np.sum([p.value for p in self.parts.values()], axis=0)
        gap = sum(p.gap for p in self.parts.values())
        pair = sum(float(np.abs(p.pair).sum()) for p in self.parts.values())
        diff = self.f[1.0] - self.f[0.0]
        complete = abs(gap) <= tolerance * max(abs(diff), 1e-6)
        if complete and pair <= TOKEN_TOLERANCE * np.abs(scores).sum():
            return True
        # Halve where the failing criterion is worst: the gap while incomplete, then the pair; every
        # interval within half the worst one goes in the same batch of gradients.
        indicator = {iv: float(np.abs(p.pair).sum()) if complete else abs(p.gap) for iv, p in self.parts.items()}
        worst = max(indicator.values())
        split = sorted((iv for iv, e in indicator.items() if e >= worst / 2), key=indicator.get, reverse=True)
        split = split[:(MAX_STEPS - len(self.g)) // 2 ** ROMBERG_LEVEL]  # a halving costs 2**level gradients
        for iv in split:
            del self.parts[iv]
            mid = (iv[0] + iv[1]) / 2
            self.todo += [(iv[0], mid), (mid, iv[1])]
        return not split

    def result(self) -> MethodOutput:
        """Scores (seq,), f(x), f(b), delta, and steps: every gradient computed."""
        f_x, f_b = self.f[1.0], self.f[0.0]
        return MethodOutput(self.scores, f_x, f_b, float(self.scores.sum() - (f_x - f_b)), len(self.g))

    def integrate(self, tolerance: float) -> MethodOutput:
        while True:
            self.evaluate(self.needs())
            if self.advance(tolerance):
                return self.result()


def _occlusion(model: Forward, x, b, window: int) -> MethodOutput:
    seq = x.shape[1]
    per_eval = budget.batch_rows(model.ck.model.config, seq, device=x.device)  # within HEAD_EXPLORER_BATCH_MB
    windows = seq - window + 1
    model.ticks.expect(math.ceil(windows / per_eval) + 1, (0.0, 1.0), f"window={window}")
    attr = halving_on_oom(lambda size: Occlusion(model).attribute(
        x, sliding_window_shapes=(window, x.shape[2]), strides=(1, x.shape[2]), baselines=b,
        perturbations_per_eval=size,
    ), per_eval, x.device)
    # Occlusion spreads each window's drop over every element it covers: one hidden column suffices.
    return MethodOutput(attr[0, :, 0].detach().double().cpu().numpy(), float(model.value(x)[0]))


def occlusion_is_costly(n_tokens: int, window: int = 1) -> bool:
    """One forward pass per window position: warn above OCCLUSION_WARN_TOKENS."""
    return n_tokens - window + 1 > OCCLUSION_WARN_TOKENS


def table(a: Attribution, level: str = "token") -> list[dict]:
    """Rows for a CSV download: position, token (or word), score. Token rows give the vocabulary
    string and, as "text", the form the page shows (byte-level tokens decoded)."""
    if level == "word":
        words, scores = a.words()
        return [{"position": i, "word": w, "score": float(s)} for i, (w, s) in enumerate(zip(words, scores))]
    return [{"position": i, "token": tok, "text": shown, "special": sp, "score": float(s)}
            for i, (tok, shown, sp, s) in enumerate(zip(a.tokens, a.shown, a.special, a.scores))]
