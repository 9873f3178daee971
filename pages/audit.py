"""Label audit: which rows of the Data page's CSV look mislabelled, seen whole (projector, confusion
matrix) and row by row (open one in Attributions, accept or reject its suggested label)."""
import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from explorer import plots, ui
from explorer.data.audit import audit
from explorer.data.audit_export import relabelled_csv, report_html
from explorer.data.dataset import prepare, read_csv
from explorer.data.mapping import checkpoint_target
from explorer.text.errors import ExplorerError
from explorer.ui import t, tn
from explorer.ui.views import audit as audit_view, data as data_view, scan as scan_view

ss = st.session_state
st.title(t("audit.title"))
st.caption(t("audit.intro"))
if ui.show_other_prompt():
    st.stop()
src = ui.data_source()  # set by the Data page; the demo tweets until then
name, seed = ui.selection().name, ui.selection().seed
st.caption(t("audit.data", name=ui.plain(src.title()), checkpoint=ui.plain(name)))
scan_view.draw_landing_note("pages/audit.py")
autostart = ss.pop("audit_autostart", False)  # opened from the scan's suspect rows: the audit runs at once
c1, c2 = st.columns(2)
folds = int(c1.number_input(t("audit.folds"), 2, 20, help=t("audit.folds_help"), **ui.sticky("audit_folds", 5)))
pair = data_view.draw_pair_column(c2, src.columns, src.text_pair_column)
key = (hashlib.sha1(src.bytes).hexdigest(), src.text_column, src.label_column, pair, name, seed, folds)

if getattr(ss.get("audit_result"), "key", None) != key:
    pressed = st.button(t("audit.run"), key="audit_run", type="primary") or autostart
    ck, lang = ui.checkpoint(name, seed), ui.lang()

    def work(progress):  # in a job slot (explorer/runtime/jobs.py): a class's audits wait in line
        table = read_csv(src.bytes)
        data = prepare(table, src.text_column, src.label_column, text_pair_column=pair)
        return audit(ck, data, folds, seed=seed, progress=progress, lang=lang), table

    try:
        done = ui.run("audit", key, work, heavy=True, start=pressed, running=t("audit.starting"), stop=t("audit.stop"),
                      expected_s=len(src.bytes) / 4000)  # about 50 rows/s of 80 bytes, until one has run
    except ExplorerError as err:
        ui.show_error(err)
        st.stop()
    if done is None:
        ui.draw_example(plots.examples.audit_example(t), "audit_example")  # what the run will draw
        st.stop()
    ss["audit_result"], ss["audit_accepted"] = ui.AuditRun(key, *done), set()
found, table = ss["audit_result"].found, ss["audit_result"].table
data = found.data
audit_view.draw_audit_summary(found)

# ---- projector, and the confusion matrix, where a click selects a cell's rows ------------------
flag = np.zeros(len(data.texts), bool)
flag[found.flagged] = True
audit_view.draw_audit_projector(found, flag, key, seed)
rows = audit_view.draw_audit_confusion(found)

# ---- rows: a click opens the row in Attributions ---------------------------------------------
if not len(rows) and not len(found.flagged):  # nothing flagged, no cell picked: the all-clear line of draw_audit_summary says so
    st.stop()
st.subheader(t("audit.rows_title"))
target = st.radio(t("audit.open_with"), ("given", "suggested"), key="audit_open_with", horizontal=True,
                  format_func=lambda x: t(f"audit.open_{x}"))
p_given = None if found.p_given_is_quality else found.p_given
table_rows = pd.DataFrame({
    t("audit.col_row"): rows, t("audit.col_flag"): ["⚑" if flag[r] else "" for r in rows],
    t("audit.col_given"): [str(found.given(r)) for r in rows],
    t("audit.col_suggested"): [str(found.suggested(r)) for r in rows],
    t("audit.col_score"): found.quality[rows].round(3),
    t("audit.col_text"): [data.texts[r] for r in rows],
    **({t("audit.col_text_pair"): [data.text_pairs[r] for r in rows]} if data.text_pairs else {})})
if p_given is not None:
    table_rows.insert(5, t("audit.col_p_given"), p_given[rows].round(3))
ss["audit_shown_rows"] = [int(r) for r in rows]  # what a selection's positions refer to


def _open_row() -> None:
    # A callback runs before the script, so the sidebar's text widget may still be changed here.
    picked = ss["audit_rows"].selection.rows
    if picked:
        row = ss["audit_shown_rows"][picked[0]]
        ss["text"], ss["text_pair"] = data.texts[row], data.text_pairs[row] if data.text_pairs else ""
        value, ck = found.given(row) if target == "given" else found.suggested(row), ui.checkpoint(name, seed)
        ss["attr_target_label"] = checkpoint_target(value, found.problem_type, ck, src.mapping_for(name))
        ss["audit_open"] = True


st.dataframe(table_rows, key="audit_rows", on_select=_open_row, selection_mode="single-row", hide_index=True)
if ss.pop("audit_open", False):
    st.switch_page("pages/attributions.py")

# ---- review: accept or reject each suggestion, then export -----------------------------------
st.subheader(t("audit.review"))
st.caption(t("audit.review_help"))
accepted = ss.setdefault("audit_accepted", set())
review = pd.DataFrame({
    "accept": [int(r) in accepted for r in found.flagged], "row": found.flagged,
    "given": [str(found.given(r)) for r in found.flagged],
    "suggested": [str(found.suggested(r)) for r in found.flagged],
    "score": found.quality[found.flagged].round(3), "text": [data.texts[r] for r in found.flagged]})
edited = st.data_editor(review, key="audit_review", hide_index=True, disabled=["row", "given", "suggested", "score", "text"],
                        column_config={c: st.column_config.Column(t(f"audit.col_{c}")) for c in review.columns})
ss["audit_accepted"] = accepted = {int(r) for r in edited.loc[edited["accept"], "row"]}
# One per line: side by side in thirds, their labels ("... next version", "... (3 rows changed)") were cut.
d0 = d1 = d2 = st.container(key="audit_exports")
stem = src.name.rsplit(".", 1)[0]
# Accepted fixes become the next version of the Data page's dataset: Fine-tune and a new audit use it.
fixed_csv = relabelled_csv(table, found, accepted, raw=True)  # data, as it came
d0.button(tn("audit.use_fixes", len(accepted)), key="audit_use", disabled=not accepted, type="primary",
          on_click=ui.use_data_version, args=(src, fixed_csv))
d1.download_button(tn("audit.download_csv", len(accepted)), relabelled_csv(table, found, accepted),
                   file_name=f"{stem}-corrected.csv", mime="text/csv", key="audit_csv", help=t("plain.csv_guard"), on_click="ignore")
d2.download_button(t("audit.download_report"), report_html(found, accepted, src.name, ui.lang()),
                   file_name=f"{stem}-label-audit.html", mime="text/html", key="audit_report", on_click="ignore")
