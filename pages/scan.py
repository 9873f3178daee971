"""Scan: one report of what is wrong with the checkpoint on the Data page's CSV and its labels: every check that
applies (explorer.scan), run as one queued job with progress per check and Stop; findings by severity, causes
first, each opening to its evidence and to the page that shows it."""
import hashlib

import streamlit as st

from explorer import ui
from explorer.data.dataset import read_csv
from explorer.scan import scan_table
from explorer.ui import t
from explorer.ui.views import scan as scan_view, data as data_view

st.title(t("scan.title"))
st.caption(t("scan.intro"))
if ui.show_other_prompt():
    st.stop()
src = ui.data_source()  # the Data page's current version; the demo tweets until then
name, seed = ui.selection().name, ui.selection().seed
st.caption(t("scan.data", name=ui.plain(src.title()), checkpoint=ui.plain(name)))
pair = data_view.draw_pair_column(st, src.columns, src.text_pair_column)
pressed = st.button(t("scan.run"), key="scan_run", type="primary")
ck, key = ui.checkpoint(name, seed), (hashlib.sha1(src.bytes).hexdigest(), src.text_column, src.label_column, pair,
                                      name, seed)
report = scan_view.run_scan(key, lambda progress: scan_table(  # in a job slot: a class's scans wait in line
    ck, read_csv(src.bytes,
                 name=src.name), text_column=src.text_column, label_column=src.label_column, text_pair_column=pair,
                 seed=seed, progress=progress),
    pressed, expected_s=len(src.bytes) / 2000)  # until one has run: about 25 rows/s of 80 bytes
if report is None:
    scan_view.draw_what_comes()
    st.stop()
scan_view.draw_report(report, src.name, one_text=not pair)
