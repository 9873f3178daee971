"""The device the user has: analyze, lig and the audit's feature pass on whatever device is here (cuda,
then mps, then cpu, as device="auto" picks), each as a ratio against plain model forwards of the same
inputs on the same device, measured in the same run. On a GPU machine it runs there unchanged; work is
synchronised before every clock read, since CUDA and MPS calls return before their kernels finish."""
from __future__ import annotations

import torch

from bench.timing import interleaved, row
from explorer.explain.attribution import attribute
from explorer.model.analysis import analyze, encoder_inputs
from explorer.model.checkpoints import load_checkpoint
from explorer.model.features import encoder_features
from explorer.model.heads import build_head
from explorer.runtime import device as dev

TEXT = "The plot was thin, but the actors carried it with warmth and surprising wit."
ROWS = [f"{TEXT} Review number {i}, {'and more words ' * (i % 5)}" for i in range(64)]
LIG_STEPS = 16  # fixed, so the ratio counts steps, not the adaptive refinement


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def run() -> list[dict]:
    device = dev.resolve_device("auto")
    ck = load_checkpoint("minilm-sentiment", device=device)
    head = build_head(ck)
    where = f"on {device.type}"

    def synced(fn):
        def call():
            fn()
            _sync(device)
        return call

    one = {k: v.to(device) for k, v in encoder_inputs(ck.tokenizer(TEXT, return_tensors="pt"), ck).items()}
    batch = {k: v.to(device) for k, v in encoder_inputs(
        ck.tokenizer(ROWS, truncation=True, max_length=128, padding=True, return_tensors="pt"), ck).items()}

    def forward():  # the baseline: what any caller pays for the prediction alone
        with torch.inference_mode():
            ck.model(**one)

    def forward_rows():  # the rows' plain forward, one padded batch (the feature pass sorts and streams)
        with torch.inference_mode():
            ck.model(**batch)

    fns = [synced(f) for f in (
        forward, lambda: analyze(ck, head, TEXT),
        lambda: attribute(ck, head, TEXT, method="lig", n_steps=LIG_STEPS),
        forward_rows, lambda: encoder_features(ck, ROWS, batch_size=64, max_length=128))]
    base, a, lig, base_rows, feats = interleaved(fns, rounds=7)
    return [
        row(f"device: analyze vs one forward ({where})", a, base, "≤ 4×", a <= 4 * base),
        row(f"device: lig, {LIG_STEPS} steps vs one forward ({where})", lig, base, f"≤ {4 * LIG_STEPS}×",
            lig <= 4 * LIG_STEPS * base),
        row(f"device: audit features, {len(ROWS)} rows vs their plain forward ({where})", feats, base_rows, "≤ 1.5×",
            feats <= 1.5 * base_rows),
    ]
