"""The Attributions page (pages/attributions.py): which tokens drove the chosen label's logit or probability, and
can we trust it (completeness, faithfulness)? One set of controls and one result for either kind of classifier:
a token classifier first picks the token (or entity) whose tag is explained, and adds "every label at this
token" as a grid."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from explorer import ui
from explorer.explain import attribution as attr, cost, faithfulness
from explorer.explain.sampled import AGREEMENT_WARN
from explorer.model.analysis import Analysis
from explorer.model.token_analysis import TokenAnalysis
from explorer.plots import attribution as attribution_plots
from explorer.text import highlight, plain as plain_text
from explorer.text.errors import ExplorerError
from explorer.ui import checkpoint, draw_chart, head, plain, selection, show_error, sticky, t


@dataclass(frozen=True)
class AttributionTarget:
    """What is explained: the label (None: the predicted one) and, on a token classifier, the token position."""
    label: int | None
    token: int | None = None


@dataclass(frozen=True)
class Controls:
    """The attribution controls' picks."""
    method: str
    quantity: str
    baseline: str
    n_steps: int | None  # integrated methods; None: refined until complete
    window: int  # occlusion's window
    level: str  # token | word


def draw_attributions(a: Analysis | TokenAnalysis) -> None:
    """The whole page for the sidebar's analysis, whichever kind of classifier it is."""
    sel = selection()
    target = draw_token_target(a) if isinstance(a, TokenAnalysis) else draw_label_target(a)
    c = draw_attribution_controls(a)
    if a.truncated_tokens:
        st.warning(t("attributions.truncated", max=a.max_length, n=a.truncated_tokens))
    r = run_attribution(a, target, c)
    if r is None:
        return
    draw_attribution_result(r, c.level)
    ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
    draw_faithfulness(ck, hd, len(r.tokens), target, c)
    if target.token is not None:
        draw_label_grid(a, target.token, c)


def draw_label_target(a: Analysis) -> AttributionTarget:
    """A sentence classifier's label to explain (the predicted one by default); a row opened from the Label
    audit arrives with its label and a note on it."""
    ss, text = st.session_state, selection().text
    want = ss.pop("attr_target_label", None)  # a mapping.Target, set by the Label audit page when it opens a row here
    if want is not None:
        ss["attr_target"] = a.labels.index(want.label) if want.label in a.labels else -1
        ss["attr_target_note"] = (text, ss["attr_target"], want.note)  # kept past the rerun that follows a run
    # Sticky: re-sent each run, so the browser redraws "predicted (…)" for this text's prediction.
    targets = [-1, *range(len(a.labels))]
    target = st.selectbox(t("attributions.target"), targets, **sticky("attr_target", -1, options=targets),
                          format_func=lambda i: t("attributions.predicted", label=ui.prediction(a.predicted))
                          if i < 0 else a.labels[i])
    note = ss.get("attr_target_note")
    if note and note[:2] == (text, target) and note[2]:
        st.info(plain(note[2].message(ui.lang())))
    return AttributionTarget(None if target < 0 else int(target))


def draw_token_target(a: TokenAnalysis) -> AttributionTarget:
    """A token classifier's token (or an entity: the token carrying its label under the Pipeline page's
    aggregation) and the label explained there (its tag by default)."""
    strategy = st.session_state.get("tokenhead_aggregation", a.aggregation)
    choices = _token_choices(a, strategy)
    st.caption(t("tokenhead.attr_intro", aggregation=strategy))
    c1, c2 = st.columns([3, 2])
    token = choices[c1.selectbox(t("tokenhead.attr_token"), list(choices), key="attr_token_pick")]
    # Sticky: its value is re-sent each run, so the browser redraws "its tag (…)" for the token explained now; a
    # plain keyed selectbox keeps showing the option's text from when it was chosen (another token's tag).
    targets = [-1, *range(len(a.labels))]
    label = c2.selectbox(t("attributions.target"), targets, **sticky("attr_token_label", -1, options=targets),
                         format_func=lambda k: t("tokenhead.attr_tag", label=a.tags[token]) if k < 0 else a.labels[k])
    return AttributionTarget(int(a.predicted[token]) if label < 0 else int(label), token)


