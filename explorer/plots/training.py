"""Renderers for data and fine-tuning results: confusion matrices and training curves."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import SEQUENTIAL, colorbar, figure


def confusion_heatmap(counts, rows, *, cols, title: str, x_title: str, y_title: str, count_name: str) -> go.Figure:
    """Counts per (true row, predicted column), each cell labelled and in the hover; more = darker."""
    counts = np.asarray(counts)
    heat = go.Heatmap(z=counts.tolist(), x=list(cols), y=list(rows), colorscale=SEQUENTIAL, zmin=0,
                      colorbar=colorbar(count_name), text=counts.tolist(), texttemplate="%{text}",
                      hovertemplate=f"{esc(y_title)}: %{{y}}<br>{esc(x_title)}: %{{x}}<br>{esc(count_name)}: %{{z}}<extra></extra>")
    return figure([heat], title, x_title=x_title, y_title=y_title, height=360, margin=dict(l=60, r=10, t=50, b=50),
                  yaxis=dict(autorange="reversed", type="category"), xaxis=dict(type="category"))


def training_curves(history: list[dict], names: dict[str, str], *, title: str, x_title: str, y_title: str,
                    kept: int = 0, kept_name: str = "") -> go.Figure:
    """One line per key of `names` ({history key: legend name}) over the epochs, where the history has
    it; a dashed vertical line named `kept_name` at epoch `kept` (0: none yet)."""
    epochs = [h["epoch"] for h in history]
    lines = [go.Scatter(x=epochs, y=[h.get(key) for h in history], mode="lines+markers", name=name,
                        hovertemplate=f"{esc(x_title)} %{{x}}<br>{esc(name)}: %{{y:.4f}}<extra></extra>")
             for key, name in names.items() if any(key in h for h in history)]
    fig = figure(lines, title, x_title=x_title, y_title=y_title, height=320, margin=dict(l=40, r=10, t=50, b=40))
    if kept:
        fig.add_vline(x=kept, line_dash="dash", line_color="grey", annotation_text=kept_name,
                      annotation_position="top")
    return fig
