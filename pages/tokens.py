"""Tokens and [CLS] attention: what the first token reads from the rest of the text."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import tokens

st.title(t("tokens.title"))
st.caption(t("tokens.intro"))
a = ui.current_classifier_analysis()  # a token classifier: its tokens with their tags, no [CLS] views
if a is not None:
    tokens.draw_tokens(a)
