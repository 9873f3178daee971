"""Duplicates: the same text more than once, and near-duplicates (cosine similarity of the model's own
vectors) whose labels disagree; with Azimuth's neighbour tags on each row."""
from __future__ import annotations

import re

import numpy as np

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single, sentence_classifier
from explorer.text.errors import Message

NEAR = 0.95  # cosine similarity from which two rows count as near-duplicates
NEIGHBOURS = 20  # Azimuth's neighbourhood
CONFLICT_SHARE = 0.90  # Azimuth: at least this share of a row's neighbours carry another label
NO_CLOSE = 0.5  # Azimuth: a row whose nearest neighbour is less similar than this has no close neighbour
MAX_PAIRS = 200


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def exact_pairs(data: ScanData) -> list[list[int]]:
    """[[i, j], ...] with i < j: rows whose texts (and second texts) are equal up to case and spacing."""
    first: dict[tuple, int] = {}
    pairs = []
    for i, t in enumerate(data.texts):
        key = (normalised(t), normalised(data.pairs[i]) if data.pairs is not None else None)
        if key in first:
            pairs.append([first[key], i])
        else:
            first[key] = i
    return pairs


def neighbours(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """((n, k) indices, (n, k) cosine similarities) of each row's k nearest other rows, by brute force in
    sklearn's chunks (the vectors are L2-normalised, so cosine is a dot product)."""
    from sklearn.neighbors import NearestNeighbors
    k = min(k, len(vectors) - 1)
    if k < 1:
        return np.zeros((len(vectors), 0), np.int64), np.zeros((len(vectors), 0))
    nn = NearestNeighbors(n_neighbors=k + 1, metric="cosine", algorithm="brute").fit(vectors)
    dist, idx = nn.kneighbors(vectors)
    # Drop each row itself (an exact duplicate may come first instead: drop by identity, not position).
    out_i = np.zeros((len(vectors), k), np.int64)
    out_s = np.zeros((len(vectors), k))
    for r in range(len(vectors)):
        keep = idx[r] != r
        out_i[r], out_s[r] = idx[r][keep][:k], 1.0 - dist[r][keep][:k]
    return out_i, out_s


@check("duplicates.exact", sentence_classifier, cost=0.0, deeper="pages/attributions.py")
def find_exact(data: ScanData, found: Found, progress) -> list[Finding]:
    pairs = exact_pairs(data)
    if not pairs:
        return []
    conflicting = data.given is not None and any(data.given[i] != data.given[j] for i, j in pairs)
    return [Finding("duplicates.exact", "minor" if conflicting else "info",
                    Message("scan_exact_duplicates", n=len(pairs)), {"pairs": pairs[:MAX_PAIRS]})]


@check("duplicates.conflicting", labelled_single, cost=0.2, needs=READS_LABELS, deeper="pages/attributions.py")
def find_conflicting(data: ScanData, found: Found, progress) -> list[Finding]:
    idx, sim = neighbours(data.vectors, NEIGHBOURS)
    given = np.asarray(data.given)
    pairs = sorted({(min(r, int(j)), max(r, int(j))) for r in range(data.rows)
                    for j, s in zip(idx[r], sim[r]) if s >= NEAR and given[r] != given[j]})
    other = given[idx] != given[:, None] if idx.shape[1] else np.zeros((data.rows, 0), bool)
    conflicting_neighbours = np.flatnonzero(other.mean(1) >= CONFLICT_SHARE) if idx.shape[1] else np.array([], int)
    no_close = np.flatnonzero(sim[:, 0] < NO_CLOSE) if idx.shape[1] else np.array([], int)
    found.results["duplicates.conflicting"] = {"tags": {"conflicting_neighbours": conflicting_neighbours.tolist(), "no_close_neighbour": no_close.tolist()}}
    if not pairs:
        return []
    return [Finding("duplicates.conflicting", "major",
                    Message("scan_conflicting_duplicates", n=len(pairs), near=f"{NEAR:.2f}"),
                    {"pairs": [list(p) for p in pairs[:MAX_PAIRS]], "similarity": NEAR,
                     "conflicting_neighbours": conflicting_neighbours.tolist(),
                     "no_close_neighbour": no_close.tolist()})]
