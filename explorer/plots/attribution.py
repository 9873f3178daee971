"""Attribution chart: a sorted bar chart coloured like the highlighted text (explorer/text/highlight.py)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.highlight import NEGATIVE, POSITIVE
from .common import colorbar, figure


def sorted_bars(pieces, scores, *, title: str, x_title: str, y_title: str, top: int = 30,
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
    return figure([bar], title, x_title=x_title, y_title=y_title, height=max(260, 22 * len(order) + 100),
                  margin=dict(l=40, r=10, t=50, b=40))
