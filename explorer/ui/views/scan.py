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
from explorer.text import i18n
from explorer.text.errors import ExplorerError
from explorer.ui import draw_chart, draw_table, headers, lang, plain, selection, t

ss = st.session_state
ROWS_SHOWN = 50  # evidence rows listed per finding; the CSV download carries every flag
ICONS = {"major": ":material/error:", "minor": ":material/warning:", "info": ":material/info:"}
PAGE_NAMES = {"pages/data.py": "scan.page_mapping", "pages/audit.py": "scan.page_labels",
              "pages/attributions.py": "scan.page_shortcut", "pages/whatif.py": "scan.page_robustness",
              "pages/logits.py": "scan.page_calibration", "pages/compare.py": "scan.page_head"}
LANDING = "scan_landing"  # {page, text, key, params}: the note the page a row was opened on shows


def draw_scan_preview() -> None:
    """Before the first scan: the checks that will run, so the page is not a button on an empty page."""
    st.info(t("scan.what_comes"))


def draw_report(report: ScanReport, file_name: str, one_text: bool) -> None:
    """The whole report; `one_text`: the data hold one text per row (a row opened elsewhere has no text B)."""
    draw_scan_summary(report)
    draw_baseline(report, one_text)
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


def _draw_finding(report: ScanReport, f: Finding, k: int, one_text: bool) -> None:
    """One finding's check id (small print), the cause that explains it, whether a baseline had it, its evidence
    rounded as its message rounds it, a mapping's table and fix, and its rows or pairs with a way into the page
    that shows them."""
    st.caption(f.check + (f" · {t('scan.explained_by', cause=title(f.because))}" if f.because else "")
               + (f" · {t('scan_baseline.finding_' + f.fields['baseline'])}" if "baseline" in f.fields else ""))
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
    page, values, note = landing(report, f, rows, selection().seed)
    if one_text:
        values["text_pair"] = ""  # a text B left from elsewhere would be read with the row's text
    ui.open_row({**values, LANDING: note and {"page": page, "text": values["text"], **note}}, page)


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


# ---- against a baseline checkpoint ------------------------------------------------------------------------

BASELINE = "scan_baseline"  # the "compare with" pick: a checkpoint name, or "" for none
BESIDE = "logits_baseline"  # the Logits page's "compare with" pick, set from BASELINE when a scan's row opens there
ORIGINS = "scan_origins"  # fine-tuned model's name -> the checkpoint it started from (set by the Fine-tune page)


def draw_baseline_picker(name: str, *, key: str = BASELINE) -> str | None:
    """The "compare with" checkpoint picker (the sidebar's checkpoints other than `name`, "" for none) and, for
    a model fine-tuned in this session, a button that picks the checkpoint it started from. The name picked, or
    None. `key`: the session key of the pick (the Scan page's, by default; the Logits page keeps its own, so that
    a pick there leaves the Scan page's report as it is)."""
    from explorer.model import checkpoints

    origin = ss.get(ORIGINS, {}).get(name)
    choices = [""] + list(dict.fromkeys(n for n in list(checkpoints.REGISTRY) + ui.session_checkpoint_names()
                                        + [origin or ""] if n and n != name)) + [ui.OTHER]
    c1, c2 = st.columns([2, 1])
    picked = c1.selectbox(t("scan_baseline.compare_with"), choices, help=t("scan_baseline.compare_help"),
                          format_func=lambda n, lang=lang(): i18n.t("scan_baseline.compare_none", lang) if not n else
                          i18n.t("app.other", lang) if n == ui.OTHER else n,  # lang bound now: AppTest formats later
                          **ui.sticky(key, "", options=choices))
    if origin and picked != origin:
        c2.button(t("scan_baseline.started_from", name=plain(origin)), key=f"{key}_origin",
                  on_click=ss.__setitem__, args=(key, origin))
    if picked == ui.OTHER:  # a folder, as the sidebar's "other…" reads one
        picked = c1.text_input(t("app.other_checkpoint"), placeholder="models/my-checkpoint",
                               **ui.sticky(key + "_other")).strip()
    return picked or None


def draw_compare_after_finetune(name: str) -> None:
    """After a fine-tune: a button that opens the Scan page on the fine-tuned model against the checkpoint it
    started from."""
    origin = ss.get(ORIGINS, {}).get(name)
    if origin:
        st.button(t("scan_baseline.started_from", name=plain(origin)), key="ft_compare_origin",
                  on_click=ui.open_row, args=({"checkpoint": name, BASELINE: origin}, "pages/scan.py"))


def remember_origin(name: str, origin: str) -> None:
    """Which checkpoint the model `name` was fine-tuned from, for "compare with the checkpoint it started from"."""
    ss.setdefault(ORIGINS, {})[name] = origin


