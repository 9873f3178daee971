"""The Data page (pages/data.py): a CSV's labels checked (problem type, counts, issues), against the sidebar's
checkpoint (accuracy before and after the best label mapping, its confusion) with both fixes; token data's tag
checks. Its pair-column picker is the Label audit's and Fine-tune's too (one value for all three)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import streamlit as st

from explorer import plots
from explorer.text.errors import ExplorerError
from explorer.ui import (AppliedMapping, DataSource, Upload, check_data, checkpoint, drop_data_versions, file_source,
                         headers, lang, plain, run_or_stop, selection, set_data_source, show_other_prompt, sticky, t,
                         use_data_version)

ss = st.session_state
NONE = "—"  # a column picker's "no column"


def draw_source() -> DataSource:
    """The file the page reads: the demo tweets (how many per label, their labels permuted or not) or an upload,
    as its latest fixed version. Choices are sticky across pages; an uploader comes back empty, so the file's bytes
    are kept in session state. Without a file yet, it asks for one and the page stops."""
    from explorer.data.dataset import MAX_BYTES, demo_csv

    source = st.radio(t("data.source"), ["demo", "upload"], horizontal=True,
                      format_func=lambda s: t(f"data.source_{s}"), **sticky("data_source", "demo"))
    if source == "demo":
        left, right = st.columns(2)
        per_class = left.number_input(t("data.per_class"), 10, 1000, step=10, **sticky("data_per_class", 60))
        permute = right.checkbox(t("data.permute"), **sticky("data_permute", False))
        return file_source(demo_csv(int(per_class), permuted=permute), "demo.csv")
    up = st.file_uploader(t("data.upload", mb=MAX_BYTES // 2**20), type=["csv", "tsv", "txt", "conll", "iob"],
                          key="data_upload", on_change=_forget_upload)
    if up is not None:
        ss["data_uploaded"] = Upload(up.getvalue(), up.name)
    kept = ss.get("data_uploaded")
    if kept is None:
        st.info(t("data.upload_first"))
        st.stop()
    if up is None:  # the uploader is empty after a page switch: no × to remove the kept file with
        st.caption(t("data.kept_upload_button", name=plain(kept.name)))
        st.button(t("data.forget_upload", name=plain(kept.name)), key="data_forget", on_click=ss.pop,
                  args=("data_uploaded",))
    return file_source(kept.bytes, kept.name)


def _forget_upload() -> None:  # the user removed the file from the uploader
    if ss.get("data_upload") is None:
        ss.pop("data_uploaded", None)


def read_table(src: DataSource):
    """`src` read as a table, its reader's notes (an encoding guessed, …) as warnings; bad input is one line and
    the page stops."""
    from explorer.data.dataset import read_csv

    table = run_or_stop(lambda: read_csv(src.bytes, name=src.name))
    for note in table.notes:
        st.warning(plain(note.message(lang())))
    return table


def draw_columns(table) -> tuple[str | None, str | None, str, bool]:
    """The pickers of the text, label and text B columns, started on the columns the report would guess, and the
    "Check against the checkpoint" box. Returns (text, label, pair) columns (None or "" for none) and whether to
    check against the checkpoint ("other…" with no path: the report without one)."""
    from explorer.data.dataset import header_pair

    cols = [NONE, *table.frame.columns]
    preset_guessed_columns(table.frame, cols, "data_text_column", "data_label_column")
    c1, c2, c3, c4 = st.columns(4)
    text_col = c1.selectbox(t("data.text_column"), cols, **sticky("data_text_column"))
    label_col = c2.selectbox(t("data.label_column"), cols, **sticky("data_label_column"))
    pair_col = draw_pair_column(c3, table.frame.columns, (header_pair(table.frame.columns) or ("", ""))[1])
    use_ck = draw_compare_checkbox(c4, selection().name) and not show_other_prompt()
    return (None if text_col == NONE else text_col), (None if label_col == NONE else label_col), pair_col, use_ck


def run_label_report(src: DataSource, table, text_col: str | None, label_col: str | None, pair_col: str, use_ck: bool):
    """The label report of `src` (and against the sidebar's checkpoint with `use_ck`), kept for its inputs, in a
    status line that says how long it took; then the data every other page reads (set_data_source). Returns
    (report, checkpoint or None, that data)."""
    from explorer.data.labels import label_report

    sel = selection()
    ck = run_or_stop(lambda: checkpoint(sel.name, sel.seed)) if use_ck else None
    report = check_data("data_report", src.key(text_col, label_col, pair_col, sel.name if ck else None, sel.seed),
                        lambda: label_report(table, text_col, label_col, ck, text_pair_column=pair_col),
                        running=t("data.checking", name=plain(sel.name)) if ck else t("data.reading"))
    return report, ck, set_data_source(DataSource(
        src.bytes, src.name, report.text_column, ",".join(report.label_columns),
        tuple(sorted(n for n, _ in report.labels)), pair_col, tuple(table.frame.columns), src.origin, src.version,
        src.changed, mapping=tuple((report.suggested_mapping or {}).items()),
        mapping_checkpoint=sel.name if ck else ""))


def draw_pair_column(where, columns, guess: str | None) -> str:
    """The "Text B / pair column" picker of the Data, Label audit and Fine-tune pages (one value for all
    three): a file with other columns starts it at `guess` (the header's pair, or the Data page's pick),
    "—" is one text. Returns the column, or "" for none."""
    ss = st.session_state
    options = ["—", *columns]
    if ss.get("data_pair_columns") != tuple(columns) or ss.get("data_pair_column") not in options:
        ss["data_pair_columns"] = tuple(columns)
        ss["data_pair_column"] = guess if guess in columns else "—"
    picked = where.selectbox(t("data.pair_column"), options, **sticky("data_pair_column"))
    return "" if picked == "—" else picked


def preset_guessed_columns(frame, cols: list[str], text_key: str, label_key: str) -> None:
    """Start the column pickers on the columns the report would guess (guess_columns) when they hold
    no column of this file, so the page shows what it uses instead of "—"."""
    from explorer.data.dataset import guess_columns

    ss = st.session_state
    if not {ss.get(text_key), ss.get(label_key)} - set(cols):
        return
    try:
        text, labels = guess_columns(frame)
    except ExplorerError:
        text, labels = "—", ()
    for key, value in ((text_key, text), (label_key, ",".join(labels))):
        ss[key] = value if value in cols else "—"  # several 0/1 label columns: "—" (data_in_use names them)


def draw_compare_checkbox(where, name: str) -> bool:
    """The Data page's "Check against '<checkpoint>'" box. A folder is named by its last part, in full in the
    help: a path has no space to wrap at, and a narrow column cut it to '…/sent…'."""
    short = Path(name).name or name
    return where.checkbox(t("data.compare", name=plain(short)), help=plain(name) if short != name else None,
                          **sticky("data_compare", True))


def draw_data_in_use(src, report) -> None:
    """Which file, which fixed version of it and which columns Label audit and Fine-tune use; a way
    back to the file as given."""
    pair = {"pair": plain(src.text_pair_column)} if src.text_pair_column else {}
    st.caption(t("data.using_pair" if pair else "data.using", title=plain(src.title()), text=plain(report.text_column),
                 labels=plain(", ".join(report.label_columns)), **pair))
    if src.version > 1:
        st.button(t("data.original"), key="data_original", on_click=drop_data_versions, args=(src.origin,))


def draw_label_summary(report) -> None:
    """A label report's rows, problem type, loss and label counts (the Data page)."""
    # The loss is a class name (CrossEntropyLoss, BCEWithLogitsLoss): in a third of the row it was cut to "…".
    m1, m2 = st.columns([1, 2])
    m1.metric(t("data.rows"), report.rows)
    m2.metric(t("data.problem_type"), t(f"data.ptype_{report.problem_type}"), help=report.problem_type)
    st.metric(t("data.loss"), report.loss)
    if report.labels:
        names, counts = zip(*report.labels)
        st.plotly_chart(plots.label_bars(names, counts, title=t("data.counts_title"), x_title=t("data.label_axis"),
                                         y_title=t("data.count_axis"), fmt=".0f"), key="data_counts")
    if not report.issues:
        st.success(t("data.no_issues"))


def draw_mapping_check(report) -> None:
    """The CSV's labels against the checkpoint's predictions: accuracy before and after the best
    one-to-one mapping, and the confusion behind it (the Data page)."""
    st.subheader(t("data.mapping_title"))
    a1, a2 = st.columns(2)
    metric = "acc" if report.agreement == "accuracy" else "f1"  # multi-label: mean per-label F1
    a1.metric(t(f"data.{metric}_before"), f"{report.accuracy_before:.1%}")
    a2.metric(t(f"data.{metric}_after"), f"{report.accuracy_after:.1%}")
    rows, cols = list(report.confusion_rows), list(report.confusion_cols)
    # Columns in the rows' order where the names match, so the diagonal is "same name" and a permutation shows
    # off it; the checkpoint's own id order, when it differs, is said in a caption.
    order = [cols.index(n) for n in rows if n in cols] + [j for j, n in enumerate(cols) if n not in rows]
    st.plotly_chart(plots.confusion_heatmap(np.asarray(report.confusion)[:, order], rows, cols=[cols[j] for j in order],
                                            title=t("data.confusion_title"), x_title=t("data.predicted_axis"),
                                            y_title=t("data.csv_axis"),
                                            count_name=t("data.count_axis")),
                    key="data_confusion")
    if order != sorted(order):
        st.caption(t("data.confusion_order", ids=plain(", ".join(f"{j}: {n}" for j, n in enumerate(cols)))))


def draw_tag_data(src: DataSource) -> None:
    """Token data (a CoNLL file, a tokens/tags CSV) on the Data page: the tag checks, against the chosen
    checkpoint when asked, and then the page stops. Sentence data (and files no reader takes, which the
    CSV reader words itself) pass through untouched."""
    from explorer.data import tags
    from explorer.data.tag_report import tag_report

    try:
        if tags.layout(src.bytes, src.name) == "csv":
            return
    except ExplorerError:
        return
    sel = selection()
    # The Fine-tune page trains a token head on it (views.finetune), whichever checkpoint is picked.
    set_data_source(src)
    use_ck = draw_compare_checkbox(st, sel.name)
    ck = run_or_stop(lambda: checkpoint(sel.name, sel.seed)) if use_ck else None
    report = check_data("data_tags", (src.digest, src.name, sel.name if ck else None, sel.seed), lambda: tag_report(
        tags.read_tags(src.bytes, id2label=ck.model.config.id2label if ck else None, name=src.name), ck),
        running=t("data.checking", name=plain(sel.name)) if ck else t("data.reading"))
    set_data_source(DataSource(src.bytes, src.name, "", "", tuple(n for n, _ in report.tags), origin=src.origin))
    draw_tag_checks(report)
    st.stop()


def draw_tag_checks(report) -> None:
    """A tag report: sizes and scheme, how labels meet subwords, tag counts, issues with examples of invalid
    sequences, and the mapping check against the checkpoint."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("data.tags_sentences"), report.sentences)
    m2.metric(t("data.tags_words"), report.words)
    m3.metric(t("data.tags_scheme"), report.scheme)
    for note in report.notes:
        st.info(plain(note.message(lang())))
    names, counts = zip(*report.tags)
    st.plotly_chart(plots.label_bars(names, counts, title=t("data.tags_counts_title"), x_title=t("data.label_axis"),
                                     y_title=t("data.count_axis"), fmt=".0f"), key="data_tag_counts")
    for issue in report.issues:
        st.warning(f"**{t('data.issue_' + issue.kind)}**: {plain(issue.message.message(lang()))}")
    if report.invalid_examples:
        st.dataframe([{t(f"data.tags_col_{k}"): v for k, v in row.items()} for row in report.invalid_examples],
                     key="data_tag_invalid")
    if report.confusion is not None:
        draw_mapping_check(report)
    if report.suggested_mapping:
        st.table([{t("data.col_csv"): plain(a), t("data.col_checkpoint"): plain(b)}
                  for a, b in report.suggested_mapping.items()])
    if not report.issues:
        st.success(t("data.no_issues"))


def draw_misclassified(report) -> None:
    """The rows the checkpoint gets wrong even after the mapping, if any."""
    if report.misclassified:
        st.caption(t("data.misclassified"))
        st.dataframe(headers(report.misclassified, "data.col_"), key="data_wrong")


def draw_label_fixes(report, fixed_csv: bytes, file_name: str) -> None:
    """Both fixes for a suggested label mapping: which side to change, the corrected CSV, and the
    id2label/label2id to paste into the checkpoint's config.json (the Data page)."""
    st.subheader(t("data.fix_title"))
    st.info(plain(report.fix["advice"].message(lang())))
    stem = file_name.rsplit(".", 1)[0] or "data"
    st.download_button(t("data.download_csv"), fixed_csv, file_name=f"{stem}-corrected.csv", mime="text/csv",
                       key="data_fixed_csv", help=t("plain.csv_guard"), on_click="ignore")
    st.caption(t("data.config_paste"))
    st.code(json.dumps(report.fix["config"], indent=1, ensure_ascii=False), language="json")


def draw_issues(src: DataSource, table, report) -> None:
    """The report's issues (near-duplicate label names with a button that merges them into the next version of
    the data) and its traps."""
    from explorer.data.names import merge_labels

    for i, issue in enumerate(report.issues):
        st.warning(f"**{t('data.issue_' + issue.kind)}**: {plain(issue.message.message(lang()))}")
        if issue.kind == "near_duplicate_labels":
            merged = merge_labels(table.frame, report.label_columns[0], issue.detail["merge"])
            st.button(t("data.merge"), key=f"data_merge_{i}", on_click=use_data_version,
                      args=(src, merged.to_csv(index=False).encode()))
    for trap in report.traps:
        st.info(plain(trap.message(lang())))


def draw_mapping(src: DataSource, table, report, ck) -> None:
    """The labels against the checkpoint `ck` (None: not checked): the mapping check, a suggested mapping with
    both fixes (the data's next version, a corrected config.json), the rows still wrong; once a mapping was
    applied to the data, the config.json stays on offer."""
    from explorer.data.labels import corrected_csv
    from explorer.data.mapping import corrected_config

    name = selection().name
    applied = ss.get("data_mapping")
    offer = applied.mapping if applied and (applied.digest, applied.checkpoint) == (src.origin, name) and ck else None
    if report.confusion is not None:
        draw_mapping_check(report)
    if report.suggested_mapping:
        st.table([{t("data.col_csv"): plain(a), t("data.col_checkpoint"): plain(b)}  # st.table renders Markdown
                  for a, b in report.suggested_mapping.items()])
        fixed_csv = corrected_csv(table, report, raw=True)  # the data the next pages read: cells as they came
        st.button(t("data.apply"), key="data_apply", on_click=_apply_mapping,
                  args=(src, fixed_csv, AppliedMapping(src.origin, name, report.suggested_mapping)))
        draw_label_fixes(report, corrected_csv(table, report), src.name)
        offer = report.suggested_mapping
    draw_misclassified(report)
    if offer is not None:
        if not report.suggested_mapping:
            st.success(t("data.mapping_applied", name=plain(name)))
        st.download_button(t("data.export_config"), json.dumps(corrected_config(ck, offer), indent=1),
                           file_name="config.json", mime="application/json", key="data_export", on_click="ignore")


def _apply_mapping(src: DataSource, fixed_csv: bytes, applied: AppliedMapping) -> None:
    use_data_version(src, fixed_csv)
    ss["data_mapping"] = applied  # the other fix, a corrected config.json, stays on offer
