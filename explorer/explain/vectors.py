"""The vectors a head can pool, how alike they are, and what the head costs next to an LM head."""
from __future__ import annotations

import numpy as np

from explorer.model.analysis import Analysis
from explorer.model.heads import Head
from explorer.model.tokens import cosine


def vectors(a: Analysis) -> dict[str, np.ndarray]:
    """{name: (features,)}: the last layer's first token, the head's pooled vector (what its final
    linear layer reads, eval mode) and the plain mean over all tokens."""
    last = a.hidden_states[-1]  # (n, d)
    return {
        "first token": last[0],
        "head pooled": a.steps[-2][1],  # the step before the final classifier
        "mean pool": last.mean(axis=0),
    }


def cosine_matrix(vecs: dict[str, np.ndarray]) -> np.ndarray:
    """(k, k) cosine similarities; vectors of different sizes get NaN."""
    items = list(vecs.values())
    return np.array([[cosine(u, v) if u.shape == v.shape else np.nan for v in items] for u in items])


def lm_head_params(vocab_size: int, hidden: int) -> int:
    """A masked-LM decoder maps hidden -> vocab: vocab×hidden weights + vocab biases."""
    return vocab_size * hidden + vocab_size


def head_rows(head: Head) -> list[dict]:
    """One row per head step, linear layers with shape, parameter count and origin."""
    linear = {r["name"]: r for r in head.parameters_table()}
    rows = []
    for step in head.steps:
        r = linear.get(step.name, {"shape": "", "params": 0, "pretrained": None})
        rows.append({"step": step.name, "op": step.op, **{k: r[k] for k in ("shape", "params", "pretrained")}})
    return rows
