"""The What-if page (pages/whatif.py): a second text (or an edited copy of the sidebar's) beside the first, and
what changed: a sentence classifier's probabilities, word scores and a live "drop this word"; a token
classifier's entities and every word's tag in both texts."""
from __future__ import annotations

import streamlit as st

from explorer import ui
from explorer.explain import whatif
from explorer.model.analysis import MAX_TEXT_CHARS, Analysis
from explorer.model.problem import ProblemType
from explorer.model.token_analysis import TokenAnalysis
from explorer.plots import logits as logit_plots, whatif as whatif_plots
from explorer.plots.attribution import sorted_bars
from explorer.plots.token_labels import entity_html
from explorer.text.errors import ExplorerError
from explorer.text.plain import html as escape_html
from explorer.ui import analysis, checkpoint, draw_table, head, headers, memo, plain, selection, show_error, t

ss = st.session_state
DROP_CHART = "whatif_drop_chart"  # the word chart, whose click picks the word to drop


def draw_second_text(text: str) -> str:
    """The original text beside its changed copy, which follows the sidebar's `text` until the user edits it
    (then a button follows it again); the changed text."""
    def follow_sidebar() -> None:
        ss["whatif_text"], ss["whatif_follow"] = text, True

    def edited() -> None:  # an edit ends following; an edit back to the sidebar's text resumes it
        ss["whatif_follow"] = ss["whatif_text"] == text

    # The changed text follows the sidebar's text until the user edits it, so it never compares an
    # edit of a sentence the sidebar has since left.
    if ss.setdefault("whatif_follow", True):
        ss["whatif_text"] = text
    c1, c2 = st.columns(2)  # the original beside the change; the follow button below the change, at full width
    c1.text_area(t("whatif.text_a"), text, height=90, disabled=True, help=t("whatif.text_a_help"))
    text_b = c2.text_area(t("whatif.text_b"), height=90, help=t("whatif.changed_help"), on_change=edited,
                          max_chars=MAX_TEXT_CHARS, **ui.sticky("whatif_text", text))
    if ss["whatif_follow"]:
        c2.caption(t("whatif.following"))
    else:
        c2.button(t("whatif.follow_again"), key="whatif_copy", on_click=follow_sidebar, help=t("whatif.follow_again_help"))
    return text_b


def draw_whatif(a: Analysis | TokenAnalysis, text_b: str) -> None:
    """What changed from the sidebar's text to `text_b`, whichever kind of classifier it is."""
    if isinstance(a, TokenAnalysis):
        _draw_tag_changes(a.text, text_b)
    else:
        _draw_comparison(text_b)


def _pick_word() -> None:
    points = ss[DROP_CHART].selection.points
    if points:
        ss["whatif_drop"] = int(points[0]["customdata"])


