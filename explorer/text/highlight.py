"""Text highlighted by signed scores, as HTML: one coloured span per piece (white at 0, blue up, red down).

Plain HTML without plotly, so a result can display itself in a notebook (Attribution._repr_html_) and the
attribution charts share its colours (explorer/plots/attribution.py).
"""
from __future__ import annotations

import numpy as np

from explorer.text.plain import html as escape_html

POSITIVE = (33, 102, 172)  # blue: pushes the target up
NEGATIVE = (178, 24, 43)  # red: pushes it down


def colour(score: float, scale: float) -> str:
    """Diverging colour: white at 0, full blue/red at ±scale."""
    strength = 0.0 if scale <= 0 else min(1.0, abs(score) / scale)
    r, g, b = POSITIVE if score >= 0 else NEGATIVE
    mix = [round(255 + (c - 255) * strength) for c in (r, g, b)]
    return f"rgb({mix[0]},{mix[1]},{mix[2]})"


def highlight_html(pieces, scores, title: str = "", legend: str = "", standalone: bool = False,
                   pair_at: int | None = None, pair_label: str = "") -> str:
    """Each piece in a coloured span with its score in the tooltip. `standalone` adds <html> boilerplate.
    `pair_at`: text B of a sentence pair starts at that piece, marked by `pair_label`."""
    scores = np.asarray(scores, dtype=np.float64)
    scale = float(np.abs(scores).max()) if scores.size else 0.0
    spans = []
    for i, (piece, s) in enumerate(zip(pieces, scores)):
        if i == pair_at:
            spans.append(f'<b style="color:#2a9d8f;border-left:2px dashed #2a9d8f;padding-left:4px">'
                         f'{escape_html(pair_label)}</b>')
        fg = "white" if scale and abs(s) / scale > 0.6 else "black"
        spans.append(f'<span title="{s:+.4f}" style="background:{colour(s, scale)};color:{fg};'
                     f'padding:2px 3px;margin:1px;border-radius:3px;display:inline-block">{escape_html(piece)}</span>')
    body = (f"<div style='font-family:sans-serif;line-height:2'>"
            + (f"<h3>{escape_html(title)}</h3>" if title else "") + " ".join(spans)
            + (f"<p style='font-size:small'>{escape_html(legend)}</p>" if legend else "") + "</div>")
    if not standalone:
        return body
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape_html(title or 'attributions')}"
            f"</title></head><body>{body}</body></html>")
