"""Attention renderers: [CLS] rows per layer/head, rollout/flow per layer, highlighted text, mixing."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.text.plain import plotly as esc

from .common import HIGHLIGHT, SEQUENTIAL, boundary, colorbar, figure
from .vectors import ROBUST_PERCENTILE

# Past this many word columns a handful of cells would set the colour scale and leave the rest near white:
# the scale then stops at the ROBUST_PERCENTILE-th percentile of the word cells (scale_caption says so).
LONG_TEXT_TOKENS = 64


def clips(columns: int) -> bool:
    """Whether a heatmap with this many word columns has its colour scale clipped at a percentile."""
    return columns > LONG_TEXT_TOKENS


def _labels(tokens) -> list[str]:
    # Plotly merges equal category labels; the position keeps repeated tokens apart.
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def word_range(values: np.ndarray, special=None) -> float:
    """The top of an attention heatmap's colour scale: the largest cell among the word columns (those not
    `special`, a bool per column). [CLS] reading itself or [SEP] can hold most of a row; were they to set
    the range, every word cell would be drawn near white. Their cells above it take the darkest colour.
    A long text's range (see clips) stops at a percentile of the word cells, for the same reason."""
    values = np.asarray(values, dtype=float)  # (rows, columns)
    words = ~np.asarray(special, dtype=bool) if special is not None else np.ones(values.shape[-1], dtype=bool)
    cells = values[..., words]
    top = 0.0
    if words.any() and values.size:
        top = float(np.percentile(cells, ROBUST_PERCENTILE)) if clips(int(words.sum())) else float(cells.max())
    return top if top > 0 else 1.0


def token_heatmap(values: np.ndarray, tokens, *, rows, title: str, x_title: str, y_title: str,
                  value_name: str, mark_row=None, pair_at: int | None = None, pair_label: str = "",
                  special=None) -> go.Figure:
    """values: (rows, tokens), ≥ 0, on the sequential scale (more = darker) from 0 to the largest word cell
    (`special`: a bool per shown token, the columns that do not set the range; see word_range). `mark_row`
    outlines one row (e.g. the picked layer); `pair_at` marks where text B starts."""
    rows = [str(r) for r in rows]
    trace = dict(type="heatmap", z=np.asarray(values, dtype=float), x=_labels(tokens), y=rows, colorscale=SEQUENTIAL,
                       zmin=0, zmax=word_range(values, special), colorbar=colorbar(value_name),
                       hovertemplate=f"{esc(y_title)} %{{y}}<br>%{{x}}<br>{esc(value_name)}: %{{z:.4f}}<extra></extra>")
    shapes = []
    if mark_row is not None:
        i = rows.index(str(mark_row))
        shapes = [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=i - 0.5, y1=i + 0.5,
                       line=dict(color="#e76f51", width=3))]
    return figure([trace], title, x_title=x_title, y_title=y_title, yaxis=dict(type="category"),
                  height=max(260, 28 * len(rows) + 120), **boundary(pair_at, pair_label, shapes=shapes))


def highlighted_text(methods: dict[str, np.ndarray], tokens, *, title: str, x_title: str, y_title: str,
                     value_name: str, scale_name: str, pair_at: int | None = None, pair_label: str = "",
                     special=None) -> go.Figure:
    """The text as a row of tokens per method, each cell shaded by its share (rows scaled to their largest
    word share, see word_range, so the colour bar reads 0 to 1 of it; the hover gives the share itself)."""
    names = list(methods)
    z = np.array([methods[m] / word_range(methods[m][None], special) for m in names])
    trace = dict(type="heatmap", z=z, x=_labels(tokens), y=names, customdata=np.array([methods[m] for m in names]),
                       colorscale=HIGHLIGHT, zmin=0, zmax=1, colorbar=colorbar(scale_name),
                       text=[list(tokens)] * len(names), texttemplate="%{text}",
                       hovertemplate=f"%{{y}}<br>%{{x}}<br>{esc(value_name)}: %{{customdata:.4f}}<extra></extra>")
    return figure([trace], title, x_title=x_title, y_title=y_title, height=80 * len(names) + 120,
                  **boundary(pair_at, pair_label))


