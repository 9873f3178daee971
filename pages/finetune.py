"""Fine-tune: train a private copy of the sidebar's checkpoint on the Data page's CSV (or the demo)."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import finetune

st.title(t("finetune.title"))
st.caption(t("finetune.intro"))
if not ui.show_other_prompt():
    finetune.draw_finetune(ui.data_source())  # the Data page's data, or the demo
