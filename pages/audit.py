"""Label audit: which rows of the Data page's CSV look mislabelled, seen whole (projector, confusion
matrix) and row by row (open one in Attributions, accept or reject its suggested label)."""
import streamlit as st

from explorer import ui
from explorer.data.audit import audit
from explorer.data.dataset import prepare
from explorer.ui import t
from explorer.ui.views import audit as audit_view, data as data_view, scan as scan_view

src, sel = ui.open_data_page("audit")
scan_view.draw_landing_note("pages/audit.py")
c1, c2 = st.columns(2)
folds = int(c1.number_input(t("audit.folds"), 2, 20, help=t("audit.folds_help"), **ui.sticky("audit_folds", 5)))
pair = data_view.draw_pair_column(c2, src.columns, src.text_pair_column)
ck, lang = ui.checkpoint(sel.name, sel.seed), ui.lang()
found = ui.run_on_data("audit", src, src.key(pair, folds, *sel.key("name", "seed")), lambda table, progress: audit(
    ck, prepare(table, src.text_column, src.label_column, text_pair_column=pair), folds, seed=sel.seed,
    progress=progress, lang=lang), expected_s=len(src.bytes) / 4000,  # about 50 rows/s of 80 bytes, until one has run
    draw_what_comes=audit_view.draw_audit_preview)
audit_view.draw_audit(found, src, sel)