def mixing_lines(off_cls: np.ndarray, cls_mean_cos: np.ndarray, *, title: str, x_title: str, y_title: str,
                 off_name: str, cos_name: str) -> go.Figure:
    """off_cls: (L,) rollout mass away from [CLS] after each layer; cls_mean_cos: (L+1,) from the embeddings."""
    traces = [
        dict(type="scatter", x=list(range(1, len(off_cls) + 1)), y=off_cls, mode="lines+markers", name=off_name,
                   hovertemplate=f"{esc(off_name)}<br>{esc(x_title)} %{{x}}: %{{y:.3f}}<extra></extra>"),
        dict(type="scatter", x=list(range(len(cls_mean_cos))), y=cls_mean_cos, mode="lines+markers", name=cos_name,
                   hovertemplate=f"{esc(cos_name)}<br>{esc(x_title)} %{{x}}: %{{y:.3f}}<extra></extra>"),
    ]
    return figure(traces, title, x_title=x_title, y_title=y_title, height=340,
                  yaxis=dict(range=[min(0.0, float(np.min(cls_mean_cos))) - 0.02, 1.02]))


def tokens_page(a, layer: int, *, head: int | None, hide_special: bool, t) -> dict[str, go.Figure]:
    """Every chart of the tokens page for Analysis `a`. `layer` is 1-based; `head` None means all
    heads; `t(key)` translates. The highlighted text reads the picked layer (and head, when one is
    picked); with one head, the per-layer chart outlines the picked layer. Flow is drawn only when
    the analysis carries it."""
    from explorer.model.tokens import cls_vs_mean, pair_boundary, rollout_off_cls, visible, without_special

    special = a.special if hide_special else (False,) * len(a.tokens)
    toks = visible(a.shown, a.special, hide_special)
    shown_special = visible(a.special, a.special, hide_special)  # the special columns still drawn (none when hidden)
    suffix = t("tokens.renormalised") if hide_special else ""
    att = without_special(a.cls_attention, special)  # (L, H, kept)
    value, share, tok_axis, layer_axis = t("tokens.attention"), t("tokens.share"), t("tokens.token_axis"), t("tokens.layer_axis")
    layers = range(1, att.shape[0] + 1)
    pair = dict(pair_at=pair_boundary(a.segments, special), pair_label=t("arch.boundary"), special=shown_special)
    if head is None:
        cls = token_heatmap(att[layer - 1], toks, rows=range(att.shape[1]),
                            title=t("tokens.cls_heads_title", layer=layer) + suffix,
                            x_title=tok_axis, y_title=t("tokens.head_axis"), value_name=value, **pair)
        raw, raw_name = att[layer - 1].mean(axis=0), t("tokens.raw_mean")
    else:
        cls = token_heatmap(att[:, head], toks, rows=layers, title=t("tokens.cls_layers_title", head=head) + suffix,
                            x_title=tok_axis,
                            y_title=layer_axis, value_name=value, mark_row=layer, **pair)
        raw, raw_name = att[layer - 1, head], t("tokens.raw_head", head=head)
    roll = without_special(a.cls_rollout, special)  # (L, kept)
    figs = {"cls": cls, "rollout": token_heatmap(roll, toks, rows=layers, title=t("tokens.rollout_title") + suffix,
                                                 x_title=tok_axis,
                                                 y_title=layer_axis, value_name=share, mark_row=layer, **pair)}
    methods = {raw_name: raw, t("tokens.rollout"): roll[layer - 1]}
    if a.flow is not None:
        fl = without_special(a.flow, special)
        figs["flow"] = token_heatmap(fl, toks, rows=layers, title=t("tokens.flow_title") + suffix, x_title=tok_axis,
                                     y_title=layer_axis, value_name=share,
                                     mark_row=layer, **pair)
        methods[t("tokens.flow")] = fl[layer - 1]
    figs["highlight"] = highlighted_text(methods, toks, title=t("tokens.highlight_title", layer=layer) + suffix,
                                         x_title=tok_axis,
                                         y_title=t("tokens.method_axis"), value_name=share,
                                         scale_name=t("tokens.of_row_max"), **pair)
    figs["mixing"] = mixing_lines(rollout_off_cls(a.cls_rollout), cls_vs_mean(a.hidden_states),
                                  title=t("tokens.mixing_title"),
                                  x_title=layer_axis, y_title=t("tokens.mixing_axis"), off_name=t("tokens.off_cls"),
                                  cos_name=t("tokens.cls_mean_cos"))
    return figs


def scale_caption(hide_special: bool, t, *, columns: int = 0) -> str:
    """What an attention heatmap's colours are read against: the words alone (special tokens hidden, rows
    renormalised) or every token with the scale set by the word cells (word_range); for a long text
    (`columns` tokens drawn, see clips) also the percentile the scale stops at."""
    said = t("heatmap.hidden") if hide_special else t("heatmap.word_scale")
    return f"{said} {t('heatmap.clipped', p=f'{ROBUST_PERCENTILE:g}')}" if clips(columns) else said
