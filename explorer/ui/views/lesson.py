"""The Guided lesson page (pages/lesson.py): its steps as drawn, as one long list and in presenter view, with
the handout; on a token classifier the steps about heads, with its real token head.

Each step's live panel; presenter view shows one step at a time laid out to fit a projector's window (heading,
counter and buttons on one row; text beside the panel; charts no taller than the room left)."""
from __future__ import annotations

import dataclasses

import streamlit as st

from explorer import ui
from explorer.explain import whatif
from explorer.model.analysis import Analysis
from explorer.model.token_analysis import TokenAnalysis
from explorer.model.tokens import token_rows
from explorer.plots import lesson as lesson_plots
from explorer.plots.attention import scale_caption
from explorer.plots.common import PRESENTER_BOARD
from explorer.teach import figures, handout, lesson
from explorer.text.i18n import strings
from explorer.ui import (checkpoint, current_head, draw_chart, draw_table, head, headers, lang, plain,
                         selection, step_label, t)

# Where each step is explored in depth.
PAGE_OF = {"tokenizer": "pages/tokens.py", "encoder": "pages/tokens.py", "cls": "pages/pooled.py",
           "head": "pages/pooled.py", "probabilities": "pages/logits.py", "new_head": "pages/compare.py",
           "finetuning": "pages/finetune.py", "layers": "pages/encoder.py", "ablation": "pages/whatif.py"}
P = "lesson.panel."
WORDS_LINE_HEIGHT = 1.4  # presenter view's step text; Streamlit's 1.6 at the projector's type needs a scroll
# Presenter view's panel is 4/9 of the row (462 px at 1280 px): a chart title's line holds about 42 characters of
# Vietnamese at the projector's type; fewer leave room for wide letters.
BOARD_TITLE_CHARS = 38
# Steps whose panel is a table of four columns: 5/9 of the row, which they need whole at 1280 px; their text is
# short enough to end inside the window in the narrower half.
WIDE_PANELS = {"new_head"}
# Tried every 50 ms for up to 3 s until the heading is drawn (on a busy server or browser it can come after this
# script), then scrolled once the page's fonts have loaded, and again as the page settles (the sidebar closing
# for the projector, charts drawn beside): a layout change after one scroll would leave the heading off the top.
SCROLL = """<script>(() => { let n = 0; const go = () => { const h = document.getElementById("{ID}");
  if (h) document.fonts.ready.then(() => [0, 300, 800, 1500].forEach(ms => setTimeout(
    () => h.isConnected && h.scrollIntoView({block: "start"}), ms)));
  else if (++n < 60) setTimeout(go, 50); }; setTimeout(go, 60); })()</script>"""


def draw_panel(step: str, a):
    """Step `step`'s panel for `a`: its table or its charts (teach.figures, which the handout draws too). Returns
    leave-one-out's result on step "ablation" (None while there is none), for the handout to show the same."""
    sel = selection()
    presenting = bool(st.session_state.get("presenter"))
    found = counts = None
    if step == "tokenizer":
        draw_table([{t(P + "token"): s, t(P + "id"): i, t(P + "special"): sp, t(P + "subword"): row["continues_word"]}
               for s, i, sp, row in zip(a.shown, a.token_ids, a.special, token_rows(a))])
    elif step == "head":
        draw_head_table([(n, v.shape[-1]) for n, v in a.steps])
    elif step == "new_head":
        draw_new_head_table(a.new_weights)
    elif step == "finetuning":
        counts = lesson.parameter_counts(checkpoint(sel.name, sel.seed).model, current_head())
    elif step == "ablation":
        found = run_leave_one_out(a)  # asked first on a long text, then a job
        if found is None:
            return None
    charts = figures.step_figures(step, a, t, seed=sel.seed, counts=counts, drops=found)
    # probabilities: side by side; in presenter view one under the other at half the room each, so both fit
    # the window with their titles
    where = (st.container(),) * 2 if presenting else st.columns(2) if len(charts) == 2 else (None,)
    for (name, fig), box in zip(charts, where * len(charts)):
        if presenting and len(charts) == 2:
            # at half height the label axis' title goes: each bar is named by its label, and the room it took
            # is what the value axis needs for its ticks not to overlap
            fig = fig.update_xaxes(title_text=None)
        draw_chart(fig, f"lesson_{name}", box, height=PRESENTER_BOARD // 2 if len(charts) == 2 else None,
                   title_chars=BOARD_TITLE_CHARS)
    if step == "encoder":
        st.caption(scale_caption(True, t))
    return found


