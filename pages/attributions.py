"""Attributions: which tokens drove the chosen label's logit or probability, and can we trust it?"""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import attributions, scan as scan_view

st.title(t("attributions.title"))
st.caption(t("attributions.intro"))
a = ui.current_classifier_analysis()  # a token classifier: one token, every label
if a is not None:
    scan_view.draw_landing_note("pages/attributions.py")
    attributions.draw_attributions(a)
