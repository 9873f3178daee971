"""lig at scale on the embedded sentiment model: long texts, and many texts batched.

Each row is a ratio against Captum's LayerIntegratedGradients (n_steps=50, its default) on the same
model, texts and targets, measured in the same run:
- one text of 256 tokens (target ≥ 2.5× faster) and of 512 tokens (≥ 2×), ours adaptive to ≤ 1%;
- 200 demo tweets, every one of ours ≤ 1%: attribute_many against Captum batched (texts sorted by
  length, 8 per call, 64 rows per forward, as ours packs about 66 at this length): ≥ 2× faster; and
  against our own text-by-text loop: ≥ 1.5× faster.
HEAD_EXPLORER_BENCH_QUICK=1: 40 tweets and one round of each (a few minutes on a loaded 2-core machine).
"""
from __future__ import annotations

import os
import time

import numpy as np
import torch
from captum.attr import LayerIntegratedGradients

from bench.timing import interleaved, row
from explorer.data.dataset import demo_frame
from explorer.explain.attribution import attribute, baseline_ids
from explorer.explain.batched import attribute_many
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
TEXTS = 40 if QUICK else 200
ROUNDS = 1 if QUICK else 3
CAPTUM_TEXTS, CAPTUM_ROWS = 8, 64  # Captum batched: texts per call, rows per forward


def _long_text(ck, tokens: int) -> str:
    """Demo tweets joined, cut to exactly `tokens` tokens with [CLS] and [SEP]."""
    joined = " ".join(demo_frame(per_class=100, seed=1)["text"])
    ids = ck.tokenizer(joined, truncation=True, max_length=tokens)["input_ids"]
    text = ck.tokenizer.decode(ids[1:-1])
    assert len(ck.tokenizer(text)["input_ids"]) == tokens
    return text


def _captum(ck, texts: list[str], targets: list[int], per_call: int = CAPTUM_TEXTS,
            rows: int = CAPTUM_ROWS) -> np.ndarray:
    """Captum LIG n=50 over `texts` in calls of `per_call` (right-padded, masked), `rows` rows per forward, on the
    model's device; (texts,) |delta|."""
    model, device = ck.model, ck.model.device

    def forward(input_ids, attention_mask):
        return model(input_ids=input_ids, attention_mask=attention_mask).logits

    lig = LayerIntegratedGradients(forward, model.base_model.embeddings)
    special = set(ck.tokenizer.all_special_ids)
    deltas = []
    for i in range(0, len(texts), per_call):
        enc = ck.tokenizer(texts[i:i + per_call], return_tensors="pt", padding=True)
        ids = enc["input_ids"]
        base = torch.tensor([baseline_ids(ck, row.tolist(), special=[t in special for t in row.tolist()], kind="pad")
                             for row in ids])
        _, delta = lig.attribute(ids.to(device), baselines=base.to(device), target=targets[i:i + per_call],
                                 n_steps=50, additional_forward_args=(enc["attention_mask"].to(device),),
                                 internal_batch_size=rows, return_convergence_delta=True)
        deltas += delta.abs().tolist()
    return np.asarray(deltas)


def _long_row(ck, head, tokens: int, want: float) -> dict:
    text = _long_text(ck, tokens)
    ours = attribute(ck, head, text=text, method="lig")
    t_ours, t_captum = interleaved([lambda: attribute(ck, head, text=text, method="lig"),
                                    lambda: _captum(ck, [text], [ours.target])], rounds=ROUNDS)
    error = float(_captum(ck, [text], [ours.target])[0]) / abs(ours.f_x - ours.f_baseline)
    return row(f"lig to error≤1%, {tokens} tokens, vs Captum LIG n=50 (ours {ours.n_steps} steps, error "
               f"{ours.error:.2%}; Captum error {error:.2%})", t_ours, t_captum, f"≥{want:g}× faster",
               t_captum / t_ours >= want and ours.converged)


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    rows = [_long_row(ck, head, 256, 2.5), _long_row(ck, head, 512, 2.0)]
    texts = sorted(demo_frame(per_class=-(-TEXTS // 3), seed=0)["text"][:TEXTS], key=len)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    many = attribute_many(ck, head, texts=texts)
    t_many = time.perf_counter() - start
    targets = [r.target for r in many]
    start = time.perf_counter()
    loop = [attribute(ck, head, text=t) for t in texts]
    t_loop = time.perf_counter() - start
    start = time.perf_counter()
    deltas = _captum(ck, texts, targets)
    t_captum = time.perf_counter() - start
    errors = deltas / np.abs([r.f_x - r.f_baseline for r in many])
    ok = all(r.converged for r in many)
    median = int(np.median([len(r.tokens) for r in many]))
    steps = np.mean([r.n_steps for r in many])
    same = max(float(np.abs(a.scores - b.scores).max()) for a, b in zip(many, loop))
    rows += [
        row(f"{len(texts)} tweets (median {median} tokens) batched, all ≤1% (mean {steps:.1f} steps), vs Captum "
            f"batched n=50 ({np.mean(errors <= 0.01):.0%} of its texts ≤1%, max {errors.max():.1%}); load {load:.1f}",
            t_many, t_captum, "≥2× faster", ok and t_captum / t_many >= 2),
        row(f"{len(texts)} tweets batched vs our text-by-text loop (max score difference {same:.1e})",
            t_many, t_loop, "≥1.5× faster", ok and t_loop / t_many >= 1.5),
    ]
    return rows
