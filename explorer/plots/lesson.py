"""Figures for the lesson's live panels."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int = 340) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=height,
                      margin=dict(l=50, r=10, t=50, b=50))
    return fig


def similarity_lines(series: dict[str, np.ndarray], names: dict[str, str], title: str, x_title: str,
                     y_title: str) -> go.Figure:
    """series: {key: (layers+1,)}; layer 0 is the embedding layer."""
    fig = go.Figure()
    for key, values in series.items():
        fig.add_trace(go.Scatter(x=list(range(len(values))), y=values, mode="lines+markers", name=names[key],
                                 hovertemplate=f"{names[key]}<br>{x_title} %{{x}}: %{{y:.3f}}<extra></extra>"))
    fig.update_yaxes(range=[-1, 1])
    return _layout(fig, title, x_title, y_title)


def parameter_bars(counts: dict[str, int], names: dict[str, str], title: str, x_title: str,
                   y_title: str) -> go.Figure:
    fig = go.Figure(go.Bar(x=[names[k] for k in counts], y=list(counts.values()),
                           text=[f"{v:,}" for v in counts.values()], textposition="auto",
                           hovertemplate="%{x}: %{y:,}<extra></extra>"))
    fig.update_yaxes(type="log")
    return _layout(fig, title, x_title, y_title)


def token_label_heatmap(scores: np.ndarray, tokens, labels, title: str, x_title: str, y_title: str) -> go.Figure:
    """scores: (seq, labels)."""
    fig = go.Figure(go.Heatmap(
        z=scores.T, x=[f"{i}:{tok}" for i, tok in enumerate(tokens)], y=list(labels), colorscale="RdBu",
        zmid=0, hovertemplate=f"%{{x}}<br>{y_title} %{{y}}: %{{z:.3f}}<extra></extra>"))
    return _layout(fig, title, x_title, y_title, height=260)
