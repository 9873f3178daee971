"""Landing page: where to start (the three ways in, the text box), then the live chain for the typed text."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import home

st.title(t("home.title"))
home.draw_start()
a = ui.current_classifier_analysis()
if a is not None:
    home.draw_pipeline(a)
