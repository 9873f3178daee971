"""Data & labels: upload a CSV (or use the demo) and see at once what is wrong with its labels."""
import hashlib
import json

import streamlit as st

from explorer import ui
from explorer.data.dataset import MAX_BYTES, demo_csv, header_pair, read_csv
from explorer.data import labels, mapping, names
from explorer.text.errors import ExplorerError
from explorer.ui import sticky, t
from explorer.ui.views import data as data_view

ss = st.session_state
st.title(t("data.title"))
st.caption(t("data.intro"))


def _forget_upload() -> None:  # the user removed the file from the uploader
    if ss.get("data_upload") is None:
        ss.pop("data_uploaded", None)


# Choices are sticky across pages; an uploader comes back empty, so the file's bytes are kept in session state.
source = st.radio(t("data.source"), ["demo", "upload"], horizontal=True, format_func=lambda s: t(f"data.source_{s}"),
                  **sticky("data_source", "demo"))
if source == "upload":
    up = st.file_uploader(t("data.upload", mb=MAX_BYTES // 2**20), type=["csv", "tsv", "txt", "conll", "iob"], key="data_upload",
                          on_change=_forget_upload)
    if up is not None:
        ss["data_uploaded"] = ui.Upload(up.getvalue(), up.name)
    kept = ss.get("data_uploaded")
    if kept is None:
        st.info(t("data.upload_first"))
        st.stop()
    if up is None:  # the uploader is empty after a page switch: no × to remove the kept file with
        st.caption(t("data.kept_upload_button", name=ui.plain(kept.name)))
        st.button(t("data.forget_upload", name=ui.plain(kept.name)), key="data_forget", on_click=ss.pop, args=("data_uploaded",))
    raw, name = kept.bytes, kept.name
else:
    left, right = st.columns(2)
    per_class = left.number_input(t("data.per_class"), 10, 1000, step=10, **sticky("data_per_class", 60))
    permute = right.checkbox(t("data.permute"), **sticky("data_permute", False))
    raw, name = demo_csv(int(per_class), permuted=permute), "demo.csv"

# Fixes the user applied (merges, mappings, accepted audit suggestions) make versions of this file.
version = ui.data_version(digest := hashlib.sha1(raw).hexdigest())
raw = version.bytes if version else raw
data_view.draw_tag_data(raw, name)  # token data (CoNLL, tokens/tags CSV): the tag checks, and the page stops there
try:
    table = read_csv(raw, name=name)
except ExplorerError as err:
    ui.show_error(err)
    st.stop()
for note in table.notes:
    st.warning(ui.plain(note.message(ui.lang())))
cols = ["—"] + list(table.frame.columns)
data_view.preset_guessed_columns(table.frame, cols, "data_text_column", "data_label_column")
c1, c2, c3, c4 = st.columns(4)
text_col = c1.selectbox(t("data.text_column"), cols, **sticky("data_text_column"))
label_col = c2.selectbox(t("data.label_column"), cols, **sticky("data_label_column"))
pair_col = data_view.draw_pair_column(c3, table.frame.columns, (header_pair(table.frame.columns) or ("", ""))[1])
ck_name, seed = ui.selection().name, ui.selection().seed
use_ck = data_view.draw_compare_checkbox(c4, ck_name)
use_ck = use_ck and not ui.show_other_prompt()  # "other…" with no path: the report without a checkpoint

# Predicting takes seconds: the report is redone only when its inputs change, showing its status and time.
report_key = (hashlib.sha1(raw).hexdigest(), text_col, label_col, pair_col, ck_name if use_ck else None, seed)
try:
    ck = ui.checkpoint(ck_name, seed) if use_ck else None
    with st.status(t("data.checking", name=ui.plain(ck_name)) if use_ck else t("data.reading"), expanded=False) as status:
        guess = lambda c: None if c == "—" else c  # noqa: E731
        report, seconds = ui.memo("data_report", report_key, lambda: ui.timed(
            lambda: labels.label_report(table, guess(text_col), guess(label_col), ck, text_pair_column=pair_col)))
        status.update(label=t("data.checked", seconds=f"{seconds:.1f}"), state="complete")
except ExplorerError as err:
    ui.show_error(err)
    st.stop()
src = ui.set_data_source(ui.DataSource(
    raw, name, report.text_column, ",".join(report.label_columns), tuple(sorted(n for n, _ in report.labels)), pair_col,
    tuple(table.frame.columns), digest, *((version.number, version.changed) if version else ()),
    mapping=tuple((report.suggested_mapping or {}).items()), mapping_checkpoint=ck_name if ck else ""))
data_view.draw_data_in_use(src, report)

data_view.draw_label_summary(report)


def _keep(fixed_bytes: bytes, mapping: dict | None = None) -> None:
    ui.add_data_version(digest, raw, fixed_bytes)
    if mapping:  # the other fix, a corrected config.json, stays on offer
        ss["data_mapping"] = ui.AppliedMapping(digest, ck_name, mapping)


for i, issue in enumerate(report.issues):
    st.warning(f"**{t('data.issue_' + issue.kind)}**: {ui.plain(issue.message.message(ui.lang()))}")
    if issue.kind == "near_duplicate_labels":
        merged = names.merge_labels(table.frame, report.label_columns[0], issue.detail["merge"])
        st.button(t("data.merge"), key=f"data_merge_{i}", on_click=_keep, args=(merged.to_csv(index=False).encode(),))
for trap in report.traps:
    st.info(ui.plain(trap.message(ui.lang())))

applied = ss.get("data_mapping")
offer = applied.mapping if applied and (applied.digest, applied.checkpoint) == (digest, ck_name) and ck else None
if report.confusion is not None:
    data_view.draw_mapping_check(report)
if report.suggested_mapping:
    st.table([{t("data.col_csv"): ui.plain(a), t("data.col_checkpoint"): ui.plain(b)}  # st.table renders Markdown
              for a, b in report.suggested_mapping.items()])
    fixed_csv = labels.corrected_csv(table, report, raw=True)  # the data the next pages read: cells as they came
    st.button(t("data.apply"), key="data_apply", on_click=_keep, args=(fixed_csv, report.suggested_mapping))
    data_view.draw_label_fixes(report, labels.corrected_csv(table, report), name)
    offer = report.suggested_mapping
data_view.draw_misclassified(report)
if offer is not None:
    if not report.suggested_mapping:
        st.success(t("data.mapping_applied", name=ui.plain(ck_name)))
    st.download_button(t("data.export_config"), json.dumps(mapping.corrected_config(ck, offer), indent=1),
                       file_name="config.json", mime="application/json", key="data_export", on_click="ignore")
