"""Figures for the lesson's live panels."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import DIVERGING, boundary, colorbar, figure

_MARGIN = dict(l=50, r=10, t=50, b=50)


def similarity_lines(series: dict[str, np.ndarray], names: dict[str, str], *, title: str, x_title: str,
                     y_title: str) -> go.Figure:
    """series: {key: (layers+1,)}; layer 0 is the embedding layer."""
    traces = [go.Scatter(x=list(range(len(values))), y=values, mode="lines+markers", name=names[key],
                         hovertemplate=f"{esc(names[key])}<br>{esc(x_title)} %{{x}}: %{{y:.3f}}<extra></extra>")
              for key, values in series.items()]
    return figure(traces, title, x_title=x_title, y_title=y_title, height=340, margin=_MARGIN,
                  yaxis=dict(range=[-1, 1]))


def parameter_bars(counts: dict[str, int], names: dict[str, str], *, title: str, x_title: str,
                   y_title: str) -> go.Figure:
    bar = go.Bar(x=[names[k] for k in counts], y=list(counts.values()), text=[f"{v:,}" for v in counts.values()],
                 textposition="auto", hovertemplate="%{x}: %{y:,}<extra></extra>")
    # a tick per power of ten only: plotly labels the 2…9 between them too, and on a projector they overlap
    return figure([bar], title, x_title=x_title, y_title=y_title, height=340, margin=_MARGIN,
                  yaxis=dict(type="log", dtick=1))


def token_label_heatmap(scores: np.ndarray, tokens, *, labels, title: str, x_title: str, y_title: str,
                        value_name: str, pair_at: int | None = None, pair_label: str = "") -> go.Figure:
    """scores: (seq, labels), signed: diverging and centred on 0."""
    lim = float(np.abs(scores).max()) or 1.0
    heat = go.Heatmap(z=scores.T, x=[f"{i}:{tok}" for i, tok in enumerate(tokens)], y=list(labels),
                      colorscale=DIVERGING, zmin=-lim, zmax=lim, colorbar=colorbar(value_name),
                      hovertemplate=f"%{{x}}<br>{esc(y_title)} %{{y}}: %{{z:.3f}}<extra></extra>")
    return figure([heat], title, x_title=x_title, y_title=y_title, height=260, margin=_MARGIN,
                  **boundary(pair_at, pair_label))


def cls_by_layer(a, t) -> go.Figure:
    """An analysis' [CLS] attention per layer, mean over heads, to the words only: (layers, words), each row
    renormalised over the words (explorer.plots.attention.scale_caption(True, t) says so under it);
    `t` translates the titles."""
    from explorer.model.tokens import pair_boundary, visible, without_special

    from .attention import token_heatmap

    p = "lesson.panel."
    layers = a.cls_attention.shape[0]
    return token_heatmap(without_special(a.cls_attention.mean(axis=1), a.special), visible(a.shown, a.special, True),
                         rows=range(1, layers + 1), title=t(p + "enc_title") + t("tokens.renormalised"),
                         x_title=t(p + "token"),
                         y_title=t(p + "layer"), value_name=t(p + "attention"),
                         pair_at=pair_boundary(a.segments, a.special),
                         pair_label=t("arch.boundary"))
