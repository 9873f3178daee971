"""Pooled vector: what the head actually reads, and how small the head is."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import pooled

st.title(t("pooled.title"))
st.caption(t("pooled.intro"))
a = ui.current_classifier_analysis()  # a token classifier: every token's vector
if a is not None:
    pooled.draw_pooled(a)
