"""Sections of the longer pages, drawn from a core result: a page stays a list of widgets and calls."""
from __future__ import annotations

import json

import numpy as np
import streamlit as st

from explorer import plots
from explorer.model.problem import PIPELINE_FUNCTIONS, ProblemType
from explorer.ui.render import plain
from explorer.ui.session import lang, t


def pipeline_readings(a) -> None:
    """What transformers' pipeline() returns beside the model's own reading of the same logits: two
    metrics for the top label when the two functions differ (a one-output head: MSE on the raw value,
    a sigmoid in pipeline()), and one sentence saying which tool returns which."""
    own = ProblemType(a.problem_type)
    fn = {f: t(f"pipeline.fn_{f}") for f in PIPELINE_FUNCTIONS}
    if not a.pipeline_differs:
        st.caption(t("pipeline.same", function=fn[a.pipeline_function], loss=own.loss_name))
        return
    k = int(np.argmax(a.pipeline_scores))
    c1, c2 = st.columns(2)
    c1.metric(t("pipeline.own_metric", label=a.labels[k], function=fn[own.output], loss=own.loss_name),
              f"{a.scores[k]:.4f}")
    c2.metric(t("pipeline.pipe_metric", label=a.labels[k], function=fn[a.pipeline_function]),
              f"{a.pipeline_scores[k]:.4f}")
    st.caption(t("pipeline.differs", loss=own.loss_name, own=fn[own.output], ptype=a.problem_type,
                 pipe=fn[a.pipeline_function]))


def completeness(r) -> None:
    """An attribution's completeness check (integrated methods: the scores' sum against f(x) - f(baseline),
    and whether the steps converged), or the note that saliency is unsigned."""
    if r.delta is not None:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(t("attributions.sum"), f"{r.scores.sum():+.4f}")
        m2.metric(t("attributions.diff"), f"{r.f_x - r.f_baseline:+.4f}",
                  help=t("attributions.diff_help", fx=r.f_x, fb=r.f_baseline))
        m3.metric(t("attributions.delta"), f"{r.delta:+.2e}", help=t("attributions.delta_help"))
        m4.metric(t("attributions.n_steps"), str(r.n_steps))
        if not r.converged:
            st.warning(t("arch.not_converged", error=f"{r.error:.2%}", steps=r.n_steps))
        else:
            st.success(t("attributions.complete", error=100 * r.error))
    elif r.method == "saliency":
        st.info(t("attributions.unsigned"))


def label_summary(report) -> None:
    """A label report's rows, problem type, loss and label counts (the Data page)."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("data.rows"), report.rows)
    m2.metric(t("data.problem_type"), t(f"data.ptype_{report.problem_type}"), help=report.problem_type)
    m3.metric(t("data.loss"), report.loss)
    if report.labels:
        names, counts = zip(*report.labels)
        st.plotly_chart(plots.label_bars(names, counts, t("data.counts_title"), t("data.label_axis"),
                                         t("data.count_axis"), fmt=".0f"), key="data_counts")
    if not report.issues:
        st.success(t("data.no_issues"))


def mapping_check(report) -> None:
    """The CSV's labels against the checkpoint's predictions: accuracy before and after the best
    one-to-one mapping, and the confusion behind it (the Data page)."""
    st.subheader(t("data.mapping_title"))
    a1, a2 = st.columns(2)
    metric = "acc" if report.agreement == "accuracy" else "f1"  # multi-label: mean per-label F1
    a1.metric(t(f"data.{metric}_before"), f"{report.accuracy_before:.1%}")
    a2.metric(t(f"data.{metric}_after"), f"{report.accuracy_after:.1%}")
    st.plotly_chart(plots.confusion_heatmap(report.confusion, report.confusion_rows, report.confusion_cols,
                                            t("data.confusion_title"), t("data.predicted_axis"), t("data.csv_axis"),
                                            t("data.count_axis")),
                    key="data_confusion")


def label_fixes(report, fixed_csv: bytes, file_name: str) -> None:
    """Both fixes for a suggested label mapping: which side to change, the corrected CSV, and the
    id2label/label2id to paste into the checkpoint's config.json (the Data page)."""
    st.subheader(t("data.fix_title"))
    st.info(plain(report.fix["advice"].message(lang())))
    stem = file_name.rsplit(".", 1)[0] or "data"
    st.download_button(t("data.download_csv"), fixed_csv, file_name=f"{stem}-corrected.csv", mime="text/csv",
                       key="data_fixed_csv")
    st.caption(t("data.config_paste"))
    st.code(json.dumps(report.fix["config"], indent=1, ensure_ascii=False), language="json")


def audit_projector(found, flag, key: tuple, seed: int) -> None:
    """The audit's features projected to 2-D, coloured by given or suggested label or by flag (the
    Label audit page); `flag` marks the flagged rows, `key` names the audit run for the memo."""
    from explorer.model.problem import ProblemType
    from explorer.explain.projector import available, project
    from explorer.plots import audit as aplots
    from explorer.ui.cache import memo

    data = found.data
    st.subheader(t("audit.projector"))
    p1, p2 = st.columns(2)
    method = p1.radio(t("audit.method"), available(), key="audit_method", horizontal=True,
                      format_func=lambda x: x.upper())
    # Regression values are not groups: colour by flag only.
    colour = p2.radio(t("audit.colour"), ("flag",) if data.problem_type == ProblemType.REGRESSION else ("given", "predicted", "flag"),
                      key="audit_colour", horizontal=True, format_func=lambda x: t(f"audit.colour_{x}"))
    proj = memo("audit_projection", (key, method), lambda: project(found.vectors, method, seed=seed))
    if proj.subsampled:
        st.caption(t("audit.subsampled", shown=len(proj.rows), total=proj.total))
    name_of = {"given": found.given, "predicted": found.suggested,
               "flag": lambda r: t("audit.is_flagged") if flag[r] else t("audit.not_flagged")}[colour]
    st.plotly_chart(aplots.projection(proj.xy, [str(name_of(r)) for r in proj.rows], list(data.texts), proj.rows,
                                      t("audit.projector_title", method=proj.method.upper()),
                                      t(f"audit.colour_{colour}")), key="audit_projector")


def audit_confusion(found) -> np.ndarray:
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
    event = st.plotly_chart(aplots.confusion_cells(counts, names, names, t("audit.confusion_title"),
                                                   t("audit.predicted_axis"), t("audit.given_axis"), t("audit.count")),
                            key=f"audit_confusion_{cleared}", on_select="rerun", selection_mode="points")
    points = event.selection.points if event else []
    if not points:
        st.caption(t("audit.click_cell"))
        return found.flagged
    given, predicted = names.index(points[0]["y"]), names.index(points[0]["x"])
    cell = np.flatnonzero((data.y == given) & (pred == predicted))
    rows = cell[np.argsort(found.quality[cell], kind="stable")]
    st.caption(t("audit.cell", given=names[given], predicted=names[predicted], n=len(rows)))
    st.button(t("audit.clear_cell"), key="audit_clear_cell", help=t("audit.clear_cell_help"),
              on_click=lambda: st.session_state.update(audit_cell_cleared=cleared + 1))
    return rows
