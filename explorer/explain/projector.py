"""Projector: a dataset's vectors in two dimensions, PCA by default, UMAP when umap-learn is installed.

Above MAX_POINTS rows a seeded random subsample is drawn (and reported), so the browser stays quick.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np

MAX_POINTS = 5000
METHODS = ("pca", "umap")


@dataclass(frozen=True, eq=False)
class Projection:
    xy: np.ndarray  # (m, 2)
    rows: np.ndarray  # (m,) the data rows shown, ascending
    method: str
    total: int  # rows before subsampling

    @property
    def subsampled(self) -> bool:
        return len(self.rows) < self.total


def available() -> tuple[str, ...]:
    """The methods this installation can run."""
    return ("pca", "umap") if importlib.util.find_spec("umap") is not None else ("pca",)


def project(vectors: np.ndarray, *, method: str = "pca", max_points: int = MAX_POINTS, seed: int = 0) -> Projection:
    """(n, d) vectors -> at most `max_points` 2-D points."""
    n = len(vectors)
    rows = np.arange(n)
    if n > max_points:
        rows = np.sort(np.random.default_rng(seed).choice(n, max_points, replace=False))
    x = np.asarray(vectors, np.float64)[rows]
    if method == "umap" and "umap" in available() and len(x) > 15:
        import umap

        xy = umap.UMAP(n_components=2, random_state=seed, n_neighbors=min(15, len(x) - 1)).fit_transform(x)
    else:
        method = "pca"
        centred = x - x.mean(0)
        # SVD of the centred data: its first two right singular vectors are the principal axes.
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        xy = centred @ vt[:2].T
        if xy.shape[1] < 2:  # a single row or one-dimensional vectors
            xy = np.pad(xy, ((0, 0), (0, 2 - xy.shape[1])))
    return Projection(xy=np.asarray(xy, np.float32), rows=rows, method=method, total=n)
