"""Review quiz with instant feedback and links to the live panels."""
import streamlit as st

from explorer.teach import lesson
from explorer.ui import sticky, t

st.title(t("quiz.title"))
st.caption(t("quiz.intro"))
right = 0
for q in lesson.QUIZ:
    options = [t(f"quiz.{q.key}.o{i}") for i in range(4)]
    st.subheader(t(f"quiz.{q.key}.question"))
    # sticky: an answer survives a visit to the live panel ("See it live") and back
    choice = st.radio(t("quiz.check"), range(4), format_func=lambda i, o=options: o[i], index=None,
                      **sticky(f"quiz_{q.key}"))
    if choice is not None:
        if lesson.is_correct(q, choice):
            right += 1
            st.success(f"{t('quiz.correct')} {t(f'quiz.{q.key}.why')}")
        else:
            st.error(f"{t('quiz.wrong')} {t(f'quiz.{q.key}.why')}")
        st.page_link(q.page, label=t("quiz.see_live"), icon="➡️")
st.metric(t("quiz.score", right=right, n=len(lesson.QUIZ)), f"{right}/{len(lesson.QUIZ)}")
