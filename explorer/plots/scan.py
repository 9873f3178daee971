"""Renderers for the scan: the reliability diagram (accuracy against the top probability, per bin) and the flip
rate per perturbation."""
from __future__ import annotations

import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import figure


def reliability(bins: list[dict], title: str, *, x_title: str, y_title: str, rows_name: str) -> go.Figure:
    """Each non-empty bin's accuracy (bars at its mean top probability) against the diagonal a calibrated model
    lies on; the hover shows the bin, its rows, confidence and accuracy."""
    bars = go.Bar(x=[b["confidence"] for b in bins], y=[b["accuracy"] for b in bins],
                  width=[(b["hi"] - b["lo"]) * 0.9 for b in bins],
                  customdata=[[b["lo"], b["hi"], b["rows"]] for b in bins],
                  hovertemplate=(f"%{{customdata[0]:.2f}}–%{{customdata[1]:.2f}}<br>{esc(x_title)}: %{{x:.3f}}<br>"
                                 f"{esc(y_title)}: %{{y:.3f}}<br>{esc(rows_name)}: %{{customdata[2]}}<extra></extra>"))
    diagonal = go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dash", color="#888"), hoverinfo="skip",
                          showlegend=False)
    return figure([bars, diagonal], title, x_title=x_title, y_title=y_title, height=360, showlegend=False,
                  xaxis=dict(range=[0, 1]), yaxis=dict(range=[0, 1]))


def flip_rates(robustness: dict, title: str, *, x_title: str, y_title: str, na: str, rows_name: str) -> go.Figure:
    """One bar per perturbation: its flip rate over the rows it changed; a perturbation that changed no row is
    drawn at 0 and named not applicable, so it does not read as a pass."""
    names = list(robustness)
    rates = [robustness[n]["flip_rate"] or 0.0 for n in names]
    labels = [na if robustness[n]["flip_rate"] is None else f"{robustness[n]['flip_rate']:.0%}" for n in names]
    bars = go.Bar(x=names, y=rates, text=labels, textposition="outside",
                  customdata=[robustness[n]["rows"] for n in names],
                  hovertemplate=f"%{{x}}<br>{esc(y_title)}: %{{text}}<br>{esc(rows_name)}: %{{customdata}}<extra></extra>")
    return figure([bars], title, x_title=x_title, y_title=y_title, height=340,
                  yaxis=dict(range=[0, 1.1], tickformat=".0%"))
