"""Explaining a whole dataset: `explain` (lig on every row in shared batches, the given label where
it differs, then ERASER's erasures and the random baseline in length-sorted batches) on demo tweets, in rows per
second, against a text-by-text loop of `attribute` (lig alone, no faithfulness, no given labels) on the same rows,
in one run. Targets: at least half the loop's rate (ours does the loop's work, the given label on wrong rows
and the erasures besides), and 1,000 tweets within the README's stated 40 minutes at the measured rate (one
torch thread on this 2-core machine). HEAD_EXPLORER_BENCH_QUICK=1: 40 tweets (else 200).
"""
from __future__ import annotations

import os
import time

from bench.timing import row
from explorer.data.dataset import demo_frame
from explorer.explain.dataset import explain
from explorer.explain.attribution import attribute
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
ROWS = 40 if QUICK else 200
BUDGET_S = 40 * 60  # for 1,000 rows: the README's stated time


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    df = demo_frame(per_class=-(-ROWS // 3), seed=0).head(ROWS)
    texts, labels = list(df["text"]), list(df["label"])
    load = os.getloadavg()[0]
    start = time.perf_counter()
    found = explain(ck, head, texts, labels, ("lig",))
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        attribute(ck, head, text, "lig")
    t_loop = time.perf_counter() - start
    ours, loop = len(texts) / t_ours, len(texts) / t_loop
    thousand = 1000 / ours
    return [
        row(f"explain-data, {len(texts)} demo tweets, lig + faithfulness (rows/s; 1,000 rows ≈ {thousand / 60:.1f} min) "
            f"vs a text-by-text `attribute` loop, lig only; load {load:.1f}", ours, loop,
            "≥0.5× the loop's rate, 1,000 rows ≤40 min", ours >= 0.5 * loop and thousand <= BUDGET_S,
            unit="rows/s"),
    ]
