"""Foundation benchmarks: analysis overhead over a plain forward, flow vs networkx, cold start.

Every figure is a ratio against a baseline timed in the same run.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time

import numpy as np
import torch

from bench.server import CHROMIUM_ARGS, serve
from bench.timing import best_of, row

TEXT = "I honestly did not expect much, but the acting was wonderful and the ending made me smile."


def _analyze_row() -> dict:
    from explorer.model.analysis import analyze, encode, encoder_inputs
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head

    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    enc, _ = encode(ck, TEXT)
    inputs = encoder_inputs(enc)

    def forward():
        with torch.inference_mode():
            ck.model(**inputs)

    plain = best_of(forward, repeat=15, warmup=2)
    ours = best_of(lambda: analyze(ck, head, TEXT), repeat=15, warmup=2)
    n = enc["input_ids"].shape[1]
    return row(f"analyze (no flow), {n} tokens / one model(**enc) forward", ours, plain, "ratio <= 1.5",
               ours / plain <= 1.5)


def _flow_rows() -> list[dict]:
    from explorer.model.attention import flow, flow_reference_last_layer

    rng = np.random.default_rng(0)
    att = rng.random((6, 12, 32, 32)) ** 3  # (layers, heads, seq, seq), skewed like real attention
    att /= att.sum(-1, keepdims=True)
    ours = best_of(lambda: flow(att), repeat=3)
    ref = best_of(lambda: flow_reference_last_layer(att), repeat=1, warmup=0)
    return [row("attention flow, all 6 layers, 32 tokens / networkx last layer only", ours, ref,
                "ratio <= 0.05 and <= 0.5 s", ours / ref <= 0.05 and ours <= 0.5)]


def _cold_start_row() -> dict | None:
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    from playwright.sync_api import sync_playwright

    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch, transformers"], check=True)
    baseline = time.perf_counter() - t0

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        t0 = time.perf_counter()
        try:
            with serve() as url:  # the clock includes the server's start
                page = browser.new_page()
                page.goto(url)
                page.wait_for_selector("[data-testid=stMetricValue]", timeout=120_000)
                took = time.perf_counter() - t0
        finally:
            browser.close()
    return row("cold start: streamlit run -> first prediction metric / import torch+transformers", took, baseline,
               "<= 15 s absolute", took <= 15)


def run() -> list[dict]:
    torch.set_num_threads(1)
    rows = [_analyze_row(), *_flow_rows()]
    cold = _cold_start_row()
    if cold is not None:
        rows.append(cold)
    return rows
