"""What a label audit hands back: the CSV with accepted suggestions applied, and an HTML report."""
from __future__ import annotations


import pandas as pd

from explorer.data.audit import LabelAudit
from explorer.model.problem import ProblemType
from explorer.data.dataset import Table
from explorer.text import i18n
from explorer.text.plain import csv_bytes, html as escape_html


def corrected_frame(table: Table, found: LabelAudit, accepted) -> pd.DataFrame:
    """A copy of the table in which only the accepted rows' labels become the suggestion."""
    out = table.frame.copy()
    cols = list(found.data.label_columns)
    for row in sorted({int(r) for r in accepted}):
        if found.problem_type == ProblemType.MULTI and len(cols) > 1:  # one 0/1 column per label
            for col, value in zip(cols, found.predicted[row]):
                out.at[out.index[row], col] = str(int(value))
        else:
            out.at[out.index[row], cols[0]] = str(found.suggested(row))
    return out


def relabelled_csv(table: Table, found: LabelAudit, accepted, raw: bool = False) -> bytes:
    """The table with the accepted suggestions applied; formula cells guarded for a spreadsheet
    (explorer.text.plain.csv_bytes) unless `raw` (the data the app reads on)."""
    return csv_bytes(corrected_frame(table, found, accepted), raw=raw)


def report_html(found: LabelAudit, accepted, source: str, lang: str = "en") -> str:
    """A standalone page: the summary, then every flagged row with the reviewer's decision."""
    t = lambda key, **kw: escape_html(i18n.t(f"audit.report_{key}", lang, **kw))  # noqa: E731
    s = found.summary()
    accepted = {int(r) for r in accepted}
    cols = [k for k in ("row", "given", "suggested", "score", "p_given", "decision", "text")
            if k != "p_given" or not found.p_given_is_quality]
    head = "".join(f"<th>{t(k)}</th>" for k in cols)

    def cell(i: dict, k: str) -> str:
        if k == "decision":
            return t("accepted") if i["row"] in accepted else t("kept")
        if k in ("score", "p_given"):
            return "" if i[k] is None else format(i[k], ".3f")
        return escape_html(str(i[k]))

    body = "".join("<tr>" + "".join(f"<td>{cell(i, k)}</td>" for k in cols) + "</tr>" for i in found.issues())
    acc = "—" if s["cv_accuracy"] is None else f"{s['cv_accuracy']:.1%}"
    n = lambda key, count: i18n.n(f"audit.report_{key}", count, lang)  # noqa: E731
    summary = escape_html(i18n.t(
        "audit.report_summary_n", lang, rows=n("rows", len(found.data.texts)), flagged=s["flagged"],
        noise=f"{s['estimated_noise_rate']:.1%}", folds=s["folds"], accuracy=acc,
        features=i18n.t(f"audit.pool_{s['features']}", lang), accepted=n("accepted_n", len(accepted))))
    return (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>{t('title')}</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}</style></head><body>"
            f"<h1>{t('title')}</h1><p>{escape_html(source)}</p><p>{summary}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></body></html>")
