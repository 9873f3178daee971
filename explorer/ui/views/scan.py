"""The Scan page (pages/scan.py): the report's counts; its findings by severity, causes first (what a cause explains
folded under it), each with its human title, evidence, the rows (or pairs) it points at and a way into the page
that shows that finding (landing with it set up there: the given label as Logits' true label, the perturbed text
as What-if's text B, a pair as What-if's two texts, the Label audit already running); the reliability diagram,
the flip rate per perturbation, the checks that found nothing, what did not apply and why, and the downloads.
`draw_landing_note` is the note a target page shows for a row opened from here."""
from __future__ import annotations

import streamlit as st

from explorer import ui
from explorer.scan.base import Finding, deeper_page
from explorer.scan.report import ScanReport, title_in
from explorer.text.errors import ExplorerError
from explorer.ui import draw_chart, draw_table, headers, lang, plain, selection, t

ss = st.session_state
ROWS_SHOWN = 50  # evidence rows listed per finding; the CSV download carries every flag
ICONS = {"major": ":material/error:", "minor": ":material/warning:", "info": ":material/info:"}
PAGE_NAMES = {"pages/data.py": "scan.page_mapping", "pages/audit.py": "scan.page_labels",
              "pages/attributions.py": "scan.page_shortcut", "pages/whatif.py": "scan.page_robustness",
              "pages/logits.py": "scan.page_calibration", "pages/compare.py": "scan.page_head"}
LANDING = "scan_landing"  # {page, text, key, params}: the note the page a row was opened on shows


def run_scan(key, work, start: bool, expected_s: float) -> ScanReport | None:
    """The scan as one queued job (ui.run) for `key`; None until one has run. Bad input: one line, then stop."""
    try:
        return ui.run("scan", key, work, heavy=True, start=start, running=t("scan.starting"), stop=t("scan.stop"),
                      expected_s=expected_s)
    except ExplorerError as err:
        ui.show_error(err)
        st.stop()


def draw_what_comes() -> None:
    """Before the first scan: the checks that will run, so the page is not a button on an empty page."""
    st.info(t("scan.what_comes"))


def draw_report(report: ScanReport, file_name: str, one_text: bool) -> None:
    """The whole report; `one_text`: the data hold one text per row (a row opened elsewhere has no text B)."""
    draw_scan_summary(report)
    draw_findings(report, one_text)
    draw_calibration(report)
    draw_robustness(report)
    draw_found_nothing(report)
    draw_not_applicable(report)
    draw_downloads(report, file_name)


def draw_scan_summary(report: ScanReport) -> None:
    m = st.columns(4)
    m[0].metric(t("scan.rows_metric"), report.rows)
    m[1].metric(t("scan.severity_major"), len(report.by_severity("major")))
    m[2].metric(t("scan.severity_minor"), len(report.by_severity("minor")))
    m[3].metric(t("scan.seconds"), f"{report.seconds:.1f}")
    if not report.by_severity("major") and not report.by_severity("minor"):
        st.success(t("scan.all_clear"))


def title(check_id: str) -> str:
    """A check's human title in the session's language."""
    return title_in(check_id, lang())


def draw_findings(report: ScanReport, one_text: bool = True) -> None:
    """Findings that stand on their own by severity, each an expander; what a cause explains inside it."""
    place = {id(f): k for k, f in enumerate(report.findings)}  # widget keys: unique across severities
    for severity, found in report.grouped():
        st.subheader(f"{t('scan.severity_' + severity)} ({len(found)})")
        for f in found:
            k = place[id(f)]
            with st.expander(f"{plain(title(f.check))}: {plain(f.message.message(lang()))}", icon=ICONS[severity],
                             expanded=severity == "major" and k < 3):  # the first majors open
                _draw_finding(report, f, k, one_text)
                explained = report.consequences(f)
                if explained:
                    st.markdown(f"**{t('scan.explains', n=len(explained))}**")
                for c in explained:
                    with st.container(border=True):
                        st.markdown(f"{ICONS[c.severity]} **{plain(title(c.check))}**: "
                                    f"{plain(c.message.message(lang()))}")
                        _draw_finding(report, c, place[id(c)], one_text)
    page = ss.pop("scan_open", None)
    if page:
        st.switch_page(page)


