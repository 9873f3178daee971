"""The Label audit page (pages/audit.py): the audit seen whole, its features projected to 2-D and the confusion
matrix whose cell click selects that cell's rows; the rows, each opening in Attributions; the review of its
suggestions, and their export (the next version of the data, a corrected CSV, a report)."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import streamlit as st

from explorer.ui import (DataRun, DataSource, Selection, checkpoint, draw_example, lang, memo, open_row, picked_row,
                         plain, t, tn, use_data_version)

ss = st.session_state


def draw_audit_preview() -> None:
    """Before the first audit: an example of the chart it draws."""
    from explorer.plots.examples import audit_example

    draw_example(audit_example(t), "audit_example")


def draw_audit(run: DataRun, src: DataSource, sel: Selection) -> None:
    """The audit `run` on `src` for the sidebar's `sel`: summary, projector, confusion matrix, the rows (each
    opening in Attributions), the review and the exports."""
    found = run.found
    draw_audit_summary(found)
    flag = np.zeros(len(found.data.texts), bool)
    flag[found.flagged] = True
    draw_audit_projector(found, flag, run.key, sel.seed)
    rows = draw_audit_confusion(found)
    if not len(rows) and not len(found.flagged):  # nothing flagged, no cell picked: the summary's all-clear says so
        return
    draw_audit_rows(found, rows, flag, src, sel)
    draw_audit_review(run, src)


def draw_audit_summary(found) -> None:
    """The audit's notes, its rows, flagged rows, estimated noise and cross-validated accuracy, and the features
    it read."""
    s = found.summary()
    for note in found.notes:
        st.info(plain(note.message(lang())))
    m = st.columns(4)
    m[0].metric(t("audit.rows"), len(found.data.texts))
    m[1].metric(t("audit.flagged"), s["flagged"])
    m[2].metric(t("audit.noise"), f"{s['estimated_noise_rate']:.1%}")
    m[3].metric(t("audit.cv_accuracy"), "—" if s["cv_accuracy"] is None else f"{s['cv_accuracy']:.1%}")
    st.caption(t("audit.features_used", features=t(f"audit.pool_{found.features}")))  # too long for a metric
    if not len(found.flagged):
        st.success(tn("audit.all_clear", len(found.data.texts)), icon=":material/check_circle:")


def draw_audit_projector(found, flag, key: tuple, seed: int) -> None:
    """The audit's features projected to 2-D, coloured by given or suggested label or by flag (the
    Label audit page); `flag` marks the flagged rows, `key` names the audit run for the memo."""
    from explorer.model.problem import ProblemType
    from explorer.explain.projector import available, project
    from explorer.plots import audit as aplots

    data = found.data
    st.subheader(t("audit.projector"))
    p1, p2 = st.columns(2)
    method = p1.radio(t("audit.method"), available(), key="audit_method", horizontal=True,
                      format_func=lambda x: x.upper())
    # Regression values are not groups: colour by flag only.
    colour = p2.radio(t("audit.colour"), ("flag",) if data.problem_type == ProblemType.REGRESSION else ("given", "predicted", "flag"),
                      key="audit_colour", horizontal=True, format_func=lambda x: t(f"audit.colour_{x}"))
    proj = memo("audit_projection", (key, method), lambda: project(found.vectors, method=method, seed=seed))
    if proj.subsampled:
        st.caption(t("audit.subsampled", shown=len(proj.rows), total=proj.total))
    name_of = {"given": found.given, "predicted": found.suggested,
               "flag": lambda r: t("audit.is_flagged") if flag[r] else t("audit.not_flagged")}[colour]
    st.plotly_chart(aplots.projection(proj.xy, [str(name_of(r)) for r in proj.rows], texts=list(data.texts),
                                      rows=proj.rows,
                                      title=t("audit.projector_title", method=proj.method.upper()),
                                      legend=t(f"audit.colour_{colour}")), key="audit_projector")


def draw_audit_confusion(found) -> np.ndarray:
    """Given against predicted label (single-label data), where a click on a cell selects its rows.
    Returns the rows to list: the clicked cell's, least label quality first, else the flagged ones."""
    from explorer.model.problem import ProblemType, confusion_counts
    from explorer.plots import audit as aplots

    data = found.data
    if data.problem_type != ProblemType.SINGLE:
        return found.flagged
    st.subheader(t("audit.confusion"))
    names, pred = list(data.label_names), found.predicted
    counts = confusion_counts(data.y, pred, len(names))
    # A chart's selection cannot be set from code: clearing it draws the chart under a new key.
    cleared = st.session_state.get("audit_cell_cleared", 0)
    event = st.plotly_chart(aplots.confusion_cells(counts, names, cols=names, title=t("audit.confusion_title"),
                                                   x_title=t("audit.predicted_axis"), y_title=t("audit.given_axis"),
                                                   count_name=t("audit.count")),
                            key=f"audit_confusion_{cleared}", on_select="rerun", selection_mode="points")
    points = event.selection.points if event else []
    if not points:
        st.caption(t("audit.click_cell"))
        return found.flagged
    given, predicted = (int(v) for v in points[0]["customdata"])  # x and y are the escaped names
    cell = np.flatnonzero((data.y == given) & (pred == predicted))
    rows = cell[np.argsort(found.quality[cell], kind="stable")]
    st.caption(t("audit.cell", given=plain(names[given]), predicted=plain(names[predicted]), n=len(rows)))
    st.button(t("audit.clear_cell"), key="audit_clear_cell", help=t("audit.clear_cell_help"),
              on_click=lambda: st.session_state.update(audit_cell_cleared=cleared + 1))
    return rows