def draw_head_table(sizes: list[tuple[str, int]]) -> None:
    """Step "head": each step of the head and the size of the vector it gives (per token on a token head)."""
    draw_table([{t(P + "step_col"): step_label(n), t(P + "size_col"): size} for n, size in sizes])


def draw_new_head_table(new_weights: tuple[str, ...]) -> None:
    """Step "new_head": the sidebar's head's parameters, and which of them transformers initialised anew."""
    rows = current_head().parameters_table()
    if st.session_state.get("presenter"):  # a layer's dotted name and a shape's sum may break at a dot or a plus
        rows = [r | {"name": r["name"].replace(".", ".\u200b"), "shape": r["shape"].replace("+", "+\u200b")}
                for r in rows]
    draw_table(figures.new_head_table(rows, t))
    if new_weights:
        st.warning(t(P + "has_new", names=plain(", ".join(new_weights))))
    else:
        st.success(t(P + "all_pretrained"))


def _draw_text(step: str, where) -> None:
    where.write(t(f"lesson.{step}.body"))
    if step in PAGE_OF:
        where.page_link(PAGE_OF[step], label=t("lesson.see_page"), icon="➡️")


def draw_every_step(a):
    """The lesson as one long page: each step's heading, text, panel and link. Returns leave-one-out's result
    (step 10's chart), None while there is none."""
    found = None
    for step in lesson.STEPS:
        st.subheader(t(f"lesson.{step}.title"))
        st.write(t(f"lesson.{step}.body"))
        if (drawn := draw_panel(step, a)) is not None:  # only step 10 returns something
            found = drawn
        if step in PAGE_OF:
            st.page_link(PAGE_OF[step], label=t("lesson.see_page"), icon="➡️")
        st.divider()
    return found


def draw_presenter_step(a):
    """One step, laid out for a projector (1280 × 720 and up): the heading, "Step i of n" and the buttons on
    the first row, scrolled to the window's top after each click, so Next stays where the teacher clicked it;
    the step's text beside its panel, whose charts fit the room left (plots.common.PRESENTER_BOARD). Returns
    leave-one-out's result on step 10, else None."""
    ss, n = st.session_state, len(lesson.STEPS)
    i = ss.setdefault("lesson_step", 0)
    step = lesson.STEPS[i]
    # the counter and the buttons wide enough for "Step 10 of 10" and "◀ Previous" on one line at 1280 px
    head, count, prev, nxt = st.columns([5, 2.5, 2.5, 2.5], vertical_alignment="center")
    head.subheader(t(f"lesson.{step}.title"), anchor=f"lesson-step-{i + 1}")
    # Streamlit has no scroll call: bring this step's row into view (new step, new script)
    st.html(SCROLL.replace("{ID}", f"lesson-step-{i + 1}"), unsafe_allow_javascript=True)
    count.caption(t("lesson.step", i=i + 1, n=n))
    go_to = ss.__setitem__
    prev.button(t("lesson.prev"), key="lesson_prev", disabled=i == 0, on_click=go_to, args=("lesson_step", i - 1),
                width="stretch")
    nxt.button(t("lesson.next"), key="lesson_next", disabled=i == n - 1, on_click=go_to, args=("lesson_step", i + 1),
               width="stretch")
    # the text the wider half and its lines closer: the longest steps' text (step 9 in Vietnamese) ends inside
    # a 720 px window
    words, board = st.columns([4, 5] if step in WIDE_PANELS else [5, 4])
    st.html(f"<style>.st-key-lesson_words p {{line-height: {WORDS_LINE_HEIGHT} !important}}</style>")
    _draw_text(step, words.container(key="lesson_words"))
    with board:
        return draw_panel(step, a)


def draw_intro() -> None:
    """The lesson's opening line, except in presenter view: there the step's row (heading, counter, buttons) comes
    right under the title, in the window without a scroll."""
    if not st.session_state.get("presenter"):
        st.caption(t("lesson.intro"))


