"""Dropout renderers: MC samples next to the eval point, and one sample's mask."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import figure

SAMPLE, KEPT, DROPPED, BEFORE = "#457b9d", "#264653", "#e76f51", "#bbbbbb"


def samples(labels, values: np.ndarray, *, eval_point: np.ndarray, title: str, x_title: str, y_title: str,
            sample_name: str, eval_name: str) -> go.Figure:
    """values: (samples, labels) as a strip per label; eval_point: (labels,) as a diamond. Every strip
    has the one colour of its single legend entry."""
    n = len(values)
    traces = [go.Box(x=[str(label)] * n, y=values[:, j], name=sample_name, boxpoints="all", jitter=0.5, pointpos=0,
                     marker_size=4, marker_color=SAMPLE, line_color=SAMPLE, legendgroup="samples",
                     showlegend=j == 0, hovertemplate=f"{esc(label)} ({esc(sample_name)}): %{{y:.4f}}<extra></extra>")
              for j, label in enumerate(labels)]
    traces.append(go.Scatter(x=[str(lab) for lab in labels], y=eval_point, mode="markers", name=eval_name,
                             marker=dict(symbol="diamond", size=14, color="black"),
                             hovertemplate=f"%{{x}} ({esc(eval_name)}): %{{y:.4f}}<extra></extra>"))
    return figure(traces, title, x_title=x_title, y_title=y_title, height=360)


def mask(before: np.ndarray, after: np.ndarray, *, keep: np.ndarray, title: str, x_title: str, y_title: str,
         before_name: str, after_name: str, kept_name: str, dropped_name: str) -> go.Figure:
    """Input vs output of one dropout step per dimension; dropped dimensions show as gaps in 'after',
    marked by a red tick at 0 so the legend names each colour."""
    dims = np.arange(len(before))
    traces = [
        go.Bar(x=dims, y=before, name=before_name, marker_color=BEFORE,
               hovertemplate=f"{esc(before_name)}, {esc(x_title)} %{{x}}: %{{y:.4f}}<extra></extra>"),
        go.Bar(x=dims[keep], y=after[keep], name=f"{after_name}: {kept_name}", marker_color=KEPT,
               hovertemplate=f"{esc(after_name)}, {esc(x_title)} %{{x}}: %{{y:.4f}}<extra></extra>"),
        go.Scatter(x=dims[~keep], y=np.zeros(int((~keep).sum())), mode="markers", name=dropped_name,
                   marker=dict(symbol="line-ns-open", size=10, color=DROPPED),
                   hovertemplate=f"{esc(dropped_name)}, {esc(x_title)} %{{x}}<extra></extra>"),
    ]
    return figure(traces, title, x_title=x_title, y_title=y_title, barmode="overlay", height=320)