def _draw_comparison(text_b: str) -> None:
    """Both texts' predictions and probabilities, the words' scores side by side, and one word dropped."""
    sel = selection()
    name, kind, text, seed = sel.name, sel.head_name, sel.text, sel.seed
    params = (name, kind, seed, text, text_b, sel.text_pair)
    try:
        ck, hd = checkpoint(name, seed), head(name, kind, seed)
        n = whatif.compare_tokens(ck, text, text_b=text_b,
                                  text_pair=sel.text_pair)  # long texts: asked first, then a job
        r = ui.run("whatif", params,
                   lambda p: whatif.compare_texts(ck, hd, text_a=text, text_b=text_b, text_pair=sel.text_pair,
                                                                    progress=p),
                   ask=t("memory.whatif_costly", n=n, limit=whatif.COMPARE_WARN_TOKENS)
                   if n > whatif.COMPARE_WARN_TOKENS else None, running=t("whatif.running"), size=("tokens", n))
    except ExplorerError as err:
        show_error(err)
        return
    if r is None:
        return  # not asked yet, or stopped
    labels, target = r.a.labels, r.a.labels[r.target]
    shown = plain(target)  # the target label inside Markdown

    st.subheader(t("whatif.diff_title"))
    st.html(whatif_plots.diff_html(r.rows, t("whatif.diff_legend")))
    m1, m2 = st.columns(2)
    pa, pb = r.probs
    m1.metric(t("whatif.pred_a"), plain(ui.prediction(r.a.predicted)))
    m2.metric(t("whatif.pred_b"), plain(ui.prediction(r.b.predicted)), delta=f"{pb[r.target] - pa[r.target]:+.3f} ({shown})")
    names = {t("whatif.a"): pa, t("whatif.b"): pb}
    regression = r.a.problem_type == ProblemType.REGRESSION
    left, right = st.columns(2)
    left.plotly_chart(logit_plots.grouped(labels, names, title=t("whatif.probs_title"), x_title=t("home.label_axis"),
                                          y_title=t("home.prob_axis"),
                                     y_range=None if regression else (0, 1)), key="whatif_probs")
    right.plotly_chart(logit_plots.grouped(labels, {t("whatif.a"): r.a.logits, t("whatif.b"): r.b.logits},
                                      title=t("whatif.logits_title"), x_title=t("home.label_axis"),
                                      y_title=t("home.logit_axis")),
                       key="whatif_logits")

    st.subheader(t("whatif.words_title", label=shown), anchor=False)  # no anchor slug made of a label
    st.caption(t("whatif.words_help", label=shown))
    st.plotly_chart(whatif_plots.word_comparison(r.rows, (t("whatif.a"), t("whatif.b"), t("whatif.difference")),
                                           title=t("whatif.words_chart", label=target), x_title=t("whatif.word_axis"),
                                           y_title=t("whatif.score_axis")), key="whatif_words")

    st.subheader(t("whatif.drop_title"))
    st.caption(t("whatif.drop_help"))
    words = whatif.words(r.attr_a)
    st.plotly_chart(sorted_bars([w.text for w in words], [w.score for w in words],
                                title=t("whatif.drop_chart", label=target),
                                x_title=t("whatif.score_axis"), y_title=t("whatif.word_axis")),
                    key=DROP_CHART, on_select=_pick_word, selection_mode="points")
    if ss.get("whatif_drop_text") != (text, sel.text_pair):  # a picked word means nothing in another text
        ss["whatif_drop_text"], ss["whatif_drop"] = (text, sel.text_pair), None
    choice = st.selectbox(t("whatif.drop_word"), [None, *range(len(words))], key="whatif_drop",
                          format_func=lambda k: t("whatif.none") if k is None else f"{k}: {words[k].text}")
    if choice is not None:
        try:
            dropped = whatif.drop_word(checkpoint(name, seed), text, word_id=words[choice].word_id)
            d = analysis(name, kind, dropped, seed, text_pair=sel.text_pair)
        except ExplorerError as err:
            show_error(err)
            return
        st.markdown(t("whatif.without", word=plain(words[choice].text)))
        st.code(dropped, language=None, wrap_lines=True)
        pd_ = whatif.probabilities_of(d)
        st.metric(t("whatif.pred_dropped"), plain(ui.prediction(d.predicted)), delta=f"{pd_[r.target] - pa[r.target]:+.3f} ({shown})")
        st.plotly_chart(logit_plots.grouped(labels, {t("whatif.a"): pa, t("whatif.dropped"): pd_},
                                            title=t("whatif.dropped_title"),
                                       x_title=t("home.label_axis"), y_title=t("home.prob_axis"),
                                       y_range=None if regression else (0, 1)),
                        key="whatif_dropped")


def _draw_tag_changes(text_a: str, text_b: str) -> None:
    """What-if for a token classifier: the entities of both texts, then every word's tag in each, aligned,
    the words whose tag changed marked."""
    sel = selection()
    try:
        r = memo("whatif_tags", (sel.name, sel.head_name, sel.seed, text_a, text_b), lambda: whatif.compare_tags(
            checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed), text_a=text_a, text_b=text_b))
    except ExplorerError as err:
        show_error(err)
        return
    st.subheader(t("tokenpages.whatif_title"))
    for name, a in ((t("whatif.a"), r.a), (t("whatif.b"), r.b)):
        st.caption(name)
        st.html(entity_html(a.text, a.grouped(), labels=a.labels, legend_title=t("tokenhead.legend"),
                            none_text=t("tokenhead.no_entities")))
    draw_table(headers([{"word_a": row.a.text if row.a else "", "tag_a": r.tags_a[row.a.word_id] if row.a else "",
                    "word_b": row.b.text if row.b else "", "tag_b": r.tags_b[row.b.word_id] if row.b else "",
                    "changed": r.changed(row)} for row in r.rows], "tokenpages.col_"))
    st.caption(t("tokenpages.whatif_changed", changed=sum(map(r.changed, r.rows)), words=len(r.rows)))


def _use_text(text: str, text_pair: str) -> None:
    # A callback runs before the script, so the sidebar's text widgets may still be changed here.
    ss["text"] = text
    if text_pair:
        ss["text_pair"] = text_pair


