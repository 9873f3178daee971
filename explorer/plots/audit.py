"""Renderers for the label audit: a clickable confusion matrix and the projector scatter."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import SEQUENTIAL, colorbar, figure


def confusion_cells(counts, rows, *, cols, title: str, x_title: str, y_title: str, count_name: str) -> go.Figure:
    """The confusion matrix as one square marker per cell, so a click selects a cell (Streamlit
    reports point selections, not heatmap clicks). customdata is (row index, column index)."""
    counts = np.asarray(counts)
    r, c = np.indices(counts.shape)
    r, c = r.ravel(), c.ravel()
    side = max(len(rows), len(cols))
    cells = go.Scatter(
        x=[cols[j] for j in c], y=[rows[i] for i in r], mode="markers+text", text=counts.ravel().tolist(),
        customdata=np.stack([r, c], 1).tolist(),
        marker=dict(symbol="square", size=max(10, min(44, 520 // side)),  # cells must not overlap: a click hits one
                    color=counts.ravel().tolist(), colorscale=SEQUENTIAL,
                    cmin=0, cmax=max(int(counts.max()), 1), colorbar=colorbar(count_name),
                    line=dict(width=1, color="#888")),
        textfont=dict(color=["white" if v > counts.max() / 2 else "black" for v in counts.ravel()]),
        hovertemplate=f"{esc(y_title)}: %{{y}}<br>{esc(x_title)}: %{{x}}<br>{esc(count_name)}: %{{text}}<extra></extra>")
    return figure([cells], title, x_title=x_title, y_title=y_title, height=110 + 56 * len(rows),
                  yaxis=dict(autorange="reversed", type="category", categoryorder="array", categoryarray=list(rows)),
                  xaxis=dict(type="category", categoryorder="array", categoryarray=list(cols)))


def projection(xy: np.ndarray, groups: list[str], *, texts: list[str], rows, title: str, legend: str) -> go.Figure:
    """One scatter trace per group (a legend entry each); the hover shows the row and its text."""
    groups = np.asarray(groups, dtype=object)
    traces = []
    for g in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == g)
        traces.append(go.Scattergl(
            x=xy[idx, 0].tolist(), y=xy[idx, 1].tolist(), mode="markers", name=str(g),
            marker=dict(size=6, opacity=0.75), customdata=[int(rows[i]) for i in idx],
            text=[texts[i][:140] for i in idx],
            hovertemplate="row %{customdata}<br>%{text}<extra>" + esc(g) + "</extra>"))
    fig = figure(traces, title, x_title="", y_title="", height=480, legend=dict(title=dict(text=legend)))
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return fig
