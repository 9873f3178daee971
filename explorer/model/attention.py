"""Attention summaries: raw [CLS] rows, rollout and max-flow (Abnar & Zuidema 2020).

Both rollout and flow use the residual-aware matrix A = mean over heads + identity,
rows renormalised, because half of what a token "sees" at each layer is itself.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from explorer.runtime.jobs import Progress

# Flow runs on integer capacities; 2**24 keeps ~7 significant digits and cannot overflow int32
# because no node's outgoing capacity exceeds 1.
_SCALE = 2**24
# Max-flow grows about with the cube of the token count: 32 tokens take ~40 ms, 512 took 200 s.
FLOW_WARN_TOKENS = 128


def residual_matrices(att: np.ndarray) -> np.ndarray:
    """(L, H, n, n) attention (float32 or float64) -> (L, n, n) float64 head-mean + identity, rows summing to 1."""
    # The head mean accumulates in float64 straight from the weights: the same numbers as the mean of a
    # float64 copy (numpy's mean is this sum, then the division), without the copy (38 MB, ~20 ms at 256 tokens).
    att = np.asarray(att)
    a = np.add.reduce(att, axis=1, dtype=np.float64)
    a /= att.shape[1]
    a += np.eye(a.shape[-1])
    a /= a.sum(axis=-1, keepdims=True)
    return a


def attention_rollout(att: np.ndarray) -> np.ndarray:
    """(L, H, n, n) -> (L, n, n) float64: J0 = A0, Jl = Al @ J(l-1)."""
    # The products in torch (float64, as before): numpy's BLAS keeps its own thread pool, which ignores
    # the process's torch thread setting; on a loaded 2-core box its threads made one 256-token product
    # take 36 ms that one thread does in 0.5 ms.
    a = torch.from_numpy(residual_matrices(att))
    out = torch.empty_like(a)
    acc = a[0]
    out[0] = acc
    for layer in range(1, a.shape[0]):
        acc = a[layer] @ acc
        out[layer] = acc
    return out.numpy()


def cls_rollout(att: np.ndarray, source: int = 0) -> np.ndarray:
    """(L, H, n, n) -> (L, n) float64: row `source` of each layer's rollout, attention_rollout(att)[:, source],
    without the (L, n, n) products: e_sourceᵀ A_l A_(l-1) … A_0 as a row vector through the chain, L(L+1)/2
    vector-matrix products in place of L-1 matrix products (at 256 tokens, 0.5 ms in place of ~3 ms, and no
    (L, n, n) result). Equal to rollout's rows to float64 rounding (~1e-16: the sums in another order)."""
    a = torch.from_numpy(residual_matrices(att))
    out = torch.empty(a.shape[:2], dtype=a.dtype)
    for layer in range(a.shape[0]):
        row = a[layer, source]
        for below in range(layer - 1, -1, -1):
            row = row @ a[below]
        out[layer] = row
    return out.numpy()


def flow_graph(att: np.ndarray) -> tuple[csr_array, int]:
    """The layered graph: node l*n+i is token i at layer l's output (l=0: the inputs).

    Edge (l, i) -> (l-1, j) has capacity A_l[i, j]. Edges only point down, so one graph
    serves every source layer.
    """
    a = residual_matrices(att)
    n_layers, n, _ = a.shape
    caps = np.rint(a * _SCALE).astype(np.int32)  # (L, n, n)
    rows = (np.arange(1, n_layers + 1)[:, None, None] * n + np.arange(n)[None, :, None]).repeat(n, axis=2)
    cols = ((np.arange(n_layers)[:, None, None]) * n + np.arange(n)[None, None, :]).repeat(n, axis=1)
    size = (n_layers + 1) * n
    graph = csr_array((caps.ravel(), (rows.ravel(), cols.ravel())), shape=(size, size))
    return graph, n


def flow(att: np.ndarray, source: int = 0, progress: Progress | None = None) -> np.ndarray:
    """(L, H, n, n) -> (L, n): max-flow from token `source` at layer l's output to each input token.

    Each row is normalised to sum to 1. `progress(fraction, "")` after each layer (it may raise to stop).
    """
    graph, n = flow_graph(att)
    n_layers = att.shape[0]
    out = np.zeros((n_layers, n))
    for layer in range(1, n_layers + 1):
        src = layer * n + source
        for j in range(n):
            out[layer - 1, j] = maximum_flow(graph, src, j, method="dinic").flow_value
            if progress is not None and j % 32 == 31:  # a layer of 512 tokens takes tens of seconds: Stop sooner
                progress((layer - 1 + (j + 1) / n) / n_layers, "")
    return out / out.sum(axis=1, keepdims=True)


def flow_reference_last_layer(att: np.ndarray, source: int = 0) -> np.ndarray:
    """The straightforward networkx per-pair computation, for the last layer only (bench, tests)."""
    import networkx as nx

    a = residual_matrices(np.asarray(att, dtype=np.float64))
    n_layers, n, _ = a.shape
    g = nx.DiGraph()
    for layer in range(1, n_layers + 1):
        for i in range(n):
            for j in range(n):
                g.add_edge((layer, i), (layer - 1, j), capacity=float(a[layer - 1, i, j]))
    vals = np.array([nx.maximum_flow_value(g, (n_layers, source), (0, j)) for j in range(n)])
    return vals / vals.sum()


def flow_is_costly(n_tokens: int) -> bool:
    """Above FLOW_WARN_TOKENS, flow takes seconds to minutes: ask before computing it."""
    return n_tokens > FLOW_WARN_TOKENS