def draw_lesson(a: Analysis | TokenAnalysis) -> None:
    """The lesson for the sidebar's analysis, whichever kind of classifier it is: every step (one at a time in
    presenter view) and the handout; a token classifier's steps about heads."""
    if isinstance(a, TokenAnalysis):
        _draw_token_lesson(a)
        return
    found = draw_presenter_step(a) if st.session_state.get("presenter") else draw_every_step(a)
    doc = handout.handout_strings(strings(lang()))
    sel = selection()
    ck, hd = checkpoint(sel.name, sel.seed), current_head()

    def handout_file() -> str:  # runs on click, on another thread: no streamlit calls inside
        return handout.handout_with_model(ck, hd, a, [], doc, seed=sel.seed, drops=found)

    st.download_button(t("lesson.handout"), handout_file, file_name="handout.html", mime="text/html",
                       help=t("lesson.handout_help"), key="lesson_handout", on_click="ignore")


def run_leave_one_out(a):
    """The Lesson's leave-one-out for the sidebar's analysis `a`: (words, support), or None while there is none.
    One encoder pass per word: on a long text it asks first and runs as a job, and drops only the first
    whatif.LOO_MAX_WORDS words unless "all words" is ticked (a caption says so)."""
    sel = selection()
    n, costly = whatif.loo_words(a), whatif.loo_is_costly(a)
    capped = costly and n > whatif.LOO_MAX_WORDS and not st.checkbox(
        t("lesson.loo_all", n=n), key="lesson_loo_all", help=t("lesson.loo_all_help", cap=whatif.LOO_MAX_WORDS))
    limit = whatif.LOO_MAX_WORDS if capped else None
    key = (sel.key(), limit)
    ck, hd = checkpoint(sel.name, sel.seed), current_head()
    # What leave-one-out reads, without the ~80 MB of a long text's attentions and hidden states: a job
    # waiting in line holds its closure (the cache's copy may be evicted meanwhile).
    light = dataclasses.replace(a, attentions=None, hidden_states=None, flow=None)
    rows = min(n, limit or n)
    found = ui.run("lesson_loo", key, lambda p: whatif.leave_one_out(ck, hd, a=light, progress=p, limit=limit),
                   running=t("memory.loo_running"), size=(None, rows),
                   ask=t("memory.loo_costly", n=rows, limit=whatif.LOO_WARN_WORDS) if costly else None)
    if found is None:
        return None
    if capped:
        st.caption(t("lesson.loo_capped", cap=whatif.LOO_MAX_WORDS, n=n))
    return found


def _draw_token_lesson(a: TokenAnalysis) -> None:
    """The lesson on a token classifier: the steps about heads with the checkpoint's real token head: step 4
    (the head's steps, applied to every token), step 6 (its parameters, and which are new) and step 8
    (sequence vs token heads, live: one vector for the text against one vector per token). The other steps
    need a sentence head, which the page says."""
    st.info(t("tokenhead.lesson_only"))
    st.subheader(t("lesson.head.title"))
    st.write(t("tokenhead.lesson_head_body"))
    sel = selection()
    model, token_head = checkpoint(sel.name, sel.seed).model, head(sel.name, sel.head_name, sel.seed)
    draw_head_table(lesson.head_step_sizes(model, token_head))
    st.subheader(t("lesson.new_head.title"))
    st.write(t("lesson.new_head.body"))
    draw_new_head_table(a.new_weights)
    st.subheader(t("lesson.token_heads.title"))
    st.write(t("tokenhead.lesson_body"))
    seq = len(a.tokens)
    draw_table(headers([
        {"head": t("tokenhead.lesson_sequence"), "vectors": 1, "predictions": 1},
        {"head": t("tokenhead.lesson_token"), "vectors": seq, "predictions": seq},
    ], "tokenhead.col_"))
    draw_chart(lesson_plots.token_label_heatmap(a.logits, a.shown, labels=a.labels,
                                                title=t("tokenhead.lesson_heatmap_title"),
                                           x_title=t("lesson.panel.token"), y_title=t("tokenhead.label_axis"),
                                           value_name=t("tokenhead.logit_axis")), "lesson_real_tokens")
    st.caption(t("tokenhead.lesson_tags", tags=plain(" ".join(  # tokens and tags: the text's and the model's
        f"{tok}/{tag}" for tok, tag, sp in zip(a.shown, a.tags, a.special) if not sp))))