def _token_choices(a: TokenAnalysis, strategy: str) -> dict[str, int]:
    """What a token classifier offers to explain, as label -> token position: each entity (as pipeline()
    groups it under `strategy`), then every token, special tokens included."""
    from explorer.explain.token_attribution import entity_token

    found = {t("tokenhead.pick_entity", word=e.word, entity=e.label, token=a.shown[k], position=k): k
             for e in a.entities[strategy] for k in [entity_token(a, e, strategy=strategy)]}
    return {**found, **{t("tokenhead.pick_token", token=tok, position=i, tag=tag): i
                        for i, (tok, tag) in enumerate(zip(a.shown, a.tags))}}


def draw_attribution_controls(a: Analysis | TokenAnalysis) -> Controls:
    """Method, quantity, baseline, the integrated methods' steps or occlusion's window, and token or word level."""
    c1, c2, c3 = st.columns([3, 3, 3])  # wide enough for the longest method name
    method = c1.selectbox(t("attributions.method"), attr.METHODS, key="attr_method",
                          format_func=lambda m: t(f"attributions.m_{m}"))
    quantity = c2.radio(t("attributions.quantity"), attr.QUANTITIES, key="attr_quantity", horizontal=True,
                        format_func=lambda q: t(f"attributions.q_{q}"))
    baseline = c3.selectbox(t("attributions.baseline"), attr.BASELINES, key="attr_baseline",
                            format_func=lambda b: t(f"attributions.b_{b}"), help=t("attributions.baseline_help"))
    c1, c2, _ = st.columns(3)
    steps, window = None, 1
    if method in attr.INTEGRATED:
        steps = c1.select_slider(t("attributions.steps"), ["auto", 8, 16, 32, 64, 128, 256], key="attr_steps",
                                 help=t("attributions.path_help"),
                                 format_func=lambda s, auto=t("attributions.auto"): auto if s == "auto" else str(s))
    if method == "occlusion":
        window = int(c1.number_input(t("attributions.window"), 1, 16, 1, key="attr_window"))
    level = c2.radio(t("attributions.level"), ("token", "word"), key="attr_level", horizontal=True,
                     format_func=lambda lv: t(f"attributions.level_{lv}"))
    return Controls(method, quantity, baseline, None if steps in (None, "auto") else int(steps), window, level)


def run_attribution(a: Analysis | TokenAnalysis, target: AttributionTarget, c: Controls):
    """The attribution for these picks: kept, or run now (a light one at once, one past a batch as a job, a
    costly occlusion after its Run button); None while there is none (the page then shows nothing more)."""
    sel = selection()
    what = "attr" if target.token is None else "attr_token"
    pair = _text_pair(target)
    params = (sel.name, sel.head_name, sel.text, sel.seed, sel.text_pair, target, c)
    if ui.memo(what, params) is not None:
        return ui.memo(what, params)
    costly = c.method == "occlusion" and attr.occlusion_is_costly(len(a.tokens), c.window)
    if costly:
        st.warning(t("attributions.occlusion_cost", n=len(a.tokens) - c.window + 1))
    pressed = st.button(t("attributions.run"), key=f"{what}_run", type="primary")
    try:
        ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)  # a job runs off this thread
        heavy = cost.attribution_is_heavy(ck.model.config, c.method, n_tokens=len(a.tokens), n_steps=c.n_steps,
                                          window=c.window,
                                          device=ck.model.device)  # past one batch
        r = ui.run(what, params, lambda p: attr.attribute(
            ck, hd, text=sel.text, method=c.method, target=target.label, quantity=c.quantity, baseline=c.baseline,
            n_steps=c.n_steps, window=c.window,
            progress=p, text_pair=pair, target_token=target.token),
            start=pressed or (not costly and not ui.was_stopped(what, params)), heavy=heavy or costly,
            running=t("attributions.running"), stop=t("attributions.stop"), expected_s=10,
            size=(c.method, len(a.tokens)))
    except ExplorerError as err:
        show_error(err)
        return None
    if r is not None:
        st.rerun()  # drawn again without the Run button and the progress
    if ui.was_stopped(what, params):
        st.info(t("attributions.cancelled"))
    return None


def _text_pair(target: AttributionTarget) -> str | None:
    """The sidebar's text B, which a sentence classifier reads with the text; a token classifier tags one text."""
    return (selection().text_pair or None) if target.token is None else None


