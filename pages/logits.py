"""Logits and probabilities: one set of numbers, several ways to read them, and their losses."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import logits, scan as scan_view

st.title(t("logits.title"))
st.caption(t("logits.intro"))
a = ui.current_classifier_analysis()  # a token classifier: logits per token and layer
if a is not None:
    scan_view.draw_landing_note("pages/logits.py")
    logits.draw_logits(a)
