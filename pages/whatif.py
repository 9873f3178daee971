"""What-if: a second text (or an edited copy of the first) side by side, a live "drop this word", and the smallest
change that flips the prediction."""
import streamlit as st

from explorer import ui
from explorer.ui import t
from explorer.ui.views import whatif, scan as scan_view

st.title(t("whatif.title"))
st.caption(t("whatif.intro"))
a = ui.current_classifier_analysis()  # a token classifier: its tags in both texts
if a is not None:
    scan_view.draw_landing_note("pages/whatif.py")
    if ui.selection().text_pair:
        st.info(t("whatif.pair_kept"))
    whatif.draw_whatif(a, whatif.draw_second_text(ui.selection().text))
    whatif.draw_counterfactual(a)
