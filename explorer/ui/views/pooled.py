"""The Pooled vector page (pages/pooled.py): the vector a sentence head reads (against the other poolings) and
how small the head is; for a token classifier, every token's vector and the head applied to each."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer import plots
from explorer.explain import vectors
from explorer.model.analysis import Analysis
from explorer.model.token_analysis import TokenAnalysis
from explorer.model.tokens import reads_line
from explorer.ui import checkpoint, current_head, draw_chart, draw_table, headers, plain, selection, step_label, t
from explorer.ui.classifier import current_token_encoder


def draw_pooled(a: Analysis | TokenAnalysis) -> None:
    """The Pooled vector page for the sidebar's analysis, whichever kind of classifier it is."""
    if isinstance(a, TokenAnalysis):
        _draw_token_vectors(a)
    else:
        _draw_pooled_vector(a)


def _draw_pooled_vector(a: Analysis) -> None:
    """The pooled vector beside the other poolings (strips, histograms, how alike), then the head's steps and
    size against a language-model head."""
    sel = selection()
    name, seed = sel.name, sel.seed
    hd = current_head()
    vecs = vectors.vectors(a)
    shown = {t(f"pooled.v_{k.replace(' ', '_')}"): v for k, v in vecs.items()}
    st.plotly_chart(plots.vectors.strips(shown, t("pooled.strips_title"), x_title=t("pooled.dim_axis"),
                                         y_title=t("pooled.vector_axis"),
                                         value_name=t("pooled.value_axis")), key="pooled_strips")
    st.caption(t("pooled.strips_range", pct=f"{plots.vectors.ROBUST_PERCENTILE:g}",
                 lim=f"{plots.vectors.robust_limit(np.stack(list(vecs.values()))):.3f}"))
    left, right = st.columns(2)
    left.plotly_chart(plots.vectors.histograms(shown, t("pooled.hist_title"), x_title=t("pooled.value_axis"),
                                               y_title=t("pooled.count_axis")), key="pooled_hist")
    right.plotly_chart(plots.vectors.cosine_heatmap(list(shown), vectors.cosine_matrix(vecs),
                                                    title=t("pooled.cos_title"), value_name=t("pooled.cosine")),
                       key="pooled_cos")
    st.subheader(t("pooled.head_title", kind=hd.kind))
    st.caption(" → ".join(step_label(s.name) for s in hd.steps))
    st.caption(reads_line(a, t, plain))
    rows = vectors.head_rows(hd)
    yes_no = {True: t("pooled.yes"), False: t("pooled.no"), None: ""}
    shown_rows = [{"step": step_label(r["step"]), "shape": r["shape"], "params": r["params"],
                   "pretrained": yes_no[r["pretrained"]]} for r in rows]
    draw_table(headers(shown_rows, "pooled.col_"))
    cfg = checkpoint(name, seed).model.config
    lm = vectors.lm_head_params(cfg.vocab_size, hd.hidden_size)
    total = sum(r["params"] for r in rows)
    st.plotly_chart(plots.vectors.head_size(rows, lm,
                                            lm_name=t("pooled.lm_head", vocab=cfg.vocab_size, hidden=hd.hidden_size),
                                            title=t("pooled.size_title"), x_title=t("pooled.layer_axis"),
                                            y_title=t("pooled.params_axis"),
                                            pretrained_name=t("pooled.pretrained"), new_name=t("pooled.new")),
                                            key="pooled_size")
    st.info(t("pooled.size_note", head=f"{total:,}", lm=f"{lm:,}", ratio=f"{lm / max(total, 1):,.0f}"))
    if hd.new_parameters:
        st.warning(t("pooled.new_params", names=plain(", ".join(hd.new_parameters)), seed=seed), icon="⚠️")
    else:
        st.success(t("pooled.all_pretrained"))


MAX_STRIPS = 64  # tokens drawn as strips: a longer text shows its first ones (the caption says how many)


def _names(shown) -> list[str]:
    return [f"{i}:{tok}" for i, tok in enumerate(shown)]  # the position keeps repeated tokens apart


def _draw_token_vectors(a: TokenAnalysis) -> None:
    """The vectors a token head reads: the last layer's vector of every token, as strips and how alike
    they are, then the head that turns each into that token's logits."""
    e = current_token_encoder()
    if e is None:
        return
    st.info(t("tokenpages.pooled_intro", n=len(e.shown), labels=len(a.labels)))
    last = e.hidden_states[-1][:MAX_STRIPS]  # (tokens, hidden)
    vecs = dict(zip(_names(e.shown), last))
    draw_chart(plots.vectors.strips(vecs, t("tokenpages.strips_title"), x_title=t("pooled.dim_axis"),
                                    y_title=t("tokenpages.token_axis"),
                               value_name=t("pooled.value_axis")), "pooled_token_strips")
    if len(e.shown) > MAX_STRIPS:
        st.caption(t("tokenpages.first_tokens", shown=MAX_STRIPS, total=len(e.shown)))
    draw_chart(plots.vectors.cosine_heatmap(list(vecs), vectors.cosine_matrix(vecs), title=t("tokenpages.cos_title"),
                                       value_name=t("pooled.cosine")), "pooled_token_cos")
    hd = current_head()
    st.subheader(t("pooled.head_title", kind=hd.kind))
    st.caption(t("tokenpages.head_per_token") + " " + " → ".join(step_label(s.name) for s in hd.steps))
    yes_no = {True: t("pooled.yes"), False: t("pooled.no"), None: ""}
    draw_table(headers([{"step": step_label(r["step"]), "shape": r["shape"], "params": r["params"],
                    "pretrained": yes_no[r["pretrained"]]} for r in vectors.head_rows(hd)], "pooled.col_"))
    return True
