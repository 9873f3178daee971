"""Data & labels: upload a CSV (or use the demo) and see at once what is wrong with its labels."""
import streamlit as st

from explorer.ui import t
from explorer.ui.views import data as data_view

st.title(t("data.title"))
st.caption(t("data.intro"))
src = data_view.draw_source()  # the demo or an upload, as its latest fixed version
data_view.draw_tag_data(src)  # token data (CoNLL, tokens/tags CSV): the tag checks, and the page stops there
table = data_view.read_table(src)
text_col, label_col, pair_col, use_ck = data_view.draw_columns(table)
report, ck, src = data_view.run_label_report(src, table, text_col, label_col, pair_col, use_ck)
data_view.draw_data_in_use(src, report)
data_view.draw_label_summary(report)
data_view.draw_issues(src, table, report)
data_view.draw_mapping(src, table, report, ck)