def baseline_checkpoint(name: str | None, seed: int):
    """The baseline picked, loaded in the script run (a job's thread draws no spinner); None for none. A folder
    that cannot be loaded: one line, then stop."""
    if name is None:
        return None
    try:
        return ui.checkpoint(name, seed)
    except ExplorerError as err:
        ui.show_error(err)
        st.stop()


def scan_work(one, ck, baseline):
    """The scan job's work(table, progress): `one(checkpoint, table, progress)` of `ck`, or of `ck` against the
    `baseline` checkpoint (explorer.scan.baseline.scan_against: the pair checked, both scanned, then compared)."""
    from explorer.scan.baseline import scan_against

    if baseline is None:
        return lambda table, progress: one(ck, table, progress)
    return lambda table, progress: scan_against(lambda c, p: one(c, table, p), ck, baseline=baseline,
                                                        progress=progress)


def draw_baseline(report: ScanReport, one_text: bool) -> None:
    """What changed against the baseline: agreement and the McNemar line in plain words, the disagreement table
    (fixes and regressions first), each row opening on the Logits page, the slices and calibration of each, and
    the baseline's findings that are gone."""
    c = report.baseline
    if c is None:
        return
    st.subheader(t("scan_baseline.title", baseline=plain(c.checkpoint)))
    summary = c.summary(report.checkpoint)
    if summary is not None:
        (st.error if c.verdict == "worse" else st.success if c.verdict == "better" else st.info)(
            plain(summary.message(lang())))
    st.caption(plain(t("scan_baseline.agreement", baseline=c.checkpoint, agreement=f"{c.agreement:.1%}",
                       n=len(c.disagreements))))
    if c.disagreements:
        draw_table(report.baseline_table(lang(), ROWS_SHOWN))
        rows = c.ordered_rows()[:ROWS_SHOWN]
        r1, r2 = st.columns([1, 2])
        pick = r1.selectbox(t("scan_baseline.pick_row"), rows, key="scan_baseline_row",
                            format_func=lambda i, lang=lang():
                            f"{i} · {i18n.t('scan_baseline.kind_' + c.kind(i), lang)}"
                            if report.given is not None else str(i))
        r2.button(t("scan_baseline.open_row"), key="scan_baseline_open", on_click=_open_compared,
                  args=(report, int(pick), one_text), help=t("scan_baseline.logits_one", name=report.checkpoint,
                                                             baseline=c.checkpoint))
    else:
        st.success(t("scan_baseline.no_disagreement"))
    if c.calibration.get("ece") and c.calibration.get("temperature"):
        e, tt = c.calibration["ece"], c.calibration["temperature"]
        st.caption(t("scan_baseline.calibration", ece_a=f"{e['baseline']:.3f}", ece_b=f"{e['checkpoint']:.3f}",
                     t_a=f"{tt['baseline']:.2f}", t_b=f"{tt['checkpoint']:.2f}"))
    if c.slices:
        with st.expander(t("scan_baseline.slices_caption")):
            draw_table([{t("scan_baseline.slice"): s["slice"], t("scan.rows"): s["rows"],
                         c.checkpoint: f"{s['accuracy_baseline']:.0%}",
                         report.checkpoint: f"{s['accuracy_checkpoint']:.0%}",
                         "q": f"{s['q_value']:.3g}"} for s in c.slices])
    if c.gone:
        with st.expander(t("scan_baseline.gone", n=len(c.gone))):
            draw_table([{t("scan.check"): title(g["check"]), "id": g["check"]} for g in c.gone])


def _open_compared(report: ScanReport, row: int, one_text: bool) -> None:
    """A disagreement row on the Logits page, with the scanned checkpoint in the sidebar and the baseline beside
    it (the "compare with" pick the scan ran with): the row's text in the sidebar, its given label as the true
    label, and a note with both predictions."""
    c = report.baseline
    values: dict = {"text": report.texts[row]}
    if one_text:
        values["text_pair"] = ""
    if report.given is not None:
        values["true_label"] = report.checkpoint_name(report.given[row])
    values[BESIDE] = ss.get(BASELINE, "")  # the Logits page's own "compare with": the scan's pick
    values[BESIDE + "_other"] = ss.get(BASELINE + "_other", "")
    values[LANDING] = {"page": "pages/logits.py", "text": values["text"], "key": "scan_baseline.landed",
                       "params": dict(row=row, baseline=c.checkpoint, name=report.checkpoint,
                                      a=c.predicted_baseline[row], pa=f"{c.confidence_baseline[row]:.2f}",
                                      b=report.predicted_checkpoint[row], pb=f"{c.confidence_checkpoint[row]:.2f}")}
    ui.open_row(values, "pages/logits.py")
