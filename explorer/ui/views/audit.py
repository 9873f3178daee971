"""The Label audit page (pages/audit.py): the audit seen whole, its features projected to 2-D and the confusion
matrix whose cell click selects that cell's rows."""
from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.ui import lang, memo, plain, t, tn


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
