"""Pooled vector: what the head actually reads, and how small the head is."""
import numpy as np
import streamlit as st

from explorer import plots
from explorer.explain import vectors
from explorer.model.tokens import reads_line
from explorer.ui import (checkpoint, current_analysis, current_head, headers, plain, selection, step_label, t, table,
                         token_pages)

st.title(t("pooled.title"))
st.caption(t("pooled.intro"))

a = None if token_pages.pooled() else current_analysis()  # a token classifier: every token's vector
if a is not None:
    sel = selection()
    name, seed = sel.name, sel.seed
    hd = current_head()
    vecs = vectors.vectors(a)
    shown = {t(f"pooled.v_{k.replace(' ', '_')}"): v for k, v in vecs.items()}
    st.plotly_chart(plots.vectors.strips(shown, t("pooled.strips_title"), t("pooled.dim_axis"), t("pooled.vector_axis"),
                                         t("pooled.value_axis")), key="pooled_strips")
    st.caption(t("pooled.strips_range", pct=f"{plots.vectors.ROBUST_PERCENTILE:g}",
                 lim=f"{plots.vectors.robust_limit(np.stack(list(vecs.values()))):.3f}"))
    left, right = st.columns(2)
    left.plotly_chart(plots.vectors.histograms(shown, t("pooled.hist_title"), t("pooled.value_axis"),
                                               t("pooled.count_axis")), key="pooled_hist")
    right.plotly_chart(plots.vectors.cosine_heatmap(list(shown), vectors.cosine_matrix(vecs), t("pooled.cos_title"),
                                                        t("pooled.cosine")),
                       key="pooled_cos")
    st.subheader(t("pooled.head_title", kind=hd.kind))
    st.caption(" → ".join(step_label(s.name) for s in hd.steps))
    st.caption(reads_line(a, t, plain))
    rows = vectors.head_rows(hd)
    yes_no = {True: t("pooled.yes"), False: t("pooled.no"), None: ""}
    shown_rows = [{"step": step_label(r["step"]), "shape": r["shape"], "params": r["params"],
                   "pretrained": yes_no[r["pretrained"]]} for r in rows]
    table(headers(shown_rows, "pooled.col_"))
    cfg = checkpoint(name, seed).model.config
    lm = vectors.lm_head_params(cfg.vocab_size, hd.hidden_size)
    total = sum(r["params"] for r in rows)
    st.plotly_chart(plots.vectors.head_size(rows, lm, t("pooled.lm_head", vocab=cfg.vocab_size, hidden=hd.hidden_size),
                                            t("pooled.size_title"), t("pooled.layer_axis"), t("pooled.params_axis"),
                                            t("pooled.pretrained"), t("pooled.new")), key="pooled_size")
    st.info(t("pooled.size_note", head=f"{total:,}", lm=f"{lm:,}", ratio=f"{lm / max(total, 1):,.0f}"))
    if hd.new_parameters:
        st.warning(t("pooled.new_params", names=plain(", ".join(hd.new_parameters)), seed=seed), icon="⚠️")
    else:
        st.success(t("pooled.all_pretrained"))
