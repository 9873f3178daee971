"""The Data page (pages/data.py): a CSV's labels checked (problem type, counts, issues), against the sidebar's
checkpoint (accuracy before and after the best label mapping, its confusion) with both fixes; token data's tag
checks. Its pair-column picker is the Label audit's and Fine-tune's too (one value for all three)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import streamlit as st

from explorer import plots
from explorer.text.errors import ExplorerError
from explorer.ui import (DataSource, checkpoint, drop_data_versions, headers, lang, memo, plain, selection,
                         set_data_source, show_error, sticky, t, timed)


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


def draw_tag_data(raw: bytes, name: str) -> None:
    """Token data (a CoNLL file, a tokens/tags CSV) on the Data page: the tag checks, against the chosen
    checkpoint when asked, and then the page stops. Sentence data (and files no reader takes, which the
    CSV reader words itself) pass through untouched."""
    from explorer.data import tags
    from explorer.data.tag_report import tag_report

    try:
        if tags.layout(raw, name) == "csv":
            return
    except ExplorerError:
        return
    sel = selection()
    digest = hashlib.sha1(raw).hexdigest()
    # The Fine-tune page trains a token head on it (views.finetune), whichever checkpoint is picked.
    set_data_source(DataSource(raw, name, "", "", origin=digest))
    use_ck = draw_compare_checkbox(st, sel.name)
    try:
        ck = checkpoint(sel.name, sel.seed) if use_ck else None
        with st.status(t("data.checking", name=plain(sel.name)) if use_ck else t("data.reading"),
                       expanded=False) as status:
            key = (digest, name, sel.name if use_ck else None, sel.seed)
            report, seconds = memo("data_tags", key, lambda: timed(lambda: tag_report(
                tags.read_tags(raw, id2label=ck.model.config.id2label if ck else None, name=name), ck)))
            status.update(label=t("data.checked", seconds=f"{seconds:.1f}"), state="complete")
    except ExplorerError as err:
        show_error(err)
        st.stop()
    set_data_source(DataSource(raw, name, "", "", tuple(n for n, _ in report.tags), origin=digest))
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
