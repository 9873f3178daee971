"""Logit renderers: softmax vs sigmoid, and logits of several heads side by side."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import figure


def grouped(labels, series: dict[str, np.ndarray], *, title: str, x_title: str, y_title: str,
            y_range: tuple[float, float] | None = None) -> go.Figure:
    """One bar group per label, one bar per series (e.g. softmax/sigmoid, or one per head)."""
    bars = [go.Bar(x=list(labels), y=np.asarray(values, dtype=float), name=name,
                   text=[f"{v:.3f}" for v in values], textposition="auto",
                   hovertemplate=f"{esc(name)}<br>%{{x}}: %{{y:.4f}}<extra></extra>")
            for name, values in series.items()]
    return figure(bars, title, x_title=x_title, y_title=y_title, barmode="group", height=340,
                  yaxis=dict(range=list(y_range)) if y_range else {})
