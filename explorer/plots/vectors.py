"""Vector renderers: pooled vectors as strips and histograms, their cosines, and the head's size."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import DIVERGING, colorbar, figure

_MARGIN = dict(l=90, r=10, t=50, b=40)
ROBUST_PERCENTILE = 99.0  # one outlier dimension must not wash out the other 383


def robust_limit(z: np.ndarray) -> float:
    """The colour range ±lim of the strips: the 99th percentile of |value|, so a few outliers saturate
    instead of paling everything else (the page says so)."""
    finite = np.abs(z[np.isfinite(z)])
    return float(np.percentile(finite, ROBUST_PERCENTILE)) if finite.size and finite.max() > 0 else 1.0


def strips(vectors: dict[str, np.ndarray], title: str, *, x_title: str, y_title: str, value_name: str) -> go.Figure:
    """Every dimension of each vector as one coloured row, diverging around 0, on one range for all rows
    (clipped at robust_limit; the hover gives the true value)."""
    names = list(vectors)
    width = max(len(v) for v in vectors.values())
    z = np.full((len(names), width), np.nan)
    for i, v in enumerate(vectors.values()):
        z[i, :len(v)] = v
    lim = robust_limit(z)
    heat = go.Heatmap(z=z, y=names, colorscale=DIVERGING, zmid=0, zmin=-lim, zmax=lim, colorbar=colorbar(value_name),
                      hovertemplate=f"%{{y}}<br>{esc(x_title)} %{{x}}: %{{z:.4f}}<extra></extra>")
    return figure([heat], title, x_title=x_title, y_title=y_title, margin=_MARGIN, height=300)


def histograms(vectors: dict[str, np.ndarray], title: str, *, x_title: str, y_title: str) -> go.Figure:
    """One outlined histogram per vector on shared bins, so a narrow one is not hidden under the others."""
    values = np.concatenate([np.asarray(v, dtype=float) for v in vectors.values()])
    lo, hi = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    size = (hi - lo) / 60 or 1.0
    colours = ("#1f77b4", "#e76f51", "#2a9d8f", "#9467bd")
    bars = [go.Histogram(x=v, name=name, opacity=0.55, xbins=dict(start=lo - size, end=hi + size, size=size),
                         marker=dict(color=colours[i % len(colours)], line=dict(color=colours[i % len(colours)], width=1)),
                         hovertemplate=f"{esc(name)}<br>%{{x}}: %{{y}}<extra></extra>")
            for i, (name, v) in enumerate(vectors.items())]
    return figure(bars, title, x_title=x_title, y_title=y_title, barmode="overlay", margin=_MARGIN, height=300)


def cosine_heatmap(names, matrix: np.ndarray, *, title: str, value_name: str) -> go.Figure:
    """Cosines are signed: diverging, centred on 0, from -1 to 1."""
    heat = go.Heatmap(z=matrix, x=list(names), y=list(names), zmin=-1, zmax=1, zmid=0, colorscale=DIVERGING,
                      colorbar=colorbar(value_name), text=np.round(matrix, 3), texttemplate="%{text}",
                      hovertemplate="%{y} · %{x}: %{z:.4f}<extra></extra>")
    return figure([heat], title, x_title="", y_title="", margin=_MARGIN, height=320)


def head_size(rows: list[dict], lm_params: int, *, lm_name: str, title: str, x_title: str, y_title: str,
              pretrained_name: str, new_name: str) -> go.Figure:
    """Parameters per linear layer of the head (coloured by origin) next to an LM head, log scale."""
    bars = []
    for flag, name, color in ((True, pretrained_name, "#2a9d8f"), (False, new_name, "#e76f51")):
        part = [r for r in rows if r["params"] and r["pretrained"] is flag]
        bars.append(go.Bar(x=[f"{r['step']} ({r['shape']})" for r in part], y=[r["params"] for r in part], name=name,
                           marker_color=color, hovertemplate="%{x}: %{y:,}<extra></extra>"))
    bars.append(go.Bar(x=[lm_name], y=[lm_params], name=lm_name, marker_color="#999",
                       hovertemplate="%{x}: %{y:,}<extra></extra>"))
    return figure(bars, title, x_title=x_title, y_title=y_title, margin=_MARGIN, height=340, yaxis=dict(type="log"))
