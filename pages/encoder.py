"""Inside the encoder: the head read out at every layer, the head view and the model view."""
import streamlit as st

from explorer.plots import encoder as encoder_plots
from explorer.ui import current_analysis, encoder_view, t, token_pages

st.title(t("encoder.title"))
st.caption(t("encoder.intro"))

a = None if token_pages.encoder() else current_analysis()  # a token classifier: read out per token
if a is not None:
    st.subheader(t("encoder.readout_title"))
    st.plotly_chart(encoder_plots.readout(a, t), key="encoder_readout")
    st.info(t("encoder.readout_caution"))
    encoder_view.attention_views(a)
