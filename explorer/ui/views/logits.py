"""The Logits page (pages/logits.py): one set of numbers, several ways to read them (temperature, softmax and
sigmoid, pipeline()'s reading), and their losses; for a token classifier, logits per token and per layer."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer import plots, ui
from explorer.model import problem as P
from explorer.model.analysis import Analysis
from explorer.model.side_by_side import SideBySide, side_by_side
from explorer.model.token_analysis import TokenAnalysis
from explorer.plots import lesson as lesson_plots
from explorer.plots.token_labels import layer_tag_heatmap
from explorer.text.errors import ExplorerError
from explorer.ui import draw_chart, plain, t
from explorer.ui.views import scan as scan_view
from explorer.ui.views.home import draw_pipeline_readings


def draw_logits(a: Analysis | TokenAnalysis) -> None:
    """The Logits page for the sidebar's analysis, whichever kind of classifier it is."""
    if isinstance(a, TokenAnalysis):
        _draw_token_logits(a)
    else:
        _draw_readings_and_losses(a)


def _draw_readings_and_losses(a: Analysis) -> None:
    """Logits and their probabilities at a temperature, pipeline()'s reading, the loss for a chosen target, the
    single-output trap and BCE's integer-label errors."""
    ss = st.session_state
    ss.setdefault("logits_temperature", 1.0)
    temp = st.slider(t("logits.temperature"), 0.1, 5.0, step=0.1, **ui.sticky("logits_temperature"),
                     help=t("logits.temperature_help"))
    left, right = st.columns(2)
    left.plotly_chart(plots.label_bars(a.labels, a.logits, title=t("logits.logits_title"),
                                       x_title=t("logits.label_axis"),
                                       y_title=t("logits.logit_axis")), key="logits_bar")
    right.plotly_chart(plots.logits.grouped(
        a.labels, {"softmax": P.softmax(a.logits, temp), "sigmoid": P.sigmoid(a.logits, temp)},
        title=t("logits.probs_title", temp=temp), x_title=t("logits.label_axis"), y_title=t("logits.prob_axis"),
        y_range=(0, 1)),
        key="logits_probs")
    st.caption(t("logits.probs_help", sm=f"{P.softmax(a.logits, temp).sum():.4f}",
                 sg=f"{P.sigmoid(a.logits, temp).sum():.4f}"))
    st.subheader(t("pipeline.title"))
    draw_pipeline_readings(a)
    draw_side_by_side(a)

    st.subheader(t("logits.loss_title"))
    want = ss.pop("true_label", None)  # a row opened from the scan: its given label, read once on landing
    if want is not None and want in a.labels:
        ss["logits_ptype"] = a.problem_type
        ss["logits_target_label"], ss["logits_target_picked"] = a.labels.index(want), True
    ss.setdefault("logits_ptype", a.problem_type)
    ptype = st.selectbox(t("logits.ptype"), P.PROBLEM_TYPES, **ui.sticky("logits_ptype"),
                         format_func=lambda p: f"{p} → {P.ProblemType(p).loss_name}")
    n = len(a.labels)
    if ptype == P.ProblemType.SINGLE:
        # The true label follows the prediction until the user picks one: a fixed first label would
        # show a large loss for a text the model gets right.
        if not ss.get("logits_target_picked") or ss.get("logits_target_label", 0) >= n:
            ss["logits_target_label"] = int(np.argmax(a.logits))
        target = st.selectbox(t("logits.target_label"), range(n), **ui.sticky("logits_target_label"),
                              format_func=lambda i: a.labels[i], help=t("logits.target_help"),
                              on_change=lambda: ss.update(logits_target_picked=True))
    elif ptype == P.ProblemType.MULTI:
        ss["logits_target_multi"] = [x for x in ss.get("logits_target_multi", []) if x in a.labels]
        on = st.multiselect(t("logits.target_multi"), a.labels, placeholder=t("app.choose_options"),
                            **ui.sticky("logits_target_multi"))
        target = np.array([float(lab in on) for lab in a.labels])
    else:
        ss.setdefault("logits_target_value", 1.0)
        target = np.full(n, st.number_input(t("logits.target_value"), step=0.1, **ui.sticky("logits_target_value")))
    st.metric(P.ProblemType(ptype).loss_name, f"{P.loss(a.logits, target, ptype):.4f}")
    st.caption(t(f"logits.loss_{ptype}"))

    st.subheader(t("logits.trap_title"))
    ss.setdefault("logits_trap_target", 1.0)
    z = float(a.logits[0])
    y = st.number_input(t("logits.trap_target"), step=0.1, **ui.sticky("logits_trap_target"))
    default, regress = P.single_output_trap(z, y), P.single_output_trap(z, y, P.ProblemType.REGRESSION)
    c1, c2, c3 = st.columns(3)
    c1.metric(t("logits.trap_loss"), f"{default['loss']:.4f}")
    c2.metric(t("logits.trap_pipeline"), f"{default['pipeline_score']:.4f}")
    c3.metric(t("logits.trap_pipeline_reg"), f"{regress['pipeline_score']:.4f}")
    st.caption(t("logits.trap_help", z=f"{z:.4f}", y=y))

    st.subheader(t("logits.bce_title"))
    ss["logits_bce_label"] = min(ss.get("logits_bce_label", 0), n - 1)
    k = st.selectbox(t("logits.bce_label"), range(n), **ui.sticky("logits_bce_label"), format_func=lambda i: a.labels[i])
    errors = P.bce_integer_label_errors(a.logits, k)
    st.code(f"BCEWithLogitsLoss()(logits  # shape (1, {n})\n"
            f"                  , torch.tensor([{k}]))\n→ {errors['shape']}\n\n"
            f"BCEWithLogitsLoss()(logits, one_hot(torch.tensor([{k}]), {n}))  # int64\n→ {errors['dtype']}",
            language="python")
    fixed = P.loss(a.logits, np.eye(n)[k], P.ProblemType.MULTI)
    st.caption(t("logits.bce_help", loss=f"{fixed:.4f}"))


