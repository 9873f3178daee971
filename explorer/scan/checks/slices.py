"""Slices where the model does worse: accuracy by length bucket and by word, each slice against the rest with a
one-sided Fisher exact test, Benjamini-Hochberg over all slices tested, flagged where accuracy falls at least
DROP below the overall accuracy."""
from __future__ import annotations

import numpy as np
from scipy.stats import false_discovery_control, fisher_exact

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single
from explorer.data.words import word_matrix
from explorer.text.errors import Message

DROP = 0.05
ALPHA = 0.05
MIN_SLICE = 20  # rows a slice needs to be tested
MAX_WORDS = 200  # the most frequent words tested as slices
BUCKETS = 4  # length quartiles


def slice_masks(data: ScanData) -> dict[str, np.ndarray]:
    """{slice name: (n,) bool}: length quartiles (in words) and the most frequent words."""
    lengths = np.array([len(t.split()) for t in data.texts])
    masks: dict[str, np.ndarray] = {}
    edges = np.unique(np.quantile(lengths, np.linspace(0, 1, BUCKETS + 1)))
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (lengths >= lo) & ((lengths <= hi) if hi == edges[-1] else (lengths < hi))
        masks[f"length {int(lo)}-{int(hi)} words"] = m
    x, words = word_matrix(list(data.texts), MIN_SLICE)
    if x is not None and len(words):
        counts = np.asarray(x.sum(0)).ravel()
        for j in np.argsort(-counts, kind="stable")[:MAX_WORDS]:
            masks[f'contains "{words[j]}"'] = np.asarray(x[:, j].todense()).ravel() > 0
    return masks


@check("slices.performance", labelled_single, cost=0.1, needs=READS_LABELS, deeper="pages/attributions.py")
def find_weak_slices(data: ScanData, found: Found, progress) -> list[Finding]:
    y = found.given_ids(data)
    keep = y >= 0
    right = (data.predicted == y) & keep
    overall = right[keep].mean() if keep.any() else 0.0
    tested = []
    for name, m in slice_masks(data).items():
        m = m & keep
        rest = keep & ~m
        if m.sum() < MIN_SLICE or not rest.any():
            continue
        a, b = int(right[m].sum()), int(m.sum() - right[m].sum())
        c, d = int(right[rest].sum()), int(rest.sum() - right[rest].sum())
        p = fisher_exact([[a, b], [c, d]], alternative="less").pvalue
        tested.append((name, m, a / (a + b), p))
    if not tested:
        return []
    q = false_discovery_control([t[3] for t in tested], method="bh")
    out = []
    for (name, m, acc, p), qv in zip(tested, q):
        if acc <= overall - DROP and qv < ALPHA:
            out.append(Finding("slices.performance", "major" if acc <= overall - 4 * DROP else "minor",
                               Message("scan_weak_slice", slice=name, accuracy=f"{acc:.0%}", overall=f"{overall:.0%}",
                                       n=int(m.sum())),
                               {"slice": name, "accuracy": round(float(acc), 4), "overall": round(float(overall), 4),
                                "q_value": round(float(qv), 6), "rows": np.flatnonzero(m).tolist(),
                                "read_through_mapping": found.through_mapping}))
    return sorted(out, key=lambda f: f.fields["accuracy"])
