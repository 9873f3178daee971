"""Scan: one report of what is wrong with the checkpoint on the Data page's CSV and its labels: every check that
applies (explorer.scan), run as one queued job with progress per check and Stop; findings by severity, causes
first, each opening to its evidence and to the page that shows it."""
import streamlit as st

from explorer import ui
from explorer.scan import scan_table
from explorer.ui.views import scan as scan_view, data as data_view

src, sel = ui.open_data_page("scan")
pair = data_view.draw_pair_column(st, src.columns, src.text_pair_column)
ck = ui.checkpoint(sel.name, sel.seed)
run = ui.run_on_data("scan", src, src.key(pair, *sel.key("name", "seed")), lambda table, progress: scan_table(
    ck, table, src.text_column, src.label_column, pair, seed=sel.seed, progress=progress),
    expected_s=len(src.bytes) / 2000,  # until one has run: about 25 rows/s of 80 bytes
    draw_what_comes=scan_view.draw_what_comes)
scan_view.draw_report(run.found, src.name, one_text=not pair)
