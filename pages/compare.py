"""Compare heads: one encoder pass, every head kind on top of it."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import compare

st.title(t("compare.title"))
st.caption(t("compare.intro"))
a = ui.current_vector_analysis("compare_token")  # a token classifier: one picked token
if a is not None:
    compare.draw_compare(a)
