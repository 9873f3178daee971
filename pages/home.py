"""Landing page: the live pipeline for the typed text."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import home

st.title(t("home.title"))
# The chain's narrow boxes break between words, and inside a word only when it alone is too wide.
st.html("<style>.st-key-home_chain p, .st-key-home_chain code {white-space: pre-wrap; word-break: normal !important;"
        " overflow-wrap: anywhere !important;} .st-key-home_chain pre {padding: 0.6rem !important;}</style>")
a = ui.current_classifier_analysis()
if a is not None:
    home.draw_pipeline(a)
