"""The Compare heads page (pages/compare.py): one encoder pass, every head kind on top of it (a token classifier's
heads at one picked token): their steps, logits, predictions and probabilities side by side."""
from __future__ import annotations

import streamlit as st

from explorer import plots, ui
from explorer.explain import compare
from explorer.model.analysis import Analysis
from explorer.model.heads import HEAD_KINDS, kinds_for, native_kind
from explorer.ui import checkpoint, head, selection, step_label, t
from explorer.ui.classifier import PickedToken


def draw_compare(a: Analysis | PickedToken) -> None:
    """Every head kind the checkpoint can carry, run on the vector `a` gives the head."""
    sel = selection()
    name, seed = sel.name, sel.seed
    kinds = kinds_for(checkpoint(name, seed)) if isinstance(a, PickedToken) else HEAD_KINDS  # a token's heads: its own, linear-per-token
    results = compare.compare_heads(a.hidden_states[-1], {k: head(name, k, seed) for k in kinds}, labels=a.labels,
                                    ptype=a.problem_type, token_ids=a.token_ids)
    own = native_kind(checkpoint(name, seed)) or ""
    names = {r.kind: r.kind + (t("compare.own_mark") if r.kind == own else "") + ("" if r.new_parameters else " ✓")
             for r in results}
    untrained = [r.kind for r in results if r.new_parameters]
    if untrained:  # first: it says which of the numbers below mean nothing yet
        st.warning(t("compare.untrained_note", kinds=", ".join(untrained), seed=seed), icon="⚠️")
    st.dataframe([{
        t("compare.col_head"): names[r.kind],
        t("compare.col_steps"): " → ".join(map(step_label, r.steps)),
        t("compare.col_logits"): ", ".join(f"{v:.3f}" for v in r.logits),
        t("compare.col_pred"): ui.prediction(r.predicted),
        t("compare.col_trained"): t("compare.trained") if not r.new_parameters else t("compare.untrained"),
    } for r in results], hide_index=True)
    st.plotly_chart(plots.logits.grouped(a.labels, {names[r.kind]: r.logits for r in results},
                                         title=t("compare.logits_title"), x_title=t("compare.label_axis"),
                                         y_title=t("compare.logit_axis")),
                    key="compare_logits")
    st.plotly_chart(plots.logits.grouped(a.labels, {names[r.kind]: r.probs for r in results},
                                         title=t("compare.probs_title"), x_title=t("compare.label_axis"),
                                         y_title=t("compare.prob_axis")),
                    key="compare_probs")
