"""What every attribution method is asked and hands back: the request (its parameters beyond the text and the
target), the method's output for one text, and the one-line AttributionError a bad request gets. Below
attribution.py, sampled.py and batched.py, which all three use it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.text.errors import ExplorerError


class AttributionError(ExplorerError):
    """Bad attribution request; the message is one line, meant for the user."""


@dataclass(frozen=True)
class Request:
    """How one text is attributed, besides its target: the method's own name (attribution.ALIASES resolved), the
    quantity explained (logit | probability), the baseline (pad | mask | zero), lig's completeness tolerance,
    occlusion's window (None for the other methods) and, for a token classifier, the token explained."""
    method: str
    quantity: str
    baseline: str
    tolerance: float
    window: int | None = None
    target_token: int | None = None


@dataclass(frozen=True, eq=False)
class MethodOutput:
    """What a method computed for one text: scores (seq,), one per token (the hidden dimensions summed); the
    quantity at the input and at the baseline where the method evaluates both; delta, the completeness gap
    Σ scores − (f(x) − f(baseline)), and n_steps, the gradients computed, for path methods (lig,
    gradient_shap); sampling for the sampled methods (explorer.explain.sampled.Sampling)."""
    scores: np.ndarray
    f_x: float | None = None
    f_baseline: float | None = None
    delta: float | None = None
    n_steps: int | None = None
    sampling: object | None = None  # a sampled.Sampling (named here without importing it: sampled imports this)