def draw_attribution_result(r, level: str) -> None:
    """The highlighted text, the scores ranked, the one-line verdict under them, how it was computed in an
    expander, and the downloads."""
    token = r.target_token  # None on a sentence classifier
    if token is not None:
        st.caption(t("tokenhead.attr_explains", label=plain(r.target_label), token=r.shown[token], position=token,
                     quantity=t(f"attributions.q_{r.quantity}"), seconds=r.seconds))
    pieces, scores = r.words() if level == "word" else (r.shown, r.scores)
    pair_at = attr.pair_start(r, level)
    signed = r.method != "saliency"  # saliency is a gradient's size: never below 0, so no red
    legend = t("attributions.legend" if signed else "attributions.legend_unsigned", label=r.target_label)
    st.html(highlight.highlight_html(pieces, scores, legend=legend, pair_at=pair_at, pair_label=t("arch.boundary")))
    draw_chart(attribution_plots.sorted_bars(pieces, scores, title=t("attributions.bars_title", label=r.target_label),
                                        x_title=t("attributions.score_axis"), y_title=t(f"attributions.level_{level}"),
                                        signed=signed, pair_at=pair_at),
          "attr_bars" if token is None else "attr_token_bars")
    draw_verdict(r)
    draw_method_notes(r)
    name, title, keys = (f"attributions-{r.method}", f"{r.method}: {r.target_label}", ("attr_csv", "attr_html_dl")) \
        if token is None else (f"attributions-{r.method}-token{token}", f"{r.method}: {r.target_label} @ #{token}",
                               ("attr_token_csv", "attr_token_html_dl"))
    d1, d2 = st.columns(2)
    d1.download_button(t("attributions.csv"), plain_text.csv_bytes(pd.DataFrame(attr.table(r, level))),
                       help=t("plain.csv_guard"), file_name=f"{name}.csv", mime="text/csv", key=keys[0],
                       on_click="ignore")
    d2.download_button(t("attributions.html"), highlight.highlight_html(
        pieces, scores, title=title, legend=legend, standalone=True, pair_at=pair_at, pair_label=t("arch.boundary")),
        file_name=f"{name}.html", mime="text/html", key=keys[1], on_click="ignore")


def draw_completeness_numbers(r) -> None:
    """An integrated attribution's sum against f(x) - f(baseline), its delta and steps."""
    if r.delta is not None:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(t("attributions.sum"), f"{r.scores.sum():+.4f}")
        m2.metric(t("attributions.diff"), f"{r.f_x - r.f_baseline:+.4f}",
                  help=t("attributions.diff_help", fx=r.f_x, fb=r.f_baseline))
        m3.metric(t("attributions.delta"), f"{r.delta:+.2e}", help=t("attributions.delta_help"))
        m4.metric(t("attributions.n_steps"), str(r.n_steps))


def draw_verdict(r) -> None:
    """An attribution's verdict in one line: complete or not (integrated methods), or that saliency is
    unsigned; and a warning when two sampling seeds disagree."""
    if r.delta is not None:
        if r.converged is None:  # a sampled method (gradient_shap): no completeness promised, the gap is information
            st.info(t("sampled.completeness_gap", error=f"{r.error:.2%}", samples=r.sampling.n_samples))
        elif not r.converged:
            st.warning(t("arch.not_converged", error=f"{r.error:.2%}", steps=r.n_steps))
        else:
            st.success(t("attributions.complete", error=100 * r.error))
    elif r.method == "saliency":
        st.info(t("attributions.unsigned"))
    if r.sampling is not None and r.sampling.agreement is not None and r.sampling.agreement < AGREEMENT_WARN:
        st.warning(t("sampled.disagree", rho=r.sampling.agreement))


def draw_method_notes(r) -> None:
    """How an attribution was computed, in an expander after its chart: what it explains, the baseline,
    the completeness check's numbers and the sampling (the page shows the verdict under the chart)."""
    with st.expander(t("attributions.notes")):
        st.caption(t("attributions.explains", label=plain(r.target_label), quantity=t(f"attributions.q_{r.quantity}"),
                     seconds=r.seconds))
        st.caption(t("arch.baseline"))
        draw_completeness_numbers(r)
        if r.sampling is not None:
            draw_sampling(r)


