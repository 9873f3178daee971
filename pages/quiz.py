"""Review quiz with instant feedback and links to the live panels."""
import streamlit as st

from explorer.ui import t
from explorer.ui.views import quiz

st.title(t("quiz.title"))
st.caption(t("quiz.intro"))
quiz.draw_quiz()
