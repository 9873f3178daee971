"""The Scan page (pages/scan.py): the report's counts, its findings by severity (each with its evidence rows and a
way into the page that shows it in depth, that row already in the sidebar), the reliability diagram, the flip
rate per perturbation, what did not apply and why, and the downloads."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.scan.base import deeper_page
from explorer.ui import draw_chart, draw_table, lang, plain, t

ss = st.session_state
ROWS_SHOWN = 50  # evidence rows listed per finding; the CSV download carries every flag
ICONS = {"major": ":material/error:", "minor": ":material/warning:", "info": ":material/info:"}


def draw_what_comes() -> None:
    """Before the first scan: the checks that will run, so the page is not a button on an empty page."""
    st.info(t("scan.what_comes"))


def draw_scan_summary(report) -> None:
    m = st.columns(4)
    m[0].metric(t("scan.rows_metric"), report.rows)
    m[1].metric(t("scan.severity_major"), len(report.by_severity("major")))
    m[2].metric(t("scan.severity_minor"), len(report.by_severity("minor")))
    m[3].metric(t("scan.seconds"), f"{report.seconds:.1f}")
    if not report.by_severity("major") and not report.by_severity("minor"):
        st.success(t("scan.all_clear"))


def _open(report, row: int, page: str) -> None:
    # A callback runs before the script, so the sidebar's text widget may still be changed here.
    ss["text"] = report.texts[row]
    ss["scan_open"] = page


def draw_findings(report, src) -> None:
    place = {id(f): k for k, f in enumerate(report.findings)}  # widget keys: unique across severities
    for severity, found in report.grouped():
        st.subheader(f"{t('scan.severity_' + severity)} ({len(found)})")
        for f in found:
            k = place[id(f)]
            with st.expander(f"{f.check}: {plain(f.message.message(lang()))}", icon=ICONS[severity],
                             expanded=severity == "major" and k < 3):  # the first majors open
                evidence = f.evidence()
                if evidence:
                    draw_table([{t("scan.field"): key, t("scan.value"): str(v)} for key, v in evidence.items()])
                if f.check == "mapping.permutation":
                    draw_table([{t("scan.data_label"): a, t("scan.checkpoint_label"): b}
                                for a, b in f.fields["mapping"].items()])
                rows = f.rows()[:ROWS_SHOWN]
                if rows:
                    draw_table([{t("scan.col_row"): r, t("scan.col_text"): report.texts[r],
                                 t("scan.col_given"): report.given[r] if report.given else "",
                                 t("scan.col_predicted"): report.predicted[r] if report.predicted else ""}
                                for r in rows])
                    c1, c2 = st.columns([1, 2])
                    pick = c1.selectbox(t("scan.pick_row"), rows, key=f"scan_row_{f.check}_{k}")
                    page = deeper_page(f.check)
                    c2.button(t("scan.open_row", page=t(f"scan.page_{f.check.split('.')[0]}")),
                              key=f"scan_open_{f.check}_{k}", on_click=_open,
                              args=(report, int(pick), page))
    page = ss.pop("scan_open", None)
    if page:
        st.switch_page(page)


def draw_calibration(report) -> None:
    from explorer.plots import scan as splots

    c = report.calibration
    if not c.get("reliability"):
        return
    st.subheader(t("scan.calibration"))
    st.caption(t("scan.calibration_caption", ece=f"{c['ece']:.3f}", t=f"{c['temperature']:.2f}",
                 nll=f"{c['nll']:.3f}", nll_scaled=f"{c['nll_scaled']:.3f}"))
    draw_chart(splots.reliability(c["reliability"], t("scan.reliability"), t("scan.confidence"), t("scan.accuracy"),
                                  t("scan.rows")), key="scan_reliability")


def draw_robustness(report) -> None:
    from explorer.plots import scan as splots

    if not report.robustness:
        return
    st.subheader(t("scan.robustness"))
    draw_chart(splots.flip_rates(report.robustness, t("scan.robustness"), t("scan.transform"), t("scan.flip_rate"),
                                 t("scan.na_short"), t("scan.rows")), key="scan_flips")


def draw_not_applicable(report) -> None:
    if report.not_applicable:
        with st.expander(f"{t('scan.not_applicable')} ({len(report.not_applicable)})"):
            draw_table([{t("scan.check"): c, t("scan.why"): plain(m.message(lang()))} for c, m in report.not_applicable])


def draw_downloads(report, file_name: str) -> None:
    stem = file_name.rsplit(".", 1)[0]
    d1, d2 = st.columns(2)
    d1.download_button(t("scan.download_html"), report.to_html(lang()), file_name=f"{stem}-scan.html",
                       mime="text/html", key="scan_html", on_click="ignore")
    d2.download_button(t("scan.download_csv"), report.flags_csv(), file_name=f"{stem}-scan-flags.csv",
                       mime="text/csv", key="scan_csv", help=t("plain.csv_guard"), on_click="ignore")
