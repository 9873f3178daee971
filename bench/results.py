"""Write bench/RESULTS.md from bench/results.json: `python -m bench.results`.

results.json is either the recorded figures ({about, sections: [{title, notes, rows}]}, each row's cells as text) or
what `make bench` writes (a list of rows {module, name, value, baseline, ratio, target, unit, ok}); both read as
the same Markdown tables, so RESULTS.md is regenerated after every bench run and never edited by hand.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JSON, MARKDOWN = HERE / "results.json", HERE / "RESULTS.md"
COLUMNS = ("figure", "ours", "baseline", "ratio", "target")
HEADINGS = ("figure", "ours", "baseline (same run)", "ratio", "target")
HEADER = "<!-- written by `python -m bench.results` from bench/results.json: edit that file, not this one -->"


def _cell(text: str) -> str:
    # a Markdown table cell: a literal | would split it, a newline would end the row
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(rows: list[dict]) -> list[str]:
    head = ["| " + " | ".join(HEADINGS) + " |", "|" + "---|" * len(COLUMNS)]
    return head + ["| " + " | ".join(_cell(row[c]) for c in COLUMNS) + " |" for row in rows]


def _bench_rows(rows: list[dict]) -> dict:
    """`make bench`'s numeric rows as one recorded section, each figure with its unit."""
    def figure(r: dict) -> dict:
        unit = r.get("unit", "")
        return {"figure": f"{r['name']} ({r['module']})", "ours": f"{r['value']:.4g} {unit}".strip(),
                "baseline": f"{r['baseline']:.4g} {unit}".strip(), "ratio": f"{r['ratio']:.2f}×",
                "target": f"{r['target']} {'✓' if r['ok'] else '✗'}"}
    return {"about": "Written by `make bench`; every figure is a ratio against a baseline measured in the same run.",
            "sections": [{"title": "Last run", "notes": [], "rows": [figure(r) for r in rows]}]}


def render(data: dict | list) -> str:
    """The Markdown of RESULTS.md for results.json's content."""
    doc = _bench_rows(data) if isinstance(data, list) else data
    lines = [HEADER, "", "# Benchmark results", "", doc["about"]]
    for section in doc["sections"]:
        lines += ["", f"## {section['title']}"]
        for note in section["notes"]:
            lines += ["", note]
        if section["rows"]:
            lines += [""] + _table(section["rows"])
    return "\n".join(lines) + "\n"


def write_results(source: Path = JSON, target: Path = MARKDOWN) -> Path:
    """Write `target` from `source` and say where."""
    target.write_text(render(json.loads(source.read_text(encoding="utf-8"))), encoding="utf-8")
    return target


if __name__ == "__main__":
    print(f"wrote {write_results()}")
    sys.exit(0)
