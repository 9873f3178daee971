"""Attention renderers: [CLS] rows per layer/head, rollout/flow per layer, highlighted text, mixing."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

_MARGIN = dict(l=60, r=10, t=50, b=40)


def _figure(traces: list[dict], title: str, x_title: str, y_title: str, **layout) -> go.Figure:
    # One dict in and no validation pass (the dicts are fixed by this module and its tests check
    # them): several times faster, and these charts are redrawn on every keystroke in the text box.
    # template "none": st.plotly_chart applies the streamlit theme in the browser anyway, and the
    # default template is most of the serialisation cost.
    base = dict(title=dict(text=title), xaxis=dict(title=dict(text=x_title)), margin=_MARGIN, template="none")
    base["yaxis"] = dict(title=dict(text=y_title), **layout.pop("yaxis", {}))
    return go.Figure(dict(data=traces, layout={**base, **layout}), _validate=False)


def _labels(tokens) -> list[str]:
    # Plotly merges equal category labels; the position keeps repeated tokens apart.
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def token_heatmap(values: np.ndarray, tokens, rows, title: str, x_title: str, y_title: str,
                  value_name: str) -> go.Figure:
    """values: (rows, tokens)."""
    rows = [str(r) for r in rows]
    trace = dict(type="heatmap", z=np.asarray(values, dtype=float), x=_labels(tokens), y=rows, colorscale="Blues",
                 zmin=0, colorbar=dict(title=dict(text=value_name)),
                 hovertemplate=f"{y_title} %{{y}}<br>%{{x}}<br>{value_name}: %{{z:.4f}}<extra></extra>")
    return _figure([trace], title, x_title, y_title, yaxis=dict(type="category"),
                   height=max(260, 28 * len(rows) + 120))


def highlighted_text(methods: dict[str, np.ndarray], tokens, title: str, x_title: str, y_title: str,
                     value_name: str) -> go.Figure:
    """The text as a row of tokens per method, each cell shaded by its share (rows scaled to their max)."""
    names = list(methods)
    z = np.array([methods[m] / (methods[m].max() or 1.0) for m in names])
    trace = dict(type="heatmap", z=z, x=_labels(tokens), y=names, customdata=np.array([methods[m] for m in names]),
                 colorscale="YlOrRd", zmin=0, zmax=1, showscale=False, text=[list(tokens)] * len(names),
                 texttemplate="%{text}", hovertemplate=f"%{{y}}<br>%{{x}}<br>{value_name}: %{{customdata:.4f}}<extra></extra>")
    return _figure([trace], title, x_title, y_title, height=80 * len(names) + 120)


def mixing_lines(off_cls: np.ndarray, cls_mean_cos: np.ndarray, title: str, x_title: str, y_title: str,
                 off_name: str, cos_name: str) -> go.Figure:
    """off_cls: (L,) rollout mass away from [CLS] after each layer; cls_mean_cos: (L+1,) from the embeddings."""
    traces = [
        dict(type="scatter", x=list(range(1, len(off_cls) + 1)), y=off_cls, mode="lines+markers", name=off_name,
             hovertemplate=f"{off_name}<br>{x_title} %{{x}}: %{{y:.3f}}<extra></extra>"),
        dict(type="scatter", x=list(range(len(cls_mean_cos))), y=cls_mean_cos, mode="lines+markers", name=cos_name,
             hovertemplate=f"{cos_name}<br>{x_title} %{{x}}: %{{y:.3f}}<extra></extra>"),
    ]
    return _figure(traces, title, x_title, y_title, height=340,
                   yaxis=dict(range=[min(0.0, float(np.min(cls_mean_cos))) - 0.02, 1.02]))


def tokens_page(a, layer: int, head: int | None, hide_special: bool, t) -> dict[str, go.Figure]:
    """Every chart of the tokens page for Analysis `a`. `layer` is 1-based; `head` None means all
    heads; `t(key)` translates. Flow is drawn only when the analysis carries it."""
    from ..tokens import cls_vs_mean, rollout_off_cls, visible, without_special

    special = a.special if hide_special else (False,) * len(a.tokens)
    toks = visible(a.tokens, a.special, hide_special)
    suffix = t("tokens.renormalised") if hide_special else ""
    att = without_special(a.cls_attention, special)  # (L, H, kept)
    value = t("tokens.attention")
    if head is None:
        cls = token_heatmap(att[layer - 1], toks, range(att.shape[1]), t("tokens.cls_heads_title", layer=layer) + suffix,
                            t("tokens.token_axis"), t("tokens.head_axis"), value)
    else:
        cls = token_heatmap(att[:, head], toks, range(1, att.shape[0] + 1),
                            t("tokens.cls_layers_title", head=head) + suffix, t("tokens.token_axis"),
                            t("tokens.layer_axis"), value)
    roll = without_special(a.cls_rollout, special)  # (L, kept)
    figs = {
        "cls": cls,
        "rollout": token_heatmap(roll, toks, range(1, roll.shape[0] + 1), t("tokens.rollout_title") + suffix,
                                 t("tokens.token_axis"), t("tokens.layer_axis"), t("tokens.share")),
    }
    methods = {t("tokens.raw_last"): att[-1].mean(axis=0), t("tokens.rollout"): roll[-1]}
    if a.flow is not None:
        fl = without_special(a.flow, special)
        figs["flow"] = token_heatmap(fl, toks, range(1, fl.shape[0] + 1), t("tokens.flow_title") + suffix,
                                     t("tokens.token_axis"), t("tokens.layer_axis"), t("tokens.share"))
        methods[t("tokens.flow")] = fl[-1]
    figs["highlight"] = highlighted_text(methods, toks, t("tokens.highlight_title") + suffix, t("tokens.token_axis"),
                                         t("tokens.method_axis"), t("tokens.share"))
    figs["mixing"] = mixing_lines(rollout_off_cls(a.rollout), cls_vs_mean(a.hidden_states), t("tokens.mixing_title"),
                                  t("tokens.layer_axis"), t("tokens.value_axis"), t("tokens.off_cls"),
                                  t("tokens.cls_mean_cos"))
    return figs