def _draw_finding(report: ScanReport, f: Finding, k: int, one_text: bool) -> None:
    """One finding's check id (small print), the cause that explains it, its evidence rounded as its message
    rounds it, a mapping's table and fix, and its rows or pairs with a way into the page that shows them."""
    st.caption(f.check + (f" · {t('scan.explained_by', cause=title(f.because))}" if f.because else ""))
    evidence = report.evidence(f)
    if evidence:
        draw_table([{t("scan.field"): key, t("scan.value"): v} for key, v in evidence.items()])
    fix = report.mapping_fix(f)
    if fix:
        _draw_mapping_fix(fix)
    if f.fields.get("pairs"):
        pairs = [tuple(map(int, p)) for p in f.fields["pairs"]][:ROWS_SHOWN]
        draw_table(headers(report.pairs(f, ROWS_SHOWN), "scan.col_"))
        c1, c2 = st.columns([1, 2])
        pick = c1.selectbox(t("scan.pick_pair"), range(len(pairs)), key=f"scan_pair_{f.check}_{k}",
                            format_func=lambda p: f"{pairs[p][0]} ↔ {pairs[p][1]}")
        c2.button(t("scan.open_pair", page=t(PAGE_NAMES["pages/whatif.py"])), key=f"scan_open_{f.check}_{k}",
                  on_click=_open, args=(report, f, pairs[int(pick)], one_text))
    elif f.rows():
        rows = f.rows()[:ROWS_SHOWN]
        draw_table(headers(report.pointed_rows(f, ROWS_SHOWN), "scan.col_"))
        page = landing(report, f, (rows[0],), selection().seed)[0]
        c1, c2 = st.columns([1, 2])
        pick = c1.selectbox(t("scan.pick_row"), rows, key=f"scan_row_{f.check}_{k}")
        c2.button(t("scan.open_row", page=t(PAGE_NAMES.get(page, "scan.page_mapping"))),
                  key=f"scan_open_{f.check}_{k}", on_click=_open, args=(report, f, (int(pick),), one_text))


def _draw_mapping_fix(fix: dict) -> None:
    """A found mapping as the Data page explains it: the table, which side to fix and why, the config to paste."""
    draw_table([{t("scan.data_label"): r["data"], t("scan.checkpoint_label"): r["checkpoint"]} for r in fix["rows"]])
    st.markdown(f"**{t('data.fix_title')}**")
    st.write(t("scan.fix_side", side=t("scan.side_" + fix["side"])))
    if fix["advice"]:
        st.info(plain(fix["advice"].message(lang())))
    if fix["config"]:
        st.caption(t("data.config_paste"))
        st.code(fix["config"], language="json")
    st.caption(t("scan.fix_csv"))