def draw_audit_rows(found, rows: np.ndarray, flag: np.ndarray, src: DataSource, sel: Selection) -> None:
    """The rows listed (a cell's, else the flagged ones): a click opens the row in Attributions, explaining its
    given or its suggested label."""
    data = found.data
    st.subheader(t("audit.rows_title"))
    target = st.radio(t("audit.open_with"), ("given", "suggested"), key="audit_open_with", horizontal=True,
                      format_func=lambda x: t(f"audit.open_{x}"))
    table = pd.DataFrame({
        t("audit.col_row"): rows, t("audit.col_flag"): ["⚑" if flag[r] else "" for r in rows],
        t("audit.col_given"): [str(found.given(r)) for r in rows],
        t("audit.col_suggested"): [str(found.suggested(r)) for r in rows],
        t("audit.col_score"): found.quality[rows].round(3),
        t("audit.col_text"): [data.texts[r] for r in rows],
        **({t("audit.col_text_pair"): [data.text_pairs[r] for r in rows]} if data.text_pairs else {})})
    if found.p_given is not None and not found.p_given_is_quality:  # else the score is it: no twin column
        table.insert(5, t("audit.col_p_given"), found.p_given[rows].round(3))
    st.dataframe(table, key="audit_rows", selection_mode="single-row", hide_index=True, on_select=functools.partial(
        _open_in_attributions, found, [int(r) for r in rows], target, src, sel))


def _open_in_attributions(found, shown: list[int], target: str, src: DataSource, sel: Selection) -> None:
    from explorer.data.mapping import checkpoint_target

    row = picked_row("audit_rows", shown)
    if row is None:
        return
    value = found.given(row) if target == "given" else found.suggested(row)
    label = checkpoint_target(value, found.problem_type, checkpoint(sel.name, sel.seed), src.mapping_for(sel.name))
    data = found.data
    open_row({"text": data.texts[row], "text_pair": data.text_pairs[row] if data.text_pairs else "",
              "attr_target_label": label}, "pages/attributions.py")


def draw_audit_review(run: DataRun, src: DataSource) -> None:
    """Accept or reject each suggestion, then export: the accepted fixes as the next version of the data (Fine-tune
    and a new audit use it), a corrected CSV, the audit's report."""
    from explorer.data.audit_export import relabelled_csv, report_html

    found, table = run.found, run.table
    data = found.data
    st.subheader(t("audit.review"))
    st.caption(t("audit.review_help"))
    if ss.get("audit_accepted_run") != run.key:  # a new audit: nothing of it accepted yet
        ss["audit_accepted_run"], ss["audit_accepted"] = run.key, set()
    accepted = ss["audit_accepted"]
    review = pd.DataFrame({
        "accept": [int(r) in accepted for r in found.flagged], "row": found.flagged,
        "given": [str(found.given(r)) for r in found.flagged],
        "suggested": [str(found.suggested(r)) for r in found.flagged],
        "score": found.quality[found.flagged].round(3), "text": [data.texts[r] for r in found.flagged]})
    edited = st.data_editor(review, key="audit_review", hide_index=True,
                            disabled=["row", "given", "suggested", "score", "text"],
                            column_config={c: st.column_config.Column(t(f"audit.col_{c}")) for c in review.columns})
    ss["audit_accepted"] = accepted = {int(r) for r in edited.loc[edited["accept"], "row"]}
    # One per line: side by side in thirds, their labels ("... next version", "... (3 rows changed)") were cut.
    d0 = d1 = d2 = st.container(key="audit_exports")
    stem = src.name.rsplit(".", 1)[0]
    fixed_csv = relabelled_csv(table, found, accepted, raw=True)  # data, as it came
    d0.button(tn("audit.use_fixes", len(accepted)), key="audit_use", disabled=not accepted, type="primary",
              on_click=use_data_version, args=(src, fixed_csv))
    d1.download_button(tn("audit.download_csv", len(accepted)), relabelled_csv(table, found, accepted),
                       file_name=f"{stem}-corrected.csv", mime="text/csv", key="audit_csv", help=t("plain.csv_guard"),
                       on_click="ignore")
    d2.download_button(t("audit.download_report"), report_html(found, accepted, src.name, lang()),
                       file_name=f"{stem}-label-audit.html", mime="text/html", key="audit_report", on_click="ignore")
