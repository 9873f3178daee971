"""The scan against one plain batched forward over the same rows, in one run: 1,000 demo tweets (HEAD_EXPLORER_
BENCH_QUICK=1: 200) with their labels through minilm-sentiment. Target: the whole scan (every check) within 10x
the forward, which is what Giskard's text scan costs for fewer checks. Thread CPU time, one torch thread: the
work itself, not the waits a loaded machine adds.

And the near-duplicate check's neighbour search alone, on 10,000 random L2-normalised 384-d vectors (quick: 2,000)
against sklearn's brute-force NearestNeighbors (the search it replaced), both with one BLAS thread: peak memory
of numpy's allocations (tracemalloc) and wall time."""
from __future__ import annotations

import os
import time
import tracemalloc

from bench.timing import interleaved, row
from explorer.data.dataset import demo_frame
from explorer.model.checkpoints import load_checkpoint
from explorer.model.inference import predict_logits
from explorer.scan import scan_rows

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
ROWS = 200 if QUICK else 1000
VECTORS = 2000 if QUICK else 10_000


def measured(fn) -> tuple[float, float]:
    """(wall seconds, peak MiB of the allocations tracemalloc sees: numpy's arrays) of one call of `fn`."""
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t0
        return seconds, tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def neighbour_rows() -> list[dict]:
    import numpy as np
    from sklearn.neighbors import NearestNeighbors
    from threadpoolctl import threadpool_limits

    from explorer.scan.checks.duplicates import BLOCK_BYTES, NEIGHBOURS, neighbours
    v = np.random.default_rng(0).standard_normal((VECTORS, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    with threadpool_limits(1):
        ours = measured(lambda: neighbours(v, NEIGHBOURS))
        theirs = measured(lambda: NearestNeighbors(n_neighbors=NEIGHBOURS + 1, metric="cosine", algorithm="brute")
                          .fit(v).kneighbors(v))
    # one block and the top-k, whatever the rows, and a tenth more for the small arrays of each block
    bound = 1.1 * (BLOCK_BYTES + VECTORS * NEIGHBOURS * 8) / 2 ** 20
    return [row(f"duplicates: neighbour search, {VECTORS:,} × 384-d, peak memory vs sklearn NearestNeighbors",
                ours[1], theirs[1], f"≤ one block and the top-k ({bound:.0f} MiB), ≤ sklearn's",
                ours[1] <= bound and ours[1] <= theirs[1], unit="MiB"),
            row(f"duplicates: neighbour search, {VECTORS:,} × 384-d, time vs sklearn NearestNeighbors",
                ours[0], theirs[0], "≤ 1× sklearn's", ours[0] <= theirs[0])]


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    df = demo_frame(per_class=-(-ROWS // 3), seed=0).head(ROWS)
    texts, labels = list(df["text"]), list(df["label"])
    forward, scan = interleaved([lambda: predict_logits(ck, texts), lambda: scan_rows(ck, texts, labels)], rounds=2,
                                clock=time.thread_time)
    return [row(f"scan, {len(texts)} demo tweets, every check (CPU s) vs one plain batched forward", scan, forward,
                "≤10× the forward", scan <= 10 * forward)] + neighbour_rows()
