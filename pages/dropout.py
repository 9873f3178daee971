"""Dropout: what the head's dropout layers would do if they were switched on."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import dropout

st.title(t("dropout.title"))
st.caption(t("dropout.intro"))
a = ui.current_vector_analysis("dropout_token")  # a token classifier: one picked token
if a is not None:
    dropout.draw_dropout(a)
