"""The Dropout page (pages/dropout.py): what the head's dropout layers would do if they were switched on (a token
classifier's head at one picked token): Monte Carlo samples beside the eval prediction, and one sample's mask."""
from __future__ import annotations

import streamlit as st

from explorer import plots, ui
from explorer.explain import dropout
from explorer.model.problem import ProblemType
from explorer.model.analysis import Analysis
from explorer.ui import current_head, selection, step_label, t, tn
from explorer.ui.classifier import PickedToken


def draw_dropout(a: Analysis | PickedToken) -> None:
    """The samples and one mask for the vector `a` gives the head."""
    hd, seed = current_head(), selection().seed  # the seed also fixes the dropout masks
    ss = st.session_state
    ss.setdefault("dropout_p", round(hd.dropout_p, 2))
    ss.setdefault("dropout_n", 100)
    c1, c2 = st.columns(2)
    p = c1.slider(t("dropout.p"), 0.0, 0.9, step=0.01, **ui.sticky("dropout_p"), help=t("dropout.p_help", p=hd.dropout_p))
    n = c2.slider(t("dropout.n"), 2, 500, step=1, **ui.sticky("dropout_n"))
    where = dropout.dropout_steps(hd)
    st.info(tn("dropout.where", len(where), kind=hd.kind,
               steps=" → ".join(f"**{step_label(s.name)}**" if i in where else step_label(s.name)
                                 for i, s in enumerate(hd.steps))))
    mc = dropout.mc_dropout(hd, a.hidden_states[-1], p=p, samples=n, seed=seed, ptype=a.problem_type,
                            token_ids=a.token_ids)
    left, right = st.columns(2)
    left.plotly_chart(plots.dropout.samples(a.labels, mc.logits, eval_point=mc.eval_logits,
                                            title=t("dropout.logits_title", n=n, p=p),
                                            x_title=t("dropout.label_axis"), y_title=t("dropout.logit_axis"),
                                            sample_name=t("dropout.sample"),
                                            eval_name=t("dropout.eval")), key="dropout_logits")
    right.plotly_chart(plots.dropout.samples(a.labels, mc.probs, eval_point=mc.eval_probs,
                                             title=t("dropout.probs_title", n=n, p=p),
                                             x_title=t("dropout.label_axis"), y_title=t("dropout.prob_axis"),
                                             sample_name=t("dropout.sample"),
                                             eval_name=t("dropout.eval")), key="dropout_probs")
    if a.problem_type != ProblemType.REGRESSION:  # a value is no label: no sample predicts it exactly
        st.caption(t("dropout.agree", share=f"{mc.agreement:.0%}"))
    if not where:  # e.g. decoder-only classifiers: the score layer reads the pooled token directly
        st.info(t("arch.no_dropout"))
        return
    which = 0
    if len(where) > 1:
        which = st.radio(t("dropout.which"), range(len(where)), **ui.sticky("dropout_which", options=range(len(where))),
                         horizontal=True,
                         format_func=lambda i: f"#{i + 1}")
    sample = dropout.mask_sample(hd, a.hidden_states[-1], p=p, seed=seed, which=min(which, len(where) - 1),
                                 token_ids=a.token_ids)
    st.plotly_chart(plots.dropout.mask(sample.before, sample.after, keep=sample.keep,
                                       title=t("dropout.mask_title", step=sample.step), x_title=t("dropout.dim_axis"),
                                       y_title=t("dropout.value_axis"), before_name=t("dropout.before"),
                                       after_name=t("dropout.after"),
                                       kept_name=t("dropout.kept"), dropped_name=t("dropout.dropped")),
                    key="dropout_mask")
    st.caption(t("dropout.scale", dropped=int((~sample.keep).sum()), total=sample.keep.size, p=p,
                 scale=f"{sample.scale:.3f}"))
