"""bench/bench_device.py in quick mode on whatever device is here: every row of the side-by-side bench runs and
reports a finite figure, so the GPU run (bench/device_run.sh) finds no broken code. Its figures mean nothing."""
from __future__ import annotations

import math
import os
import time

import pytest

from bench import bench_device


@pytest.mark.slow
def test_every_row_runs_in_quick_mode():
    roots = os.environ.get("HEAD_EXPLORER_ROOTS")
    start = time.perf_counter()
    rows = bench_device.run(quick=True)
    took = time.perf_counter() - start
    assert os.environ.get("HEAD_EXPLORER_ROOTS") == roots  # the drawn model's root is not left behind
    names = [r["name"] for r in rows]
    for part in ("analyze vs one forward with attentions, 16 tokens", "lig to error≤1%, 16 tokens",
                 "tweets (median", "tweets attribute_many vs our text-by-text loop", "saliency, 16 tokens",
                 "full fine-tune, 1 epoch"):
        hits = [n for n in names if part in n]
        assert len(hits) == 2, (part, hits)  # the timed rows, then the BERT-base-sized model's (timings only)
    assert sum("bert-base-drawn" in n and r["target"] == "timings only" for n, r in zip(names, rows)) == 6
    assert all(n.startswith("device: ") for n in names[:3])  # the first rows, on MiniLM
    assert all(math.isfinite(r["value"]) and r["value"] > 0 and r["baseline"] > 0 for r in rows), rows
    assert all("same scores: True" in n for n in names if "saliency" in n)
    print(f"quick bench: {len(rows)} rows in {took:.1f} s")
