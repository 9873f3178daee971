"""Vector renderers: pooled vectors as strips and histograms, their cosines, and the head's size."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

_MARGIN = dict(l=90, r=10, t=50, b=40)


def strips(vectors: dict[str, np.ndarray], title: str, x_title: str, y_title: str) -> go.Figure:
    """Every dimension of each vector as one coloured row (same colour scale for all rows)."""
    names = list(vectors)
    width = max(len(v) for v in vectors.values())
    z = np.full((len(names), width), np.nan)
    for i, v in enumerate(vectors.values()):
        z[i, :len(v)] = v
    lim = float(np.nanmax(np.abs(z))) or 1.0
    fig = go.Figure(go.Heatmap(z=z, y=names, colorscale="RdBu", zmid=0, zmin=-lim, zmax=lim,
                               hovertemplate="%{y}<br>dim %{x}: %{z:.4f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, margin=_MARGIN, height=300)
    return fig


def histograms(vectors: dict[str, np.ndarray], title: str, x_title: str, y_title: str) -> go.Figure:
    fig = go.Figure()
    for name, v in vectors.items():
        fig.add_histogram(x=v, name=name, opacity=0.6, nbinsx=60,
                          hovertemplate=f"{name}<br>%{{x}}: %{{y}}<extra></extra>")
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, barmode="overlay",
                      margin=_MARGIN, height=300)
    return fig


def cosine_heatmap(names, matrix: np.ndarray, title: str) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=matrix, x=list(names), y=list(names), zmin=-1, zmax=1, colorscale="RdBu",
                               text=np.round(matrix, 3), texttemplate="%{text}",
                               hovertemplate="%{y} · %{x}: %{z:.4f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="", yaxis_title="", margin=_MARGIN, height=320)
    return fig


def head_size(rows: list[dict], lm_params: int, lm_name: str, title: str, x_title: str, y_title: str,
              pretrained_name: str, new_name: str) -> go.Figure:
    """Parameters per linear layer of the head (coloured by origin) next to an LM head, log scale."""
    fig = go.Figure()
    for flag, name, color in ((True, pretrained_name, "#2a9d8f"), (False, new_name, "#e76f51")):
        part = [r for r in rows if r["params"] and r["pretrained"] is flag]
        fig.add_bar(x=[f"{r['step']} ({r['shape']})" for r in part], y=[r["params"] for r in part], name=name,
                    marker_color=color, hovertemplate="%{x}: %{y:,} params<extra></extra>")
    fig.add_bar(x=[lm_name], y=[lm_params], name=lm_name, marker_color="#999",
                hovertemplate="%{x}: %{y:,} params<extra></extra>")
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, margin=_MARGIN, height=340)
    fig.update_yaxes(type="log")
    return fig
