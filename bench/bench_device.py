"""The device the user has: our analyses, attributions and fine-tunes against the plain ways of doing the same on
the same device (cuda, then mps, then cpu, as device="auto" picks), measured side by side in the same run.

On the embedded sentiment model (MiniLM) and on a BERT-base-sized classifier (110M parameters, weights drawn
from a BertConfig: timings only, its numbers mean nothing):
- analyze against one forward with attentions, at 16, 128 and 512 tokens;
- lig to a completeness error ≤ 1% against Captum's LayerIntegratedGradients n=50 in one batch of 50, at 64, 256
  and 512 tokens;
- 200 demo tweets: attribute_many against Captum batched (8 texts a call, 64 rows a forward) and against our own
  text-by-text loop;
- saliency against Captum's Saliency on the model's own forward (256 tokens);
- a full fine-tune, 1 epoch on 300 short texts, against a plain transformers Trainer;
- on MiniLM also the older rows (analyze, lig 16 steps and the audit's feature pass against plain forwards).
Work is synchronised before every clock read: CUDA and MPS calls return before their kernels finish.

`run(quick=True)` (or HEAD_EXPLORER_BENCH_QUICK=1; `python -m bench device --quick`) runs every row at small
sizes, with a 2-layer BERT in place of BERT-base (and of MiniLM past the first rows), so the code is checked on a
CPU in seconds (tests/test_bench_device.py); its figures mean nothing. bench/device_run.sh runs the full one on a
GPU machine.
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from bench.bench_attribution import captum_saliency
from bench.bench_attribution_scale import _captum
from bench.bench_finetune import _data, _trainer
from bench.timing import interleaved, row, text_of_tokens
from explorer.data.dataset import demo_frame
from explorer.explain.attribution import attribute
from explorer.explain.batched import attribute_many
from explorer.model.analysis import analyze, encoder_inputs
from explorer.model.checkpoints import SENTIMENT_LABELS, embedded_encoder_dir, load_checkpoint
from explorer.model.features import encoder_features
from explorer.model.heads import build_head
from explorer.model.kernel import attention_kernel
from explorer.runtime import device as dev
from explorer.train.finetune import Settings, finetune, split

TEXT = "The plot was thin, but the actors carried it with warmth and surprising wit."
ROWS = [f"{TEXT} Review number {i}, {'and more words ' * (i % 5)}" for i in range(64)]
LIG_STEPS = 16  # fixed, so the ratio counts steps, not the adaptive refinement
QUICK_ENV = "HEAD_EXPLORER_BENCH_QUICK"
TIMINGS_ONLY = "timings only"


@dataclass(frozen=True)
class Sizes:
    tokens: tuple[int, ...]  # analyze vs a forward with attentions
    lig_tokens: tuple[int, ...]  # lig vs Captum LIG n=50
    tweets: int
    saliency_tokens: int
    finetune_texts: int
    rounds: int
    base: BertConfig  # the BERT-base-sized classifier (quick: a 2-layer stand-in)
    feature_rows: int


FULL = Sizes((16, 128, 512), (64, 256, 512), 200, 256, 300, 5, BertConfig(), len(ROWS))
QUICK = Sizes((16,), (16,), 2, 16, 24, 1, BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                     intermediate_size=64), 8)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def _synced(device: torch.device, fn):
    def call():
        out = fn()
        _sync(device)
        return out
    return call


def _once(device: torch.device, fn) -> tuple[float, object]:
    """(seconds, result) of one synchronised call: for work too long to repeat (a fine-tune, 200 texts)."""
    _sync(device)
    start = time.perf_counter()
    out = fn()
    _sync(device)
    return time.perf_counter() - start, out


def _drawn_base(root: Path, config: BertConfig, device: torch.device):
    """A BertForSequenceClassification with weights drawn from `config` (seeded), saved with MiniLM's tokenizer
    (the same 30,522-piece vocabulary) under `root`, which joins the allowed roots, and loaded on `device`."""
    cfg = BertConfig(**{**config.to_dict(), "num_labels": len(SENTIMENT_LABELS),
                        "id2label": dict(enumerate(SENTIMENT_LABELS)),
                        "label2id": {n: i for i, n in enumerate(SENTIMENT_LABELS)}})
    torch.manual_seed(0)
    folder = root / "bert-base-drawn"
    BertForSequenceClassification(cfg).save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(embedded_encoder_dir())).save_pretrained(folder)
    os.environ["HEAD_EXPLORER_ROOTS"] = os.pathsep.join(
        [str(root), *os.environ.get("HEAD_EXPLORER_ROOTS", "").split(os.pathsep)]).rstrip(os.pathsep)
    return load_checkpoint(str(folder), device=device)


def _target(ok: bool, timed: bool) -> bool:
    return ok if timed else True


def analyze_rows(ck, head, sizes: Sizes, where: str, timed: bool) -> list[dict]:
    out = []
    for n in sizes.tokens:
        text = text_of_tokens(ck.tokenizer, n, TEXT)
        enc = {k: v.to(ck.device) for k, v in encoder_inputs(ck.tokenizer(text, return_tensors="pt"), ck).items()}

        def forward():  # what any caller pays for the prediction and the attention maps
            with torch.inference_mode(), attention_kernel(ck, "eager"):
                ck.model(**enc, output_attentions=True)

        base, ours = interleaved([_synced(ck.device, forward), _synced(ck.device, lambda: analyze(ck, head, text))],
                                 rounds=sizes.rounds)
        out.append(row(f"{ck.name}: analyze vs one forward with attentions, {n} tokens ({where})", ours, base,
                       "≤ 3×" if timed else TIMINGS_ONLY, _target(ours <= 3 * base, timed)))
    return out


def lig_rows(ck, head, sizes: Sizes, where: str, timed: bool) -> list[dict]:
    out = []
    for n in sizes.lig_tokens:
        text = text_of_tokens(ck.tokenizer, n, TEXT)
        first = attribute(ck, head, text=text, method="lig")
        target = first.target
        captum_one = _synced(ck.device, lambda: _captum(ck, [text], [target], per_call=1, rows=50))
        ours_s, captum_s = interleaved([_synced(ck.device,
                                                lambda: attribute(ck, head, text=text, method="lig", target=target)),
                                        captum_one], rounds=max(1, sizes.rounds // 2))
        error = float(_captum(ck, [text], [target], per_call=1, rows=50)[0]) / max(
            abs(first.f_x - first.f_baseline), 1e-6)
        out.append(row(f"{ck.name}: lig to error≤1%, {n} tokens ({first.n_steps} steps, error {first.error:.2%}) vs "
                       f"Captum LIG n=50 in one batch (error {error:.2%}) ({where})", ours_s, captum_s,
                       "≥ 1.5× faster" if timed else TIMINGS_ONLY,
                       _target(captum_s / ours_s >= 1.5 and bool(first.converged), timed)))
    return out


def tweet_rows(ck, head, sizes: Sizes, where: str, timed: bool) -> list[dict]:
    texts = sorted(demo_frame(per_class=-(-sizes.tweets // 3), seed=0)["text"][:sizes.tweets], key=len)
    many_s, many = _once(ck.device, lambda: attribute_many(ck, head, texts=texts))
    targets = [r.target for r in many]
    loop_s, loop = _once(ck.device, lambda: [attribute(ck, head, text=t, target=k) for t, k in zip(texts, targets)])
    captum_s, deltas = _once(ck.device, lambda: _captum(ck, texts, targets))
    errors = deltas / np.maximum(np.abs([r.f_x - r.f_baseline for r in many]), 1e-6)
    converged = all(r.converged for r in many)
    same = max(float(np.abs(a.scores - b.scores).max()) for a, b in zip(many, loop))
    median = int(np.median([len(r.tokens) for r in many]))
    return [
        row(f"{ck.name}: {len(texts)} tweets (median {median} tokens) attribute_many, "
            f"{sum(r.converged for r in many)}/{len(many)} ≤1%, vs Captum batched n=50 "
            f"({np.mean(errors <= 0.01):.0%} ≤1%) ({where})", many_s, captum_s,
            "≥ 2× faster" if timed else TIMINGS_ONLY, _target(converged and captum_s / many_s >= 2, timed)),
        row(f"{ck.name}: {len(texts)} tweets attribute_many vs our text-by-text loop (max score difference "
            f"{same:.1e}) ({where})", many_s, loop_s, "≥ 1.5× faster" if timed else TIMINGS_ONLY,
            _target(converged and loop_s / many_s >= 1.5, timed)),
    ]


def saliency_row(ck, head, sizes: Sizes, where: str, timed: bool) -> dict:
    text = text_of_tokens(ck.tokenizer, sizes.saliency_tokens, TEXT)
    target = attribute(ck, head, text=text, method="saliency").target
    agree = bool(np.allclose(attribute(ck, head, text=text, method="saliency", target=target).scores,
                             captum_saliency(ck, text, target), rtol=1e-3, atol=1e-5))
    ours, captum = interleaved([_synced(ck.device,
                                        lambda: attribute(ck, head, text=text, method="saliency", target=target)),
                                _synced(ck.device, lambda: captum_saliency(ck, text, target))], rounds=sizes.rounds)
    return row(f"{ck.name}: saliency, {sizes.saliency_tokens} tokens, vs Captum Saliency (sdpa), same scores: "
               f"{agree} ({where})", ours, captum, "≤ 1.0× Captum" if timed else TIMINGS_ONLY,
               agree and _target(ours <= captum, timed))


def finetune_row(ck, sizes: Sizes, where: str, timed: bool) -> dict:
    data = _data(sizes.finetune_texts)
    s = Settings(mode="full", epochs=1, learning_rate=5e-5, batch_size=16, max_length=64).resolved()
    plain_s = _trainer(ck, data, s, head_only=False)[0]  # synchronised at its end
    ours_s, _ = _once(ck.device, lambda: finetune(ck, data, settings=s))
    n = len(split(data, s.val_fraction, seed=s.seed)[0])
    return row(f"{ck.name}: full fine-tune, 1 epoch, {n} texts, vs a plain Trainer (texts/s) ({where})",
               n / ours_s, n / plain_s, "ratio ≥ 0.9" if timed else TIMINGS_ONLY,
               _target(ours_s <= plain_s / 0.9, timed), unit="t/s")


def plain_rows(ck, head, sizes: Sizes, where: str) -> list[dict]:
    """The first rows of this bench: analyze, lig at 16 steps and the audit's feature pass, each against plain
    forwards of the same inputs."""
    device = ck.device
    rows = ROWS[:sizes.feature_rows]
    one = {k: v.to(device) for k, v in encoder_inputs(ck.tokenizer(TEXT, return_tensors="pt"), ck).items()}
    batch = {k: v.to(device) for k, v in encoder_inputs(
        ck.tokenizer(rows, truncation=True, max_length=128, padding=True, return_tensors="pt"), ck).items()}

    def forward():
        with torch.inference_mode():
            ck.model(**one)

    def forward_rows():  # the rows' plain forward, one padded batch (the feature pass sorts and streams)
        with torch.inference_mode():
            ck.model(**batch)

    fns = [_synced(device, f) for f in (
        forward, lambda: analyze(ck, head, TEXT),
        lambda: attribute(ck, head, text=TEXT, method="lig", n_steps=LIG_STEPS),
        forward_rows, lambda: encoder_features(ck, rows, batch_size=64, max_length=128))]
    base, a, lig, base_rows, feats = interleaved(fns, rounds=sizes.rounds + 2)
    return [
        row(f"device: analyze vs one forward ({where})", a, base, "≤ 4×", a <= 4 * base),
        row(f"device: lig, {LIG_STEPS} steps vs one forward ({where})", lig, base, f"≤ {4 * LIG_STEPS}×",
            lig <= 4 * LIG_STEPS * base),
        row(f"device: audit features, {len(rows)} rows vs their plain forward ({where})", feats, base_rows, "≤ 1.5×",
            feats <= 1.5 * base_rows),
    ]


PRECISION_TEXTS = (TEXT, "I hated every minute of this film.", "It is fine, I guess. Nothing special.",
                   "Absolutely wonderful service, will come back again!",
                   "The update broke my phone and support never answered.")


def precision_rows(ck, head, where: str, texts=PRECISION_TEXTS) -> list[dict]:
    """Each dtype's distance from float32 on the same device, over `texts` (the README's Precision figures):
    max |Δ logit|, max |Δ probability|, lig scores at 32 fixed steps (max |Δ| / max |score|, per text), and lig's
    own completeness error when adaptive (largest over the texts; ≤ 1% is converged), with the time it took
    against float32's. Value: the dtype's figure; baseline: float32's (0 for the distances)."""
    from explorer.model.heads import head_at_precision

    out = []
    ref = {t: (analyze(ck, head, t), attribute(ck, head, text=t, method="lig", n_steps=32)) for t in texts}
    start = time.perf_counter()
    adaptive32 = [attribute(ck, head, text=t, method="lig") for t in texts]
    seconds32 = time.perf_counter() - start
    for dtype in ("bfloat16", "float16"):
        cast, cast_head = head_at_precision(ck, head, dtype)
        logit = prob = lig = 0.0
        for t, (a, r) in ref.items():
            b = analyze(cast, cast_head, t)
            q = attribute(cast, cast_head, text=t, method="lig", target=r.target, n_steps=32)
            logit = max(logit, float(np.abs(a.logits - b.logits).max()))
            prob = max(prob, float(np.abs(a.softmax - b.softmax).max()))
            lig = max(lig, float(np.abs(r.scores - q.scores).max() / np.abs(r.scores).max()))
        start = time.perf_counter()
        adaptive = [attribute(cast, cast_head, text=t, method="lig") for t in texts]
        seconds = time.perf_counter() - start
        error, error32 = max(r.error for r in adaptive), max(r.error for r in adaptive32)
        converged = sum(bool(r.converged) for r in adaptive)
        out += [row(f"{dtype} vs float32: max |Δ logit| ({where})", logit, 1.0, "stated", True, unit="Δ"),
                row(f"{dtype} vs float32: max |Δ probability| ({where})", prob, 1.0, "stated", True, unit="Δ"),
                row(f"{dtype} vs float32: lig scores at 32 steps, max |Δ|/max|score| ({where})", lig, 1.0, "stated",
                    True, unit="Δ"),
                row(f"{dtype} adaptive lig: largest completeness error (float32 {error32:.2%}); {converged}/"
                    f"{len(texts)} ≤1% ({where})", error, error32, "stated", True, unit="err"),
                row(f"{dtype} adaptive lig, {len(texts)} texts: time vs float32 ({where})", seconds, seconds32,
                    "stated", True)]
    return out


