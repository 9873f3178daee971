"""The scan's one result: findings by severity, calibration and robustness figures, what did not apply and why;
as JSON (the documented contract), a standalone HTML page and a CSV of the rows with their flags."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from explorer.results import JsonResult, html_table
from explorer.scan.base import SEVERITIES, Finding
from explorer.text.errors import Message
from explorer.text.plain import csv_bytes, html as escape_html

ROW_FIELDS = ("rows", "pairs", "flipped")  # finding fields that hold row indices (pairs: [[i, j], ...])


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

    def by_severity(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    def grouped(self) -> list[tuple[str, list[Finding]]]:
        """(severity, its findings) for each severity with any, most serious first."""
        return [(s, self.by_severity(s)) for s in SEVERITIES if self.by_severity(s)]

    def to_dict(self) -> dict:
        return {"rows": self.rows, "checkpoint": self.checkpoint, "seconds": round(self.seconds, 3),
                "findings": [f.to_dict() for f in self.findings],
                "calibration": {k: v for k, v in self.calibration.items()
                                if k in ("ece", "bins", "temperature", "nll", "nll_scaled")},
                "robustness": {k: {"flip_rate": v["flip_rate"], "rows": v["rows"], "examples": v["examples"]}
                               for k, v in self.robustness.items()},
                "not_applicable": [{"check": c, "why": str(m)} for c, m in self.not_applicable]}

    def row_flags(self) -> pd.DataFrame:
        """One row per data row: its text, given and predicted labels, and the checks that flag it."""
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
        frame["flags"] = ["; ".join(f) for f in flags]
        return frame

    def flags_csv(self) -> bytes:
        """row_flags() as CSV, formula-looking cells guarded like every other download."""
        return csv_bytes(self.row_flags())

    def to_html(self, lang: str = "en") -> str:
        """A standalone page (no script, nothing fetched): every user text escaped."""
        from explorer.text.i18n import t
        parts = [f"<h1>{escape_html(t('scan.report_title', lang))}</h1>",
                 f"<p>{escape_html(t('scan.report_caption', lang, rows=self.rows, checkpoint=self.checkpoint, seconds=f'{self.seconds:.1f}'))}</p>"]
        for severity, found in self.grouped():
            parts.append(f"<h2>{escape_html(t('scan.severity_' + severity, lang))} ({len(found)})</h2><ul>")
            for f in found:
                evidence, rows = f.evidence(), f.rows()
                parts.append(f"<li><b>{escape_html(f.check)}</b>: {escape_html(f.message.message(lang))}"
                             + (html_table([evidence]) if evidence else "")
                             + (f"<p>{escape_html(t('scan.rows', lang))}: {escape_html(', '.join(map(str, rows[:30])))}"
                                f"{' …' if len(rows) > 30 else ''}</p>" if rows else "") + "</li>")
            parts.append("</ul>")
        if self.calibration.get("reliability"):
            parts.append(f"<h2>{escape_html(t('scan.reliability', lang))}</h2>" + reliability_svg(self.calibration["reliability"])
                         + html_table([{"bin": f"{b['lo']:.2f}–{b['hi']:.2f}", "rows": b["rows"],
                                        "confidence": b["confidence"], "accuracy": b["accuracy"]}
                                       for b in self.calibration["reliability"]]))
        if self.robustness:
            parts.append(f"<h2>{escape_html(t('scan.robustness', lang))}</h2>"
                         + html_table([{"transform": k, "flip_rate": "n/a" if v["flip_rate"] is None else v["flip_rate"],
                                        "rows": v["rows"]} for k, v in self.robustness.items()]))
        if self.not_applicable:
            parts.append(f"<h2>{escape_html(t('scan.not_applicable', lang))}</h2><ul>"
                         + "".join(f"<li>{escape_html(c)}: {escape_html(m.message(lang))}</li>"
                                   for c, m in self.not_applicable) + "</ul>")
        body = "\n".join(parts)
        return ("<!doctype html><html><head><meta charset='utf-8'><title>Head Explorer scan</title>"
                "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
                "td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>" + body + "</body></html>")

    def save_html(self, path, lang: str = "en"):
        """Write the standalone report to `path`, a new file, whole or not at all (explorer.results.write_new_files:
        an existing file, a link, a device or a missing folder is one ExplorerError line, nothing written)."""
        from pathlib import Path

        from explorer.results import write_new_files
        write_new_files({path: self.to_html(lang).encode("utf-8")})
        return Path(path)

    def _repr_html_(self) -> str:
        rows = [{"severity": f.severity, "check": f.check, "message": str(f.message)} for f in self.findings]
        return html_table(rows, f"{self.rows} rows; {self.checkpoint}; {self.seconds:.1f} s")


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