def draw_side_by_side(a: Analysis) -> None:
    """The sidebar's checkpoint next to another one on the same text (a "compare with" pick of its own, which a
    row opened from a scan against a baseline sets to the scan's baseline): both checkpoints' logits and scores
    per label id, the baseline read through its own head."""

    sel = ui.selection()
    with st.expander(t("side_by_side.title"), expanded=bool(st.session_state.get(scan_view.BESIDE)),
                     icon=":material/compare_arrows:"):
        name = scan_view.draw_baseline_picker(sel.name, key=scan_view.BESIDE)
        if name is None:
            st.caption(t("side_by_side.intro"))
            return
        try:
            pair = side_by_side(a, ui.analysis(name, "own", sel.text, sel.seed, text_pair=sel.text_pair))
        except ExplorerError as err:
            ui.show_error(err)
            return
        draw_side_by_side_numbers(pair)


def draw_side_by_side_numbers(pair: SideBySide) -> None:
    """Two checkpoints' scores per label id (grouped bars), their top labels in words, and the table of logits and
    scores, names first where the two id2label differ."""
    names = [b if b == a else f"{b} / {a}" for b, a in zip(pair.labels, pair.baseline_labels)]
    draw_chart(plots.logits.grouped(names, {pair.checkpoint: pair.scores, pair.baseline: pair.baseline_scores},
                                    title=t("side_by_side.chart", function=pair.functions),
                                    x_title=t("logits.label_axis"), y_title=t("side_by_side.score_axis")),
               "side_by_side")
    st.caption(t("side_by_side.top", name=plain(pair.checkpoint), b=plain(pair.labels[pair.predicted]),
                 pb=f"{pair.scores[pair.predicted]:.4f}", baseline=plain(pair.baseline),
                 a=plain(pair.baseline_labels[pair.baseline_predicted]),
                 pa=f"{pair.baseline_scores[pair.baseline_predicted]:.4f}"))
    if pair.renamed:
        st.warning(t("side_by_side.renamed", baseline=plain(pair.baseline), name=plain(pair.checkpoint)))
    columns = ((pair.checkpoint, ""), (pair.baseline, "baseline_"))
    ui.draw_table([{"id": r["id"], **{t(f"side_by_side.{what}", name=name): value(r[key + what])
                                      for name, key in columns for what, value in
                                      (("label", str), ("logit", "{:.4f}".format), ("score", "{:.4f}".format))},
                    t("side_by_side.difference"): f"{r['difference']:+.4f}"} for r in pair.rows()])


def _draw_token_logits(a: TokenAnalysis) -> None:
    """Every token's logits (token × label) and the head read out at every layer for every token."""
    draw_chart(lesson_plots.token_label_heatmap(a.logits, a.shown, labels=a.labels, title=t("tokenhead.logits_title"),
                                                x_title=t("tokenhead.token_axis"), y_title=t("tokenhead.label_axis"),
                                                value_name=t("tokenhead.logit_axis")), "tokenhead_logits")
    draw_chart(layer_tag_heatmap(a.shown, a.labels, layer_logits=a.layer_logits, title=t("tokenhead.layers_title"),
                                 token_axis=t("tokenhead.token_axis"), layer_axis=t("tokenhead.layer_axis"),
                                 bar_title=t("tokenhead.prob_axis")), "tokenhead_layers")
    st.caption(t("tokenhead.layers_help"))
    return True