def model_rows(ck, sizes: Sizes, where: str, timed: bool) -> list[dict]:
    head = build_head(ck, "own")
    return [*analyze_rows(ck, head, sizes, where, timed), *lig_rows(ck, head, sizes, where, timed),
            *tweet_rows(ck, head, sizes, where, timed), saliency_row(ck, head, sizes, where, timed),
            finetune_row(ck, sizes, where, timed)]


def run(quick: bool | None = None, device: str = "auto") -> list[dict]:
    quick = os.environ.get(QUICK_ENV, "") not in ("", "0") if quick is None else quick
    sizes = QUICK if quick else FULL
    target = dev.resolve_device(device)
    where = f"on {target.type}" + (", quick sizes" if quick else "")
    ck = load_checkpoint("minilm-sentiment", device=target)
    rows = plain_rows(ck, build_head(ck), sizes, where)
    roots = os.environ.get("HEAD_EXPLORER_ROOTS")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = _drawn_base(Path(tmp), sizes.base, target)
            params = sum(p.numel() for p in base.model.parameters())
            base = dataclasses.replace(base, name=f"bert-base-drawn ({params / 1e6:.0f}M)")
            # Quick: the 2-layer stand-in runs MiniLM's rows too (targets and all), so a CPU checks every row's
            # code in seconds; MiniLM's lig and 50-step Captum runs alone would take a minute there.
            rows += model_rows(base if quick else ck, sizes, where, timed=True)
            if not quick:
                rows += precision_rows(ck, build_head(ck), where)
            rows += model_rows(base, sizes, where, timed=False)
    finally:
        if roots is None:
            os.environ.pop("HEAD_EXPLORER_ROOTS", None)
        else:
            os.environ["HEAD_EXPLORER_ROOTS"] = roots
    return rows
