"""What-if: a second text (or an edited copy of the first) side by side, and a live "drop this word"."""
import streamlit as st

from explorer import ui
from explorer.explain import whatif
from explorer.model.analysis import MAX_TEXT_CHARS
from explorer.model.problem import ProblemType
from explorer.plots import logits as logit_plots, whatif as whatif_plots
from explorer.plots.attribution import sorted_bars
from explorer.text.errors import ExplorerError
from explorer.ui import analysis, checkpoint, current_analysis, error, head, plain, selection, t

st.title(t("whatif.title"))
st.caption(t("whatif.intro"))
ss, DROP_CHART = st.session_state, "whatif_drop_chart"  # the word chart, whose click picks the word to drop

tokens = ui.token_pages.is_token_model()  # a token classifier: its tags in both texts
if not tokens and current_analysis() is None:
    st.stop()
sel = selection()
name, kind, text, seed = sel.name, sel.head_name, sel.text, sel.seed
if sel.text_pair:
    st.info(t("whatif.pair_kept"))


def follow_sidebar() -> None:
    ss["whatif_text"], ss["whatif_follow"] = text, True


def edited() -> None:  # an edit ends following; an edit back to the sidebar's text resumes it
    ss["whatif_follow"] = ss["whatif_text"] == text


def pick_word() -> None:
    points = ss[DROP_CHART].selection.points
    if points:
        ss["whatif_drop"] = int(points[0]["customdata"])


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
if tokens:
    ui.token_pages.whatif_tags(text, text_b)
    st.stop()

params = (name, kind, seed, text, text_b, sel.text_pair)
r = ui.memo("whatif", params)
if r is None:
    try:
        ck, hd = checkpoint(name, seed), head(name, kind, seed)
        n = whatif.compare_tokens(ck, text, text_b, sel.text_pair)  # long texts: asked first, then a job
        r = ui.costly_job("whatif", params, t("memory.whatif_costly", n=n, limit=whatif.COMPARE_WARN_TOKENS),
                          lambda p: whatif.compare_texts(ck, hd, text, text_b, text_pair=sel.text_pair, progress=p),
                          t("whatif.running"), size=("tokens", n)) if n > whatif.COMPARE_WARN_TOKENS else None
        if r is None and n > whatif.COMPARE_WARN_TOKENS:
            st.stop()  # not asked yet, or stopped
        with st.spinner(t("whatif.running")):  # a short text's compare runs here: no job for a second's work
            r = ui.memo("whatif", params, lambda: r or whatif.compare_texts(ck, hd, text, text_b, text_pair=sel.text_pair))
    except ExplorerError as err:
        error(err)
        st.stop()
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
left.plotly_chart(logit_plots.grouped(labels, names, t("whatif.probs_title"), t("home.label_axis"), t("home.prob_axis"),
                                 y_range=None if regression else (0, 1)), key="whatif_probs")
right.plotly_chart(logit_plots.grouped(labels, {t("whatif.a"): r.a.logits, t("whatif.b"): r.b.logits},
                                  t("whatif.logits_title"), t("home.label_axis"), t("home.logit_axis")),
                   key="whatif_logits")

st.subheader(t("whatif.words_title", label=shown), anchor=False)  # no anchor slug made of a label
st.caption(t("whatif.words_help", label=shown))
st.plotly_chart(whatif_plots.word_comparison(r.rows, (t("whatif.a"), t("whatif.b"), t("whatif.difference")),
                                       t("whatif.words_chart", label=target), t("whatif.word_axis"),
                                       t("whatif.score_axis")), key="whatif_words")

st.subheader(t("whatif.drop_title"))
st.caption(t("whatif.drop_help"))
words = whatif.words(r.attr_a)
st.plotly_chart(sorted_bars([w.text for w in words], [w.score for w in words], t("whatif.drop_chart", label=target),
                            t("whatif.score_axis"), t("whatif.word_axis")),
                key=DROP_CHART, on_select=pick_word, selection_mode="points")
if ss.get("whatif_drop_text") != (text, sel.text_pair):  # a picked word means nothing in another text
    ss["whatif_drop_text"], ss["whatif_drop"] = (text, sel.text_pair), None
choice = st.selectbox(t("whatif.drop_word"), [None, *range(len(words))], key="whatif_drop",
                      format_func=lambda k: t("whatif.none") if k is None else f"{k}: {words[k].text}")
if choice is not None:
    try:
        dropped = whatif.drop_word(checkpoint(name, seed), text, words[choice].word_id)
        d = analysis(name, kind, dropped, seed, text_pair=sel.text_pair)
    except ExplorerError as err:
        error(err)
        st.stop()
    st.markdown(t("whatif.without", word=plain(words[choice].text)))
    st.code(dropped, language=None, wrap_lines=True)
    pd_ = whatif.probabilities_of(d)
    st.metric(t("whatif.pred_dropped"), plain(ui.prediction(d.predicted)), delta=f"{pd_[r.target] - pa[r.target]:+.3f} ({shown})")
    st.plotly_chart(logit_plots.grouped(labels, {t("whatif.a"): pa, t("whatif.dropped"): pd_}, t("whatif.dropped_title"),
                                   t("home.label_axis"), t("home.prob_axis"), y_range=None if regression else (0, 1)),
                    key="whatif_dropped")
