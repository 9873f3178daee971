"""Logit renderers: softmax vs sigmoid, and logits of several heads side by side."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

_MARGIN = dict(l=60, r=10, t=50, b=40)


def grouped(labels, series: dict[str, np.ndarray], title: str, x_title: str, y_title: str,
            y_range: tuple[float, float] | None = None) -> go.Figure:
    """One bar group per label, one bar per series (e.g. softmax/sigmoid, or one per head)."""
    fig = go.Figure()
    for name, values in series.items():
        fig.add_bar(x=list(labels), y=np.asarray(values, dtype=float), name=name,
                    text=[f"{v:.3f}" for v in values], textposition="auto",
                    hovertemplate=f"{name}<br>%{{x}}: %{{y:.4f}}<extra></extra>")
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, barmode="group", margin=_MARGIN,
                      height=340)
    if y_range:
        fig.update_yaxes(range=list(y_range))
    return fig
