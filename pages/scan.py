"""Scan: one report of what is wrong with the checkpoint on the Data page's CSV and its labels: every check that
applies (explorer.scan), run as one queued job with progress per check and Stop; findings by severity, causes
first, each opening to its evidence and to the page that shows it."""
import streamlit as st

from explorer import ui
from explorer.scan import scan_table
from explorer.ui.views import scan as scan_view, data as data_view

src, sel = ui.open_data_page("scan")
pair = data_view.draw_pair_column(st, src.columns, src.text_pair_column)
base = scan_view.draw_baseline_picker(sel.name)  # a checkpoint to compare with, or None
ck, baseline = ui.checkpoint(sel.name, sel.seed), scan_view.baseline_checkpoint(base, sel.seed)
run = ui.run_on_data("scan", src, src.key(pair, base, *sel.key("name", "seed")), scan_view.scan_work(
    lambda c, table, progress: scan_table(c, table, text_column=src.text_column, label_column=src.label_column,
                                          text_pair_column=pair, seed=sel.seed, progress=progress), ck, baseline),
    expected_s=len(src.bytes) / 2000 * (2 if base else 1),  # until one has run: about 25 rows/s of 80 bytes, a scan
    draw_what_comes=scan_view.draw_scan_preview)
scan_view.draw_report(run.found, src.name, one_text=not pair)
