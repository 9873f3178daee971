"""Guided lesson: the chain from text to label, with the class's own live numbers."""
import streamlit as st

from explorer.teach import handout
from explorer.text.i18n import strings
from explorer.ui import checkpoint, current_analysis, current_head, lang, lesson_view, selection, t
from explorer.ui.token_view import token_lesson

st.title(t("lesson.title"))
st.caption(t("lesson.intro"))
a = None if token_lesson() else current_analysis()  # a token classifier: step 8 with its real token head
if a is not None:
    if st.session_state.get("presenter"):
        lesson_view.presenter_step(a)
    else:
        lesson_view.every_step(a)
    doc = handout.handout_strings(strings(lang()))
    ck, hd = checkpoint(selection().name, selection().seed), current_head()

    def handout_file() -> str:  # runs on click, on another thread: no streamlit calls inside
        return handout.handout_with_attributions(ck, hd, a, [], doc)

    st.download_button(t("lesson.handout"), handout_file, file_name="handout.html", mime="text/html",
                       help=t("lesson.handout_help"), key="lesson_handout", on_click="ignore")
