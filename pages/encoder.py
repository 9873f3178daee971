"""Inside the encoder: the head read out at every layer, the head view and the model view."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import encoder

st.title(t("encoder.title"))
st.caption(t("encoder.intro"))
a = ui.current_classifier_analysis()  # a token classifier: read out per token
if a is not None:
    encoder.draw_encoder(a)
