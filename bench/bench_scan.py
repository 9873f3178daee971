"""The scan against one plain batched forward over the same rows, in one run: 1,000 demo tweets (HEAD_EXPLORER_
BENCH_QUICK=1: 200) with their labels through minilm-sentiment. Target: the whole scan (every check) within 10x
the forward, which is what Giskard's text scan costs for fewer checks. Thread CPU time, one torch thread: the
work itself, not the waits a loaded machine adds."""
from __future__ import annotations

import os
import time

from bench.timing import interleaved, row
from explorer.data.dataset import demo_frame
from explorer.model.checkpoints import load_checkpoint
from explorer.model.inference import predict_logits
from explorer.scan import scan_rows

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
ROWS = 200 if QUICK else 1000


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    df = demo_frame(per_class=-(-ROWS // 3), seed=0).head(ROWS)
    texts, labels = list(df["text"]), list(df["label"])
    forward, scan = interleaved([lambda: predict_logits(ck, texts), lambda: scan_rows(ck, texts, labels)], rounds=2,
                                clock=time.thread_time)
    return [row(f"scan, {len(texts)} demo tweets, every check (CPU s) vs one plain batched forward", scan, forward,
                "≤10× the forward", scan <= 10 * forward)]
