"""The near-duplicate check's neighbour search alone (explorer/scan/checks/duplicates.py `neighbours`) on 10,000
random L2-normalised 384-d vectors (HEAD_EXPLORER_BENCH_QUICK=1: 2,000) against sklearn's brute-force
NearestNeighbors, the search it replaced, in the same run and both with one BLAS thread: peak memory of numpy's
allocations (tracemalloc) and wall time. Target: memory one block and the top-k, whatever the rows."""
from __future__ import annotations

import os
import time
import tracemalloc

from bench.timing import row

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
VECTORS = 2000 if QUICK else 10_000


def traced(fn) -> tuple[float, float]:
    """(wall seconds, peak MiB of the allocations tracemalloc sees: numpy's arrays) of one call of `fn`."""
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t0
        return seconds, tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def run() -> list[dict]:
    import numpy as np
    from sklearn.neighbors import NearestNeighbors
    from threadpoolctl import threadpool_limits

    from explorer.scan.checks.duplicates import BLOCK_BYTES, NEIGHBOURS, neighbours
    v = np.random.default_rng(0).standard_normal((VECTORS, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    with threadpool_limits(1):
        ours = traced(lambda: neighbours(v, NEIGHBOURS))
        theirs = traced(lambda: NearestNeighbors(n_neighbors=NEIGHBOURS + 1, metric="cosine", algorithm="brute")
                        .fit(v).kneighbors(v))
    # one block and the top-k, whatever the rows, and a tenth more for the small arrays of each block
    bound = 1.1 * (BLOCK_BYTES + VECTORS * NEIGHBOURS * 8) / 2 ** 20
    return [row(f"duplicates: neighbour search, {VECTORS:,} × 384-d, peak memory vs sklearn NearestNeighbors",
                ours[1], theirs[1], f"≤ one block and the top-k ({bound:.0f} MiB), ≤ sklearn's",
                ours[1] <= bound and ours[1] <= theirs[1], unit="MiB"),
            row(f"duplicates: neighbour search, {VECTORS:,} × 384-d, time vs sklearn NearestNeighbors",
                ours[0], theirs[0], "≤ 1× sklearn's", ours[0] <= theirs[0])]
