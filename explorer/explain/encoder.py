"""Inside the encoder: the head read out at every layer, and token-to-token attention (head and model views)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from explorer.model.analysis import Analysis
from explorer.model.tokens import pair_boundary, visible, without_special

THUMB = 32  # model-view thumbnails larger than this are averaged into THUMB × THUMB blocks
# The head view draws a row per token: past this many it is shown a window of tokens at a time (a 333-token
# text was a 7,000 px tall page).
HEAD_VIEW_TOKENS = 60


def layer_probabilities(a: Analysis) -> np.ndarray:
    """(layers+1, labels): each row of `a.layer_logits` through the problem type's function
    (softmax, sigmoid, or the raw value for regression). Row 0 is the embeddings."""
    return a.problem_type.probabilities(a.layer_logits)


@dataclass(frozen=True, eq=False)
class HeadView:
    layer: int  # 1-based
    heads: tuple[int, ...]
    tokens: tuple[str, ...]  # the tokens shown (special ones dropped when hidden)
    weights: np.ndarray  # (len(heads), n, n): row i is what token i attends to, rows sum to 1
    boundary: int | None  # index in `tokens` of the first token of text B; None for one text
    renormalised: bool  # special tokens were dropped and each row rescaled to sum to 1


def _kept(special: tuple[bool, ...], hide: bool) -> tuple[bool, ...]:
    return tuple(special) if hide else (False,) * len(special)


def head_view(a: Analysis, layer: int, *, head: int | None = None, hide_special: bool = False) -> HeadView:
    """Token-to-token attention of one head (or all heads when `head` is None) at a 1-based layer.
    For a sentence pair, `boundary` is where `a.segments` turns from text A (0) to text B (1)."""
    att = a.attentions[layer - 1]  # (heads, seq, seq)
    heads = tuple(range(att.shape[0])) if head is None else (int(head),)
    dropped = _kept(a.special, hide_special)
    keep = ~np.asarray(dropped, dtype=bool)
    weights = without_special(att[list(heads)][:, keep, :], dropped)  # (heads, kept, kept)
    boundary = pair_boundary(a.segments, dropped) if a.segments else None
    return HeadView(layer=layer, heads=heads, tokens=visible(a.shown, a.special, hide_special), weights=weights,
                    boundary=boundary, renormalised=hide_special)


def windows(n: int, size: int = HEAD_VIEW_TOKENS) -> list[int]:
    """The first token of each window of at most `size` of a head view's `n` tokens."""
    return list(range(0, max(n, 1), size))


def window(v: HeadView, start: int, *, size: int = HEAD_VIEW_TOKENS) -> HeadView:
    """Tokens start..start+size of head view `v` and the lines among them (weights as they are: lines to
    tokens outside the window are not drawn)."""
    end = min(start + size, len(v.tokens))
    inside = v.boundary is not None and start < v.boundary < end
    return replace(v, tokens=v.tokens[start:end], weights=v.weights[:, start:end, start:end],
                   boundary=v.boundary - start if inside else None)


def _block_mean(m: np.ndarray, size: int) -> np.ndarray:
    """(..., n, n) -> (..., size, size): the mean of each block of near-equal index ranges."""
    n = m.shape[-1]
    starts = np.array([s[0] for s in np.array_split(np.arange(n), size)])
    counts = np.diff(np.append(starts, n))
    rows = np.add.reduceat(m, starts, axis=-2) / counts[:, None]
    return np.add.reduceat(rows, starts, axis=-1) / counts[None, :]


def model_view(a: Analysis, *, hide_special: bool = False, size: int = THUMB) -> np.ndarray:
    """(layers, heads, m, m) thumbnails of every head's token-to-token attention, m = min(tokens, size);
    longer texts are averaged into blocks so a thumbnail stays readable."""
    att = a.attentions  # (layers, heads, seq, seq); its rows already sum to 1
    if hide_special:
        keep = ~np.asarray(a.special, dtype=bool)
        att = without_special(att[:, :, keep, :], a.special)  # (layers, heads, kept, kept)
    return att if att.shape[-1] <= size else _block_mean(att, size)