def draw_sampling(r) -> None:
    """A sampled attribution's method, parameters and sampling noise (the agreement of two seeds' runs)."""
    s = r.sampling
    st.caption(t(f"sampled.about_{r.method}"))
    st.caption(t("sampled.params_tokens" if r.method == "gradient_shap" else "sampled.params_words",
                 samples=s.n_samples, seed=s.seed, per_eval=s.perturbations_per_eval, features=s.features))
    if s.underdetermined:
        st.caption(t("sampled.underdetermined", features=s.features, samples=s.n_samples))
    if s.agreement is None:
        st.caption(t("sampled.agreement_none", second=s.second_seed))
        return
    st.caption(t("sampled.agreement", second=s.second_seed, rho=s.agreement))


def draw_faithfulness(ck, hd, n_tokens: int, target: AttributionTarget, c: Controls) -> None:
    """Every method's comprehensiveness and sufficiency for this target, on request (a job past one batch). On a
    token classifier the token's own probability is read wherever deletions move it (it is never deleted)."""
    sel = selection()
    what = "faith" if target.token is None else "faith_token"
    st.subheader(t("attributions.faith_title"))
    st.caption(t("attributions.faith_intro" if target.token is None else "tokenhead.faith_intro"))
    key = (sel.name, sel.head_name, sel.text, sel.seed, sel.text_pair, target, c.quantity, c.baseline, c.window)
    pressed = st.button(t("attributions.faith_run"), key="attr_faith_run" if target.token is None
                        else "attr_token_faith_run")
    try:
        faith = ui.run(what, key, lambda p: faithfulness.compare_methods(
            ck, hd, text=sel.text, target=target.label, quantity=c.quantity, baseline=c.baseline, window=c.window,
            progress=p,
            text_pair=_text_pair(target), target_token=target.token),
            start=pressed, running=t("attributions.running"), stop=t("attributions.stop"), expected_s=30,
            size=("tokens", n_tokens),
            heavy=cost.comparison_is_heavy(ck.model.config, n_tokens, window=c.window, device=ck.model.device))
    except ExplorerError as err:
        show_error(err)
        return
    if faith is not None:
        st.dataframe([{
            t("attributions.method"): t(f"attributions.m_{row.method}"),
            t("attributions.comprehensiveness_col"): round(row.comprehensiveness, 4),
            t("attributions.sufficiency_col"): round(row.sufficiency, 4),
            t("attributions.completeness_error"): "—" if row.completeness_error is None
            else f"{100 * row.completeness_error:.3f}%",
            t("attributions.seconds"): round(row.seconds, 2),
        } for row in faith], hide_index=True, key="attr_faith_table")


def draw_label_grid(a: TokenAnalysis, token: int, c: Controls) -> None:
    """A token classifier's every label at the explained token, one attribution each, on request."""
    from explorer.explain.token_attribution import every_label
    from explorer.plots.token_labels import label_grid

    sel = selection()
    st.subheader(t("tokenhead.grid_title"))
    st.caption(t("tokenhead.grid_intro", n=len(a.labels)))
    key = (sel.name, sel.head_name, sel.text, sel.seed, c.method, token, c.quantity, c.baseline)
    go = st.button(t("tokenhead.grid_run", n=len(a.labels)), key="attr_grid_run") if ui.memo("attr_grid", key) is None \
        else False
    try:  # a queued grid from an earlier run is picked up here even without a click
        ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
        heavy = cost.attribution_is_heavy(ck.model.config, c.method, n_tokens=len(a.tokens), device=ck.model.device)
        grid = ui.run("attr_grid", key, lambda p: every_label(
            ck, hd, text=sel.text, token=token, method=c.method, progress=p, quantity=c.quantity, baseline=c.baseline),
            start=go, heavy=heavy, running=t("attributions.running"), stop=t("attributions.stop"),
            expected_s=10 * len(a.labels))
    except ExplorerError as err:
        show_error(err)
        return
    if grid is not None:
        draw_chart(label_grid(grid.shown, grid.labels, scores=grid.scores, token=grid.token,
                         title=t("tokenhead.grid_chart", token=grid.shown[grid.token], position=grid.token),
                         token_axis=t("tokenhead.token_axis"), label_axis=t("tokenhead.label_axis"),
                         bar_title=t("attributions.score_axis")),
              "attr_token_grid")
        worst = max((e for e in grid.errors if e is not None), default=None)
        if worst is not None:
            st.caption(t("tokenhead.grid_complete", error=100 * worst))
