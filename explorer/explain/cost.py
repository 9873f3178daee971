"""What an attribution costs before it runs: the encoder rows its worst case needs, and whether that is heavy
work for the job queue (budget.beyond_one_batch). Kept beside attribution.py, which holds the methods, so a
new method needs no change here: one this module does not know counts as one gradient (as saliency)."""
from __future__ import annotations

from explorer.explain.attribution import ALIASES, INTEGRATED, MAX_STEPS, METHODS
from explorer.runtime import budget


def attribution_rows(method: str, n_tokens: int, *, n_steps: int | None = None, window: int = 1) -> tuple[int, int]:
    """(forward rows, forward+backward rows) of one attribution at most: lig's path up to MAX_STEPS gradients
    when its steps are automatic, plus f(x) and f(baseline); occlusion one forward per window position."""
    method = ALIASES.get(method, method)
    if method in INTEGRATED:
        return 2, n_steps or MAX_STEPS
    if method == "occlusion":
        return max(1, n_tokens - max(1, window) + 1) + 1, 0
    return 1, 1


def attribution_is_heavy(config, method: str, *, n_tokens: int, n_steps: int | None = None, window: int = 1,
                         device=None) -> bool:
    """Does this attribution go through the job queue? Past one batch on `device` (budget.batch_mb) it does."""
    rows, grads = attribution_rows(method, n_tokens, n_steps=n_steps, window=window)
    return budget.beyond_one_batch(config, n_tokens, rows, grads, device=device)


def comparison_is_heavy(config, n_tokens: int, *, window: int = 1, methods=METHODS, device=None) -> bool:
    """faithfulness.compare_methods: every method, then its deletion curves (two per method, a forward per
    token each)."""
    rows = grads = 0
    for m in dict.fromkeys(ALIASES.get(m, m) for m in methods):
        r, g = attribution_rows(m, n_tokens, n_steps=None, window=window)
        rows, grads = rows + r + 2 * n_tokens, grads + g
    return budget.beyond_one_batch(config, n_tokens, rows, grads, device=device)