def draw_counterfactual(a: Analysis) -> None:
    """"Find the smallest change that flips it": a queued job (ui.run) for the sidebar's text, then the edited
    text with each edit marked, the probabilities before and after, how the head saw it, and "use this text"."""
    from explorer.explain.counterfactual import MAX_EDITS, counterfactual
    from explorer.plots.vectors import strips

    if isinstance(a, TokenAnalysis):  # a token classifier has no one label to flip
        return
    st.subheader(t("counterfactual.title"), anchor=False)
    st.caption(t("counterfactual.intro"))
    sel = selection()
    labels = a.labels
    # A single-label text is already its predicted label: that one is no target.
    choices = [None, *(k for k in range(len(labels))
                       if a.problem_type is not ProblemType.SINGLE or labels[k] != a.predicted)]
    c1, c2 = st.columns(2)
    target = c1.selectbox(t("counterfactual.target"), choices, **ui.sticky("cf_target", None, choices),
                          format_func=lambda k: t("counterfactual.any_label") if k is None else labels[k])
    max_edits = int(c2.number_input(t("counterfactual.max_edits"), 1, MAX_EDITS, **ui.sticky("cf_max_edits", 3)))
    pressed = st.button(t("counterfactual.find"), key="cf_find", type="primary")
    params = (sel.name, sel.head_name, sel.seed, sel.text, sel.text_pair, target, max_edits)
    try:
        ck, hd = checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed)
        running = t("counterfactual.running")
        r = ui.run("counterfactual", params, lambda p: counterfactual(
            ck, hd, text=sel.text, text_pair=sel.text_pair, target=target, max_edits=max_edits, seed=sel.seed,
            progress=lambda frac, msg: p(frac, f"{running} {msg}".strip())),
            heavy=True, start=pressed, running=running)
    except ExplorerError as err:
        show_error(err)
        return
    if r is None:
        return
    before, after = plain(ui.prediction(r.predicted_before)), plain(ui.prediction(r.predicted_after))
    if r.flipped:
        st.success(t("counterfactual.flipped", edits=len(r.edits), passes=r.forward_passes, before=before, after=after))
        if not r.minimal:
            st.info(t("counterfactual.not_minimal"))
    else:
        st.warning(t("counterfactual.not_flipped", max=r.max_edits, passes=r.forward_passes))
    st.html(r.marked_html(0) + f"<div style='font-size:small;color:gray'>{escape_html(t('counterfactual.legend'))}</div>")
    if r.original_pair:
        st.caption(t("counterfactual.pair_legend"))
        st.html(r.marked_html(1))
    if r.edits:
        st.caption(t("counterfactual.edits_table"))
        draw_table(headers([{"side": t(f"counterfactual.side_{e.to_dict()['side']}"),
                             "kind": t(f"counterfactual.kind_{e.kind}"), "old": e.old, "new": e.new}
                            for e in r.edits], "counterfactual.col_"))
    st.button(t("counterfactual.use"), key="cf_use", on_click=_use_text, args=(r.text, r.text_pair),
              help=t("counterfactual.use_help"), disabled=not r.edits)
    m1, m2 = st.columns(2)
    m1.metric(t("counterfactual.before"), before)
    m2.metric(t("counterfactual.after"), after)
    regression = r.problem_type == ProblemType.REGRESSION
    st.plotly_chart(logit_plots.grouped(labels, {t("counterfactual.before"): r.before, t("counterfactual.after"): r.after},
                                        title=t("counterfactual.probs_title"), x_title=t("home.label_axis"),
                                        y_title=t("home.prob_axis"),
                                        y_range=None if regression else (0, 1)), key="cf_probs")

    st.subheader(t("counterfactual.head_title"), anchor=False)
    st.caption(t("counterfactual.head_help"))
    view = r.head
    draw_table(headers([{"step": s["name"], "change_norm": s["change_norm"], "cosine": s["cosine"]}
                        for s in view["steps"]], "counterfactual.col_"))
    pooled = view["pooled"]
    st.plotly_chart(strips({t("counterfactual.before"): pooled["before"], t("counterfactual.after"): pooled["after"]},
                           t("counterfactual.pooled_title"), x_title=t("counterfactual.dimension"), y_title="",
                           value_name=t("counterfactual.value")), key="cf_pooled")
    change = view["logit_change"]
    draw_table(headers([{"label": n, "logit_change": change[n]} for n in labels], "counterfactual.col_"))
    if view["last_step"]:
        label = max(labels, key=lambda n: abs(change[n]))  # the label whose logit moved most
        parts = view["last_step"]["labels"][label]["features"]
        st.plotly_chart(sorted_bars([str(f["feature"]) for f in parts], [f["contribution"] for f in parts],
                                    title=t("counterfactual.split_title", label=label),
                                    x_title=t("counterfactual.col_contribution"),
                                    y_title=t("counterfactual.col_feature")), key="cf_split")
