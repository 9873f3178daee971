"""Renderers shared by several pages."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def label_bars(labels, values, title: str, x_title: str, y_title: str, fmt: str = ".4f",
               y_range: tuple[float, float] | None = None) -> go.Figure:
    """One bar per label, value printed on the bar and in the hover."""
    values = np.asarray(values, dtype=float)
    fig = go.Figure(go.Bar(
        x=list(labels), y=values, text=[format(v, fmt) for v in values], textposition="auto",
        hovertemplate=f"%{{x}}: %{{y:{fmt}}}<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=320,
                      margin=dict(l=40, r=10, t=50, b=40))
    if y_range:
        fig.update_yaxes(range=list(y_range))
    return fig
