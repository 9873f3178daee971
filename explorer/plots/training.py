"""Renderers for data and fine-tuning results: confusion matrices and training curves."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def confusion_heatmap(counts, rows, cols, title: str, x_title: str, y_title: str) -> go.Figure:
    """Counts per (true row, predicted column), each cell labelled and in the hover."""
    counts = np.asarray(counts)
    fig = go.Figure(go.Heatmap(
        z=counts.tolist(), x=list(cols), y=list(rows), colorscale="Blues", text=counts.tolist(), texttemplate="%{text}",
        hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>count: %{{z}}<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=360,
                      margin=dict(l=60, r=10, t=50, b=50))
    fig.update_yaxes(autorange="reversed")
    return fig


def training_curves(history: list[dict], title: str, x_title: str, y_title: str, metric: str | None = None) -> go.Figure:
    """Training and validation loss per epoch, plus one validation metric when given."""
    epochs = [h["epoch"] for h in history]
    fig = go.Figure()
    for key in ("loss", "val_loss") + ((metric,) if metric else ()):
        fig.add_trace(go.Scatter(x=epochs, y=[h.get(key) for h in history], mode="lines+markers", name=key,
                                 hovertemplate=f"epoch %{{x}}<br>{key}: %{{y:.4f}}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=320,
                      margin=dict(l=40, r=10, t=50, b=40))
    return fig
