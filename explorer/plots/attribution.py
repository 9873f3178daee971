"""Attribution renderers: text highlighted on a diverging scale, and a sorted bar chart."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import html as escape_html
from .common import colorbar, figure

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


def sorted_bars(pieces, scores, title: str, x_title: str, y_title: str, top: int = 30,
                signed: bool = True, pair_at: int | None = None) -> go.Figure:
    """Horizontal bars, largest |score| first (at most `top`), coloured like the highlighted text, with
    a colour bar: diverging around 0 when `signed`, white → blue for unsigned scores (saliency).
    With `pair_at` (text B's first piece), each bar says which text its piece is in (A or B)."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-np.abs(scores), kind="stable")[:top][::-1]  # plotly draws bottom-up
    scale = float(np.abs(scores).max()) if scores.size else 0.0
    scale = scale or 1.0
    white, blue, red = "rgb(255,255,255)", "rgb(%d,%d,%d)" % POSITIVE, "rgb(%d,%d,%d)" % NEGATIVE
    colours = [[0, red], [0.5, white], [1, blue]] if signed else [[0, white], [1, blue]]
    text_of = (lambda i: "") if pair_at is None else (lambda i: " (B)" if i >= pair_at else " (A)")  # noqa: E731
    bar = go.Bar(x=scores[order], y=[f"{pieces[i]}{text_of(i)} #{i}" for i in order], orientation="h",
                 marker=dict(color=scores[order], colorscale=colours, cmin=-scale if signed else 0, cmax=scale,
                             colorbar=colorbar(x_title), line=dict(color="gray", width=0.5)),
                 customdata=order.tolist(),  # each bar's index in `pieces`, for a click (on_select)
                 hovertemplate="%{y}: %{x:+.4f}<extra></extra>")
    return figure([bar], title, x_title, y_title, height=max(260, 22 * len(order) + 100),
                  margin=dict(l=40, r=10, t=50, b=40))
