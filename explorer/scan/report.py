"""The scan's one result: findings by severity, calibration and robustness figures, what did not apply and why;
as JSON (the documented contract), a standalone HTML page and a CSV of the rows with their flags.

What a person reads (the Scan page and the HTML report alike) comes from here: each finding's human title, its
evidence rounded as its message rounds it, the rows it points at with their text and their given, predicted
(in the data's names, through a found mapping) and suggested labels, pairs side by side, a found mapping as a
table with the config to paste, the findings a cause explains folded under it, and the checks that found
nothing."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import pandas as pd

from explorer.results import JsonResult, html_table
from explorer.scan.base import SEVERITIES, Finding
from explorer.text.errors import Message
from explorer.text.plain import csv_bytes, html as escape_html

ROW_FIELDS = ("rows", "pairs", "flipped")  # finding fields that hold row indices (pairs: [[i, j], ...])
ROWS_LISTED = 30  # rows (or pairs) a finding lists in the HTML report; the CSV carries every flag
# Evidence named like these is a share of rows: shown as a percentage, as the messages show it.
PERCENT_NAME = re.compile(r"(^|_)(rate|share|accuracy|overall|before|after)(_|$)")
NLL_DIGITS = 3  # the precision the calibration sentence shows the held-out NLL at
SAME_TEMPERATURE = 0.01  # |T - 1| below this changes no probability a person would read


@lru_cache(maxsize=None)  # a page asks for every finding's title on every run; a title never changes
def check_title(check_id: str) -> Message | str:
    """A check's human title (`errors.scan_title_<id>`, dots as underscores); the id itself for a check the
    catalogs do not title yet."""
    from explorer.text import i18n
    key = "scan_title_" + check_id.replace(".", "_")
    return Message(key) if f"errors.{key}" in i18n.catalog("en").messages else check_id


@lru_cache(maxsize=None)
def title_in(check_id: str, lang: str) -> str:
    """check_title in `lang`."""
    title = check_title(check_id)
    return title.message(lang) if isinstance(title, Message) else title


def shown_value(key: str, value, *, message: Message | str | None = None) -> str:
    """One evidence value as a person reads it: a share as a percentage where the finding's message shows it so
    (at the message's precision), other floats to 3 significant digits, a flag as ✓ or ✗."""
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if not isinstance(value, float):
        return str(value)
    params = getattr(message, "params", None) or {}
    percents = [p for p in params.values() if isinstance(p, str) and p.endswith("%")]
    said = params.get(key)
    # The message's own share of this value: by name, else the one its rounding matches ("rate" for flip_rate).
    if not (isinstance(said, str) and said.endswith("%")):
        said = next((p for p in percents if f"{value:.{_decimals(p)}%}" == p), None)
    if said is not None:
        return f"{value:.{_decimals(said)}%}"
    if PERCENT_NAME.search(key) and 0.0 <= value <= 1.0:
        return f"{value:.0%}" if value == 0 or value >= 0.1 else f"{value:.1%}"
    return f"{value:.3g}"


def _decimals(percent: str) -> int:
    """The decimals a formatted percentage shows ("9%": 0, "31.2%": 1)."""
    return len(percent[:-1].partition(".")[2])


@dataclass(frozen=True, eq=False)
class ScanReport(JsonResult):
    rows: int
    checkpoint: str
    seconds: float
    findings: tuple[Finding, ...]  # most serious first, then in check order
    results: dict  # check id -> what it measured (calibration.ece's figures, each robustness transform's flips)
    not_applicable: tuple[tuple[str, Message], ...]  # (check, why)
    texts: tuple[str, ...] = ()
    given: tuple[str, ...] | None = None
    predicted: tuple[str, ...] = ()  # each row's prediction in the data's names (through a found mapping)
    predicted_checkpoint: tuple[str, ...] = ()  # ... and in the checkpoint's own names
    ran: tuple[str, ...] = ()  # the checks that ran (applied), in the order they ran
    logits: Any = None  # (rows, labels) float32: the scan's one forward pass (not in the JSON)
    baseline: Any = None  # explorer.scan.baseline.BaselineComparison when scanned against a baseline checkpoint

    @property
    def calibration(self) -> dict:
        """calibration.ece's figures: {ece, bins, temperature, nll, nll_scaled, reliability, ...}; {} if it did not run."""
        return self.results.get("calibration.ece") or {}

    @property
    def robustness(self) -> dict:
        """transform -> {flip_rate (None: not applicable), rows, flipped, examples}, for each transform that ran."""
        return {k.split(".", 1)[1]: v for k, v in self.results.items() if k.startswith("robustness.")}

    @property
    def tags(self) -> dict:
        """Row tag (Azimuth's neighbour rules) -> rows."""
        return (self.results.get("duplicates.conflicting") or {}).get("tags", {})

    # ---- what a person reads -------------------------------------------------------------------------

    def by_severity(self, severity: str) -> list[Finding]:
        """The findings of `severity` that stand on their own (a cause's consequences are read under it)."""
        return [f for f in self.findings if f.severity == severity and not f.because]

    def grouped(self) -> list[tuple[str, list[Finding]]]:
        """(severity, its findings that stand on their own) for each severity with any, most serious first."""
        return [(s, self.by_severity(s)) for s in SEVERITIES if self.by_severity(s)]

    def consequences(self, cause: Finding) -> list[Finding]:
        """The findings `cause` explains (reported under it, `because` its check id)."""
        return [f for f in self.findings if f.because == cause.check and f is not cause]

    def found_nothing(self) -> list[str]:
        """The checks that ran and found nothing, in the order they ran."""
        found = {f.check for f in self.findings}
        skipped = {c for c, _ in self.not_applicable}
        return [c for c in self.ran if c not in found and c not in skipped]

    @cached_property  # read for every row shown
    def renamed(self) -> bool:
        """Does the data's name for some prediction differ from the checkpoint's (a found mapping, a spelling)?"""
        return any(a != b for a, b in zip(self.predicted, self.predicted_checkpoint))

    @cached_property
    def suggested(self) -> dict[int, str]:
        """Row -> the label the suspect-rows check suggests for it (the rows its examples list)."""
        return {int(e["row"]): str(e["suggested"]) for f in self.findings if f.check == "labels.suspect_rows"
                for e in f.fields.get("examples", ()) if "suggested" in e}

    def checkpoint_name(self, label: str) -> str:
        """The checkpoint's name for the data's label `label`: through a found mapping, else as the predictions
        pair the two names, else the name itself."""
        for f in self.findings:
            if f.check == "mapping.permutation" and label in f.fields.get("mapping", {}):
                return f.fields["mapping"][label]
        return dict(zip(self.predicted, self.predicted_checkpoint)).get(label, label)

    def evidence(self, f: Finding) -> dict[str, str]:
        """`f`'s one-value fields, each rounded as its message rounds it (shown_value); whether a baseline had it
        is said in words, not as a field."""
        return {k: shown_value(k, v, message=f.message) for k, v in f.evidence().items() if k != "baseline"}

    def row(self, i: int) -> dict:
        """Row `i` as a person reads it: its text, given label, prediction in the data's names (and the
        checkpoint's where they differ) and the suggested label where one was suggested."""
        out = {"row": i, "text": self.texts[i] if i < len(self.texts) else ""}
        if self.given is not None:
            out["given"] = self.given[i]
        if self.predicted:
            out["predicted"] = self.predicted[i]
        if self.renamed:
            out["predicted_checkpoint"] = self.predicted_checkpoint[i]
        suggested = self.suggested
        if suggested:
            out["suggested"] = suggested.get(i, "")
        return out

    def pointed_rows(self, f: Finding, limit: int | None = None) -> list[dict]:
        """The rows `f` points at (row()), with the changed text a perturbation made where it lists one."""
        changed = {int(e["row"]): e["perturbed"] for e in f.fields.get("examples", ()) if "perturbed" in e}
        rows = [self.row(i) for i in f.fields.get("rows", [])[:limit]]
        return [r | {"perturbed": changed.get(r["row"], "")} for r in rows] if changed else rows

    def pairs(self, f: Finding, limit: int | None = None) -> list[dict]:
        """`f`'s pairs side by side: each row's text, given and predicted label (…_a, …_b), and the pair's
        similarity where the finding lists one per pair."""
        pairs = f.fields.get("pairs", [])[:limit]
        similarity = f.fields.get("similarity")
        out = []
        for k, (i, j) in enumerate(pairs):
            a, b = self.row(int(i)), self.row(int(j))
            row = {f"{key}_a": v for key, v in a.items()} | {f"{key}_b": v for key, v in b.items()}
            if isinstance(similarity, (list, tuple)) and k < len(similarity):
                row["similarity"] = shown_value("similarity", float(similarity[k]))
            out.append(row)
        return out

    def mapping_fix(self, f: Finding) -> dict | None:
        """A found mapping as a person acts on it: {rows: [{data, checkpoint}], side, advice (the Data page's
        explanation of which side to change), config (the id2label/label2id JSON to paste)}; None otherwise."""
        if f.check != "mapping.permutation" or "mapping" not in f.fields:
            return None
        fix = f.fields.get("fix") or {}
        return {"rows": [{"data": a, "checkpoint": b} for a, b in f.fields["mapping"].items()],
                "side": fix.get("side", "either"),
                "advice": Message(f"fix_{fix['reason']}", name=self.checkpoint) if fix.get("reason") else None,
                "config": json.dumps(fix["config"], indent=1, ensure_ascii=False) if fix.get("config") else ""}

    def temperature_helps(self) -> bool:
        """Does the fitted temperature change anything a person reads: T away from 1 and the held-out NLL
        different at the precision it is shown?"""
        c = self.calibration
        if not c:
            return False
        return (abs(c["temperature"] - 1.0) >= SAME_TEMPERATURE
                and round(c["nll"], NLL_DIGITS) != round(c["nll_scaled"], NLL_DIGITS))

    def calibration_caption(self, lang: str = "en") -> str:
        from explorer.text.i18n import t
        c = self.calibration
        figures = dict(ece=f"{c['ece']:.3f}", nll=f"{c['nll']:.3f}")
        if self.temperature_helps():
            return t("scan.calibration_caption", lang, t=f"{c['temperature']:.2f}",
                     nll_scaled=f"{c['nll_scaled']:.3f}", **figures)
        return t("scan.calibration_caption_alone", lang, **figures)

    # ---- the contract ---------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return self._own_dict() | ({"baseline": self.baseline.to_dict()} if self.baseline is not None else {})

    def _own_dict(self) -> dict:
        return {"rows": self.rows, "checkpoint": self.checkpoint, "seconds": round(self.seconds, 3),
                "findings": [f.to_dict() for f in self.findings],
                "calibration": {k: v for k, v in self.calibration.items()
                                if k in ("ece", "bins", "temperature", "nll", "nll_scaled")},
                "robustness": {k: {"flip_rate": v["flip_rate"], "rows": v["rows"], "examples": v["examples"]}
                               for k, v in self.robustness.items()},
                "not_applicable": [{"check": c, "why": str(m)} for c, m in self.not_applicable]}

    def row_flags(self) -> pd.DataFrame:
        """One row per data row: its text, given label, prediction in the data's names (and in the
        checkpoint's where they differ), the suggested label, and the checks that flag it."""
        flags: list[list[str]] = [[] for _ in range(self.rows)]
        for f in self.findings:
            for key in ROW_FIELDS:
                for item in f.fields.get(key, ()) or ():
                    for i in (item if isinstance(item, (list, tuple)) else [item]):
                        if 0 <= int(i) < self.rows and f.check not in flags[int(i)]:
                            flags[int(i)].append(f.check)
        for tag, rows in (self.tags or {}).items():
            for i in rows:
                flags[int(i)].append(tag)
        frame = pd.DataFrame({"row": range(self.rows), "text": list(self.texts) or [""] * self.rows})
        if self.given is not None:
            frame["given"] = list(self.given)
        if self.predicted:
            frame["predicted"] = list(self.predicted)
        if self.renamed:
            frame["predicted_checkpoint"] = list(self.predicted_checkpoint)
        suggested = self.suggested
        if suggested:
            frame["suggested"] = [suggested.get(i, "") for i in range(self.rows)]
        frame["flags"] = ["; ".join(f) for f in flags]
        return frame

    def flags_csv(self) -> bytes:
        """row_flags() as CSV, formula-looking cells guarded like every other download."""
        return csv_bytes(self.row_flags())

    def to_html(self, lang: str = "en") -> str:
        """The report as a standalone page (no script, nothing fetched), every user text escaped.

        Args:
            lang: the page's language, "en" or "vi".

        Returns:
            The page's HTML.
        """
        from explorer.text.i18n import t
        parts = [f"<h1>{escape_html(t('scan.report_title', lang))}</h1>",
                 f"<p>{escape_html(t('scan.report_caption', lang, rows=self.rows, checkpoint=self.checkpoint, seconds=f'{self.seconds:.1f}'))}</p>"]
        for severity, found in self.grouped():
            parts.append(f"<h2>{escape_html(t('scan.severity_' + severity, lang))} ({len(found)})</h2><ul>")
            for f in found:
                parts.append("<li>" + self._finding_html(f, lang))
                explained = self.consequences(f)
                if explained:
                    parts.append(f"<p><b>{escape_html(t('scan.explains', lang, n=len(explained)))}</b></p><ul>"
                                 + "".join(f"<li>{self._finding_html(c, lang)}</li>" for c in explained) + "</ul>")
                parts.append("</li>")
            parts.append("</ul>")
        clean = self.found_nothing()
        if clean:
            parts.append(f"<h2>{escape_html(t('scan.found_nothing', lang))} ({len(clean)})</h2><ul>"
                         + "".join(f"<li>{_title_html(c, lang)}</li>" for c in clean) + "</ul>")
        bins = self.calibration.get("reliability")
        if bins:
            parts.append(f"<h2>{escape_html(t('scan.reliability', lang))}</h2>"
                         f"<p>{escape_html(self.calibration_caption(lang))}</p>" + reliability_svg(bins)
                         + html_table([{t("scan.bin", lang): f"{b['lo']:.2f}–{b['hi']:.2f}",
                                        t("scan.rows", lang): b["rows"],
                                        t("scan.confidence", lang): f"{b['confidence']:.3f}",
                                        t("scan.accuracy", lang): f"{b['accuracy']:.3f}"} for b in bins]))
        if self.robustness:
            parts.append(f"<h2>{escape_html(t('scan.robustness', lang))}</h2>"
                         + html_table([{t("scan.transform", lang): k,
                                        t("scan.flip_rate", lang): t("scan.na_short", lang) if v["flip_rate"] is None
                                        else shown_value("flip_rate", float(v["flip_rate"])),
                                        t("scan.rows", lang): v["rows"]} for k, v in self.robustness.items()]))
        if self.baseline is not None:
            parts.append(self._baseline_html(lang))
        if self.not_applicable:
            parts.append(f"<h2>{escape_html(t('scan.not_applicable', lang))}</h2><ul>"
                         + "".join(f"<li>{_title_html(c, lang)}: {escape_html(m.message(lang))}</li>"
                                   for c, m in self.not_applicable) + "</ul>")
        body = "\n".join(parts)
        return ("<!doctype html><html><head><meta charset='utf-8'><title>Head Explorer scan</title>"
                "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
                "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}small{color:#666}"
                "pre{background:#f6f6f6;padding:.5em}</style></head><body>" + body + "</body></html>")

    def baseline_caption(self, lang: str = "en") -> str:
        """The comparison in one line: agreement and disagreements, and the McNemar line where labels were given."""
        from explorer.text.i18n import t
        c = self.baseline
        line = t("scan_baseline.agreement", lang, baseline=c.checkpoint, agreement=f"{c.agreement:.1%}",
                 n=len(c.disagreements))
        summary = c.summary(self.checkpoint)
        return line + (" " + summary.message(lang) if summary is not None else "")

    def baseline_table(self, lang: str = "en", limit: int | None = ROWS_LISTED) -> list[dict]:
        """The disagreement table with its columns named in `lang`, fixes and regressions first."""
        from explorer.text.i18n import t
        c = self.baseline
        names = {"row": t("scan.col_row", lang), "text": t("scan.col_text", lang),
                 "baseline": t("scan_baseline.col_baseline", lang, name=c.checkpoint),
                 "baseline_p": t("scan_baseline.col_baseline_p", lang),
                 "checkpoint": t("scan_baseline.col_checkpoint", lang, name=self.checkpoint),
                 "checkpoint_p": t("scan_baseline.col_checkpoint_p", lang),
                 "given": t("scan.col_given", lang), "kind": t("scan_baseline.col_kind", lang)}
        return [{names[k]: (t("scan_baseline.kind_" + v, lang) if k == "kind" else v) for k, v in row.items()}
                for row in c.table(self, limit)]

    def _baseline_html(self, lang: str) -> str:
        from explorer.text.i18n import t
        c = self.baseline
        parts = [f"<h2>{escape_html(t('scan_baseline.title', lang, baseline=c.checkpoint))}</h2>",
                 f"<p>{escape_html(self.baseline_caption(lang))}</p>"]
        if c.disagreements:
            parts.append(html_table(self.baseline_table(lang)))
        if c.slices:
            parts.append(html_table([{t("scan_baseline.slice", lang): s["slice"], t("scan.rows", lang): s["rows"],
                                      c.checkpoint: f"{s['accuracy_baseline']:.0%}",
                                      self.checkpoint: f"{s['accuracy_checkpoint']:.0%}",
                                      "q": f"{s['q_value']:.3g}"} for s in c.slices],
                                    t("scan_baseline.slices_caption", lang)))
        if c.gone:
            parts.append(f"<p>{escape_html(t('scan_baseline.gone', lang, n=len(c.gone)))}</p><ul>"
                         + "".join(f"<li>{_title_html(g['check'], lang)}: {escape_html(g['message'])}</li>"
                                   for g in c.gone) + "</ul>")
        return "".join(parts)

    def save_html(self, path, lang: str = "en"):
        """Write the standalone report to a new file, whole or not at all.

        An existing file, a link, a device or a missing folder is one ExplorerError line, nothing written
        (explorer.results.write_new_files).

        Args:
            path: the new file.
            lang: the page's language, "en" or "vi".
        """
        from pathlib import Path

        from explorer.results import write_new_files
        write_new_files({path: self.to_html(lang).encode("utf-8")})
        return Path(path)

    def _repr_html_(self) -> str:
        rows = [{"severity": f.severity, "check": f.check, "message": str(f.message)} for f in self.findings]
        return html_table(rows, f"{self.rows} rows; {self.checkpoint}; {self.seconds:.1f} s")

    def _finding_html(self, f: Finding, lang: str) -> str:
        """One finding: its title (the check id in small print), message, evidence, a mapping's table and fix,
        and the rows (or pairs) it points at with their text."""
        from explorer.text.i18n import t
        out = [f"{_title_html(f.check, lang)}<p>{escape_html(f.message.message(lang))}</p>"]
        if "baseline" in f.fields:  # new against the baseline, or the baseline had it too
            out.append(f"<p><small>{escape_html(t('scan_baseline.finding_' + f.fields['baseline'], lang))}</small></p>")
        evidence = self.evidence(f)
        if evidence:
            out.append(html_table([{t("scan.field", lang): k, t("scan.value", lang): v} for k, v in evidence.items()]))
        fix = self.mapping_fix(f)
        if fix:
            out.append(html_table([{t("scan.data_label", lang): r["data"],
                                    t("scan.checkpoint_label", lang): r["checkpoint"]} for r in fix["rows"]])
                       + f"<h4>{escape_html(t('data.fix_title', lang))}</h4>"
                       + f"<p>{escape_html(t('scan.fix_side', lang, side=t('scan.side_' + fix['side'], lang)))}</p>"
                       + (f"<p>{escape_html(fix['advice'].message(lang))}</p>" if fix["advice"] else "")
                       + (f"<p>{escape_html(t('data.config_paste', lang))}</p><pre>{escape_html(fix['config'])}</pre>"
                          if fix["config"] else "")
                       + f"<p>{escape_html(t('scan.fix_csv', lang))}</p>")
        if f.fields.get("pairs"):
            pairs = f.fields["pairs"]
            out.append(html_table(_headers(self.pairs(f, ROWS_LISTED), lang))
                       + (f"<p>{escape_html(t('scan.more_rows', lang, n=len(pairs) - ROWS_LISTED))}</p>"
                          if len(pairs) > ROWS_LISTED else ""))
        elif f.fields.get("rows"):
            rows = f.fields["rows"]
            out.append(html_table(_headers(self.pointed_rows(f, ROWS_LISTED), lang))
                       + (f"<p>{escape_html(t('scan.more_rows', lang, n=len(rows) - ROWS_LISTED))}</p>"
                          if len(rows) > ROWS_LISTED else ""))
        return "".join(out)

def _title_html(check_id: str, lang: str) -> str:
    return f"<b>{escape_html(title_in(check_id, lang))}</b> <small>{escape_html(check_id)}</small>"


def _headers(rows: list[dict], lang: str) -> list[dict]:
    """Row tables with their column names in `lang` (scan.col_<name>)."""
    from explorer.text.i18n import t
    return [{t(f"scan.col_{k}", lang): v for k, v in row.items()} for row in rows]


def reliability_svg(bins: list[dict], size: int = 240) -> str:
    """The reliability diagram as inline SVG (the report fetches nothing and runs no script): one bar per
    non-empty bin, its height the bin's accuracy, over the diagonal a calibrated model lies on."""
    pad = 24
    inner = size - 2 * pad

    def x(v: float) -> float:
        return pad + v * inner

    def y(v: float) -> float:
        return size - pad - v * inner
    bars = "".join(
        f"<rect x='{x(b['lo']):.1f}' y='{y(b['accuracy']):.1f}' width='{(b['hi'] - b['lo']) * inner * 0.9:.1f}' "
        f"height='{b['accuracy'] * inner:.1f}' fill='#4c78a8'><title>{b['lo']:.2f}-{b['hi']:.2f}: "
        f"{b['rows']} rows, confidence {b['confidence']:.3f}, accuracy {b['accuracy']:.3f}</title></rect>"
        for b in bins)
    return (f"<svg width='{size}' height='{size}' role='img'>"
            f"<rect x='{pad}' y='{pad}' width='{inner}' height='{inner}' fill='none' stroke='#ccc'/>{bars}"
            f"<line x1='{x(0)}' y1='{y(0)}' x2='{x(1)}' y2='{y(1)}' stroke='#888' stroke-dasharray='4'/></svg>")
