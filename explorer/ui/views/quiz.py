"""The Review quiz page (pages/quiz.py): each question with instant feedback and a link to its live panel, the
score now and the first answers' score (what a class is scored on), answers locked by a teacher's link."""
from __future__ import annotations

import secrets

import streamlit as st

from explorer.teach import lesson
from explorer.ui import sticky, t

# Locked, the first answers are kept where the browser keeps them: a session cookie, sent with every page the
# browser opens on this server (a reload, a new tab: each a new session here), so neither undoes the lock. A
# session cookie, not a dated one, so a shared classroom computer forgets them when its browser is closed.
FIRST_COOKIE = "head_explorer_quiz_first"
KEEP_FIRST = "<script>document.cookie = '{NAME}={VALUE}; path=/; samesite=strict'</script>"


def draw_quiz() -> None:
    """Every question, the two scores and "start again"."""
    ss = st.session_state
    ss.setdefault("quiz_seed", secrets.randbelow(2**31))  # this session's option order (see lesson.option_order)
    first = ss.setdefault("quiz_first", {})  # question key -> the first option picked: what a class scores
    # Only a teacher's link with ?lock=1 (teach.links) locks answers, for every student who opens it: a toggle of
    # the student's own would let each one unlock them again.
    lock = bool(ss.get("quiz_lock", False))
    if lock:  # what this browser answered first, in an earlier session (st.context.cookies: as the session began)
        for key, choice in lesson.read_first_answers(st.context.cookies.get(FIRST_COOKIE, "")).items():
            first.setdefault(key, choice)
    st.caption(t("links.locked_by_link" if lock else "quiz.lock_how"))
    answers = {}
    for n, q in enumerate(lesson.QUIZ):
        options = [t(f"quiz.{q.key}.o{i}") for i in range(lesson.N_OPTIONS)]
        st.subheader(t(f"quiz.{q.key}.question"))
        locked = lock and q.key in first
        if locked:
            ss[f"quiz_{q.key}"] = first[q.key]
        # values are the catalog's option indices, shown in this session's order; sticky: an answer
        # survives a visit to the live panel ("See it live") and back
        order = lesson.option_order(n, ss["quiz_seed"])
        choice = st.radio(t("quiz.check"), order, index=None, disabled=locked,
                          format_func=lambda i, o=options: o[i], on_change=_record, args=(q.key,),
                          **sticky(f"quiz_{q.key}", options=order))
        if choice is not None:
            answers[q.key] = choice
            first.setdefault(q.key, choice)  # also an answer set without a click (AppTest, a restored value)
            if lesson.is_correct(q, choice):
                st.success(f"{t('quiz.correct')} {t(f'quiz.{q.key}.why')}")
            else:
                st.error(f"{t('quiz.wrong')} {t(f'quiz.{q.key}.why')}")
            if lock:
                st.caption(t("quiz.locked"))
            st.page_link(q.page, label=t("quiz.see_live"), icon="➡️")
    right, n = lesson.quiz_score(answers), len(lesson.QUIZ)
    if not lock:  # locked, the answers are the first ones: one score, not the same one twice
        st.metric(t("quiz.score_now"), f"{right}/{n}")
    st.metric(t("quiz.first_score"), f"{lesson.quiz_score(first)}/{n}", help=t("quiz.first_help"))
    st.button(t("quiz.again"), key="quiz_again", on_click=_start_again, icon=":material/restart_alt:",
              help=t("quiz.again_locked") if lock else None)
    if lock and first:  # in the sidebar: an element of no height there, none among the questions
        st.sidebar.html(KEEP_FIRST.replace("{NAME}", FIRST_COOKIE).replace("{VALUE}", lesson.first_answers_text(first)),
                        unsafe_allow_javascript=True)


def _record(key: str) -> None:  # before the run: a locked question is drawn locked at once
    ss = st.session_state
    if ss.get(f"quiz_{key}") is not None:
        ss["quiz_first"].setdefault(key, ss[f"quiz_{key}"])


def _start_again() -> None:
    """A new option order; unlocked, the answers and the first answers cleared too. Locked, the first answers
    and their score stay (and so does each locked question's answer): they are what the class is scored on,
    and a restart that cleared them would let any student redo a question."""
    ss = st.session_state
    if not ss.get("quiz_lock", False):
        for q in lesson.QUIZ:
            ss.pop(f"quiz_{q.key}", None)
        ss["quiz_first"] = {}
    ss["quiz_seed"] = secrets.randbelow(2**31)
