"""Attributions: which tokens drove the chosen label's logit or probability, and can we trust it?"""
import pandas as pd
import streamlit as st

from explorer import ui
from explorer.explain import attribution as attr, cost, faithfulness
from explorer.plots import attribution as attribution_plots
from explorer.text import errors, highlight, plain
from explorer.ui import checkpoint, current_analysis, head, selection, t, token_view

st.title(t("nav.attributions"))
st.caption(t("attributions.intro"))

ss = st.session_state
a = None if token_view.token_attributions() else current_analysis()  # a token classifier: one token, every label
if a is None:
    st.stop()
sel = selection()
name, kind, text, seed = sel.name, sel.head_name, sel.text, sel.seed
ck, hd = checkpoint(name, seed), head(name, kind, seed)  # here: a queued job runs outside the script thread
want = ss.pop("attr_target_label", None)  # a mapping.Target, set by the Label audit page when it opens a row here
if want is not None:
    ss["attr_target"] = a.labels.index(want.label) if want.label in a.labels else -1
    ss["attr_target_note"] = (text, ss["attr_target"], want.note)  # kept past the rerun that follows a run
c1, c2, c3, c4 = st.columns([3, 2, 2, 3])  # wide enough for the longest method name
method = c1.selectbox(t("attributions.method"), attr.METHODS, key="attr_method",
                      format_func=lambda m: t(f"attributions.m_{m}"))
# Sticky: re-sent each run, so the browser redraws "predicted (…)" for this text's prediction (see token_view).
target = c2.selectbox(t("attributions.target"), [-1] + list(range(len(a.labels))), **ui.sticky("attr_target", -1),
                      format_func=lambda i: t("attributions.predicted", label=ui.prediction(a.predicted))
                      if i < 0 else a.labels[i])
note = ss.get("attr_target_note")
if note and note[:2] == (text, target) and note[2]:
    st.info(ui.plain(note[2].message(ui.lang())))
quantity = c3.radio(t("attributions.quantity"), attr.QUANTITIES, key="attr_quantity", horizontal=True,
                    format_func=lambda q: t(f"attributions.q_{q}"))
baseline = c4.selectbox(t("attributions.baseline"), attr.BASELINES, key="attr_baseline",
                        format_func=lambda b: t(f"attributions.b_{b}"), help=t("attributions.baseline_help"))
c1, c2, c3 = st.columns(3)
steps = window = None
if method in attr.INTEGRATED:
    steps = c1.select_slider(t("attributions.steps"), ["auto", 8, 16, 32, 64, 128, 256], key="attr_steps",
                             help=t("attributions.path_help"),
                             format_func=lambda s, auto=t("attributions.auto"): auto if s == "auto" else str(s))
if method == "occlusion":
    window = int(c1.number_input(t("attributions.window"), 1, 16, 1, key="attr_window"))
level = c2.radio(t("attributions.level"), ("token", "word"), key="attr_level", horizontal=True,
                 format_func=lambda lv: t(f"attributions.level_{lv}"))
if a.truncated_tokens:
    st.warning(t("attributions.truncated", max=a.max_length, n=a.truncated_tokens))
if costly := method == "occlusion" and attr.occlusion_is_costly(len(a.tokens), window or 1):
    st.warning(t("attributions.occlusion_cost", n=len(a.tokens) - (window or 1) + 1))
target_index = None if target < 0 else int(target)
n_steps = None if steps in (None, "auto") else int(steps)
params = (name, kind, text, seed, method, target_index, quantity, baseline, n_steps, window, sel.text_pair)
running, stop = t("attributions.running"), t("attributions.stop")
r = ui.memo("attr", params)
if r is None:
    run = st.button(t("attributions.run"), key="attr_run", type="primary")
    heavy = cost.attribution_is_heavy(ck.model.config, method, len(a.tokens), n_steps, window or 1,
                                      device=ck.model.device)  # past one batch
    try:
        r = ui.run_or_queue("attr", params, lambda p: attr.attribute(
            ck, hd, text, method, target_index, quantity, baseline,
            n_steps=n_steps, window=window or 1, progress=p, text_pair=sel.text_pair), running, stop,
            start=run or (not costly and not ui.cancelled("attr", params)), heavy=heavy or costly, expected_s=10,
            size=(method, len(a.tokens)))  # what the page asked about first runs as a job
    except errors.ExplorerError as err:
        ui.error(err)
        st.stop()
    if r is not None:
        ui.memo("attr", params, lambda: r)
        st.rerun()
    if ui.cancelled("attr", params):
        st.info(t("attributions.cancelled"))
    st.stop()

pieces, scores = r.words() if level == "word" else (r.shown, r.scores)
pair_at = attr.pair_start(r, level)
signed = r.method != "saliency"  # saliency is a gradient's size: never below 0, so no red
legend = t("attributions.legend" if signed else "attributions.legend_unsigned", label=r.target_label)
st.html(highlight.highlight_html(pieces, scores, legend=legend, pair_at=pair_at, pair_label=t("arch.boundary")))
st.plotly_chart(attribution_plots.sorted_bars(pieces, scores, t("attributions.bars_title", label=r.target_label),
                                  t("attributions.score_axis"), t(f"attributions.level_{level}"), signed=signed,
                                  pair_at=pair_at),
                key="attr_bars")
ui.panels.verdict(r)  # the chart first, its one-line verdict under it, how it was computed in an expander
ui.panels.method_notes(r)
d1, d2 = st.columns(2)
d1.download_button(t("attributions.csv"), plain.csv_bytes(pd.DataFrame(attr.table(r, level))), help=t("plain.csv_guard"),
                   file_name=f"attributions-{r.method}.csv", mime="text/csv", key="attr_csv", on_click="ignore")
d2.download_button(t("attributions.html"), highlight.highlight_html(
    pieces, scores, title=f"{r.method}: {r.target_label}", legend=legend, standalone=True, pair_at=pair_at,
    pair_label=t("arch.boundary")),
    file_name=f"attributions-{r.method}.html", mime="text/html", key="attr_html_dl", on_click="ignore")

st.subheader(t("attributions.faith_title"))
st.caption(t("attributions.faith_intro"))
faith_key = (name, kind, text, seed, target_index, quantity, baseline, window or 1, sel.text_pair)
faith = ui.memo("faith", faith_key)
pressed = st.button(t("attributions.faith_run"), key="attr_faith_run")
try:
    got = ui.run_or_queue("faith", faith_key, lambda p: faithfulness.compare_methods(
        ck, hd, text, target_index, quantity, baseline, window or 1, progress=p, text_pair=sel.text_pair),
        running, stop, start=pressed, expected_s=30, size=("tokens", len(r.tokens)),
        heavy=cost.comparison_is_heavy(ck.model.config, len(r.tokens), window or 1, device=ck.model.device))
    faith = faith if got is None else ui.memo("faith", faith_key, lambda: got)
except errors.ExplorerError as err:
    ui.error(err)
if faith is not None:
    ui.panels.faithfulness_table(faith)
