"""Dropout renderers: MC samples next to the eval point, and one sample's mask."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

_MARGIN = dict(l=60, r=10, t=50, b=40)


def samples(labels, values: np.ndarray, eval_point: np.ndarray, title: str, x_title: str, y_title: str,
            sample_name: str, eval_name: str) -> go.Figure:
    """values: (samples, labels) as a strip per label; eval_point: (labels,) as a diamond."""
    fig = go.Figure()
    for j, label in enumerate(labels):
        fig.add_box(y=values[:, j], name=str(label), boxpoints="all", jitter=0.5, pointpos=0, marker_size=4,
                    legendgroup=sample_name, showlegend=j == 0, offsetgroup="s",
                    hovertemplate=f"{label} ({sample_name}): %{{y:.4f}}<extra></extra>")
    fig.add_scatter(x=[str(lab) for lab in labels], y=eval_point, mode="markers", name=eval_name,
                    marker=dict(symbol="diamond", size=14, color="black"),
                    hovertemplate=f"%{{x}} ({eval_name}): %{{y:.4f}}<extra></extra>")
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, margin=_MARGIN, height=360)
    return fig


def mask(before: np.ndarray, after: np.ndarray, keep: np.ndarray, title: str, x_title: str, y_title: str,
         before_name: str, after_name: str) -> go.Figure:
    """Input vs output of one dropout step per dimension; dropped dimensions show as gaps in 'after'."""
    dims = np.arange(len(before))
    fig = go.Figure()
    fig.add_bar(x=dims, y=before, name=before_name, marker_color="#bbb",
                hovertemplate=f"{before_name} dim %{{x}}: %{{y:.4f}}<extra></extra>")
    fig.add_bar(x=dims, y=after, name=after_name, marker_color=np.where(keep, "#264653", "#e76f51"),
                customdata=keep, hovertemplate=f"{after_name} dim %{{x}}: %{{y:.4f}} kept=%{{customdata}}<extra></extra>")
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, barmode="overlay", margin=_MARGIN,
                      height=320)
    return fig
