"""Guided lesson: the chain from text to label, with the class's own live numbers."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import lesson

st.title(t("lesson.title"))
lesson.draw_intro()
a = ui.current_classifier_analysis()  # a token classifier: the steps about heads, with its real token head
if a is not None:
    lesson.draw_lesson(a)