def landing(report: ScanReport, f: Finding, rows: tuple[int, ...], seed: int) -> tuple[str, dict, dict | None]:
    """Where a finding's row (or pair) opens and what that page needs to show the finding there: (page, session
    values to set, the note it shows: {key, params}). A pair opens on What-if, its two texts side by side."""
    first = rows[0]
    given = report.given[first] if report.given else ""
    values: dict = {"text": report.texts[first]}
    if len(rows) == 2:
        i, j = rows
        values |= {"whatif_text": report.texts[j], "whatif_follow": False}
        return "pages/whatif.py", values, {"key": "scan.landed_pair", "params": dict(
            a=i, b=j, given_a=given, given_b=report.given[j] if report.given else "")}
    group = f.check.split(".")[0]
    if group == "robustness":
        transform = f.check.split(".", 1)[1]
        changed = {int(e["row"]): e["perturbed"] for e in f.fields.get("examples", ()) if "perturbed" in e}
        if first not in changed:  # the finding lists a few examples: the others are made again, as the scan made them
            from explorer.scan.transforms import TRANSFORMS
            changed[first] = TRANSFORMS[transform](report.texts[first], seed)
        values |= {"whatif_text": changed[first], "whatif_follow": False}
        return "pages/whatif.py", values, {"key": "scan.landed_whatif",
                                           "params": dict(row=first, transform=transform)}
    if group == "calibration" and given:
        label = report.checkpoint_name(given)
        values |= {"true_label": label}
        return "pages/logits.py", values, {"key": "scan.landed_logits", "params": dict(
            given=given, label=label, predicted=report.predicted[first] if report.predicted else "")}
    if f.check == "labels.suspect_rows":
        values |= {"audit_autostart": True}
        return "pages/audit.py", values, {"key": "scan.landed_audit", "params": dict(n=len(f.rows()))}
    return deeper_page(f.check), values, None


def _open(report: ScanReport, f: Finding, rows: tuple[int, ...], one_text: bool) -> None:
    # A callback runs before the script, so the sidebar's text widget may still be changed here.
    page, values, note = landing(report, f, rows, selection().seed)
    if one_text:
        values["text_pair"] = ""  # a text B left from elsewhere would be read with the row's text
    ss.update(values)
    ss[LANDING] = note and {"page": page, "text": values["text"], **note}
    ss["scan_open"] = page


def draw_landing_note(page: str) -> None:
    """On a page a scan's row was opened on: what the scan found there, while the sidebar still holds that row."""
    note = ss.get(LANDING)
    if note and note["page"] == page and note["text"] == selection().text:
        st.info(plain(t(note["key"], **note["params"])), icon=":material/troubleshoot:")


def draw_calibration(report: ScanReport) -> None:
    from explorer.plots import scan as splots

    c = report.calibration
    if not c.get("reliability"):
        return
    st.subheader(t("scan.calibration"))
    st.caption(report.calibration_caption(lang()))
    draw_chart(splots.reliability(c["reliability"], t("scan.reliability"), x_title=t("scan.confidence"),
                                  y_title=t("scan.accuracy"),
                                  rows_name=t("scan.rows")), key="scan_reliability")


def draw_robustness(report: ScanReport) -> None:
    from explorer.plots import scan as splots

    if not report.robustness:
        return
    st.subheader(t("scan.robustness"))
    draw_chart(splots.flip_rates(report.robustness, t("scan.robustness"), x_title=t("scan.transform"),
                                 y_title=t("scan.flip_rate"),
                                 na=t("scan.na_short"), rows_name=t("scan.rows")), key="scan_flips")


def draw_found_nothing(report: ScanReport) -> None:
    """The checks that ran and found nothing: a pass is worth saying, not only what failed."""
    clean = report.found_nothing()
    if clean:
        with st.expander(f"{t('scan.found_nothing')} ({len(clean)})", icon=":material/check_circle:"):
            draw_table([{t("scan.check"): title(c), "id": c} for c in clean])


def draw_not_applicable(report: ScanReport) -> None:
    if report.not_applicable:
        with st.expander(f"{t('scan.not_applicable')} ({len(report.not_applicable)})"):
            draw_table([{t("scan.check"): title(c), "id": c, t("scan.why"): plain(m.message(lang()))}
                        for c, m in report.not_applicable])


def draw_downloads(report: ScanReport, file_name: str) -> None:
    stem = file_name.rsplit(".", 1)[0]
    d1, d2 = st.columns(2)
    d1.download_button(t("scan.download_html"), report.to_html(lang()), file_name=f"{stem}-scan.html",
                       mime="text/html", key="scan_html", on_click="ignore")
    d2.download_button(t("scan.download_csv"), report.flags_csv(), file_name=f"{stem}-scan-flags.csv",
                       mime="text/csv", key="scan_csv", help=t("plain.csv_guard"), on_click="ignore")
