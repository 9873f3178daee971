"""The scan against one plain batched forward over the same rows, in one run: 1,000 demo tweets (HEAD_EXPLORER_
BENCH_QUICK=1: 200) with their labels through minilm-sentiment. Target: the whole scan (every check) within 10x
the forward, which is what Giskard's text scan costs for fewer checks. Thread CPU time, one torch thread: the
work itself, not the waits a loaded machine adds.

Growth: the scan of SCALE times the rows, each size in a fresh process (its peak resident memory is the process's
own, read from getrusage): CPU time per row against the smaller size's (linear), and the peak memory at 100,000
rows extrapolated along the line through the two sizes, against 4 GB.

Against a baseline (explorer.scan.baseline): the comparison itself reads the forward pass each checkpoint's scan
already ran, so its own CPU time is set against one plain forward (target: a tenth of it); the whole scan against
a baseline (the baseline scanned too, for its findings' new/same/gone) against the checkpoint's scan alone (target:
at most 2.5×: the second scan and the comparison, one run against the best of two)."""
from __future__ import annotations

import os
import time

from bench.timing import best_of, interleaved, row
from explorer.data.dataset import demo_frame
from explorer.model.checkpoints import load_checkpoint
from explorer.model.inference import predict_logits
from explorer.scan import scan_rows
from explorer.scan.baseline import compare, scan_against

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
ROWS = 200 if QUICK else 1000
SCALE = 4  # the larger size, in multiples of ROWS
PROBE = """
import json, resource, sys, time, torch
torch.set_num_threads(1)
from explorer.data.dataset import demo_frame
from explorer.model.checkpoints import load_checkpoint
from explorer.scan import scan_rows
n = int(sys.argv[1])
ck = load_checkpoint("minilm-sentiment")
df = demo_frame(per_class=-(-n // 3), seed=0).head(n)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.thread_time()
scan_rows(ck, list(df["text"]), given=list(df["label"]))
print(json.dumps({"cpu": time.thread_time() - start, "before_kb": before,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def measured(n: int) -> dict:
    """One scan of `n` demo tweets in a fresh process: its CPU seconds and peak resident memory."""
    import json
    import subprocess
    import sys
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", PROBE, str(n)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    df = demo_frame(per_class=-(-ROWS // 3), seed=0).head(ROWS)
    texts, labels = list(df["text"]), list(df["label"])
    forward, scan = interleaved([lambda: predict_logits(ck, texts), lambda: scan_rows(ck, texts, given=labels)],
                                rounds=2,
                                clock=time.thread_time)
    base = load_checkpoint("minilm-sentiment", seed=1)  # another load: the comparison's cost is the same on any pair
    start = time.thread_time()
    against = scan_against(lambda c, p: scan_rows(c, texts, given=labels, progress=p), ck, baseline=base)
    both = time.thread_time() - start
    report, base_report = scan_rows(ck, texts, given=labels), scan_rows(base, texts, given=labels)
    own = best_of(lambda: compare(report, base_report, ck=ck, baseline=base), repeat=3, clock=time.thread_time)
    assert against.baseline is not None
    small, large = measured(ROWS), measured(SCALE * ROWS)
    per_row = (large["cpu"] / (SCALE * ROWS)) / (small["cpu"] / ROWS)
    grown = [(m["peak_kb"] - m["before_kb"]) / 1024 for m in (small, large)]  # MB the scan adds, each size
    # Linear in the rows: the slope between the two sizes, extrapolated to 100,000 rows. A peak read at one size
    # alone is no measure (at a few hundred rows the model's load can still be the process's peak: 0 added).
    slope = max(grown[1] - grown[0], 0.0) / ((SCALE - 1) * ROWS)
    at_100k = grown[1] + slope * (100_000 - SCALE * ROWS) + large["before_kb"] / 1024
    return [row(f"scan, {len(texts)} demo tweets, every check (CPU s) vs one plain batched forward", scan, forward,
                "≤10× the forward", scan <= 10 * forward),
            row(f"scan against a baseline, {len(texts)} rows: the comparison itself (CPU s) vs one plain forward",
                own, forward, "≤ 0.1× (no forward of its own)", own <= 0.1 * forward),
            row(f"scan against a baseline, {len(texts)} rows: both scans and the comparison (CPU s) vs the scan alone",
                both, scan, "≤ 2.5× (one more scan)", both <= 2.5 * scan),
            row(f"scan, {SCALE * ROWS} rows: CPU s per row vs at {ROWS} rows", large["cpu"] / (SCALE * ROWS),
                small["cpu"] / ROWS, "≤ 1.25× (linear)", per_row <= 1.25),
            row(f"scan, 100,000 rows: peak memory (MB) extrapolated from {ROWS} and {SCALE * ROWS} rows vs 4 GB",
                at_100k, 4096.0, "≤ 1.0×", at_100k <= 4096.0, unit="MB")]
