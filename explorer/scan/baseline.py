"""A scan of checkpoint B against a baseline checkpoint A on the same rows: what changed between them.

Both checkpoints are scanned (each scan's one forward pass gives its logits; nothing here runs a model), then
read side by side:
- whether B's names are a renaming of A's predictions: the Hungarian rule of the mapping check
  (explorer.data.mapping.agreement_mapping, permuted_mapping) with A's predicted names as the "labels", so it
  needs no given label; a found renaming is the major finding `baseline.mapping`, with which checkpoint to fix;
- the rows where they disagree (A's predictions read through the renaming when one is found);
- with given labels: fixes (A wrong, B right), regressions (A right, B wrong) and the exact two-sided McNemar
  test on those two counts (a binomial test on the discordant rows, scipy.stats.binomtest), per slice too (the
  slices check's slices and its Benjamini-Hochberg rule), and the calibration check's ECE and temperature of each;
- every finding of B's own scan marked new or same against A's scan, A's findings B no longer has as gone.

A's whole scan is what the new/same/gone marks cost (a second scan, robustness passes included): a finding can
only be called new against the same checks run on A. The comparison itself adds no forward pass.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from scipy.stats import binomtest, false_discovery_control

from explorer.model.checkpoints import Checkpoint
from explorer.results import JsonResult
from explorer.runtime.jobs import Progress, span
from explorer.scan.base import SEVERITIES, Finding, ScanData
from explorer.scan.report import ScanReport
from explorer.text.errors import ExplorerError, Message

ALPHA = 0.05  # McNemar's level, overall and per slice (after Benjamini-Hochberg, as the slices check)
# A renaming must explain most rows and move two names at least (a permutation): two unrelated heads that each
# predict one label would otherwise "rename" it.
RENAMED_AGREEMENT = 0.8


def mcnemar_p(fixes: int, regressions: int) -> float:
    """The exact two-sided McNemar test: the discordant rows as a binomial test against 1/2 (1.0 with none)."""
    n = fixes + regressions
    return 1.0 if n == 0 else float(binomtest(fixes, n, 0.5, alternative="two-sided").pvalue)


@dataclass(frozen=True)
class BaselineComparison(JsonResult):
    """Checkpoint B (the scanned one) against baseline A on the same rows. Rows are 0-based positions among the
    data's rows; `fixes`, `regressions`, `mcnemar_p`, `accuracy_*`, `slices` and `calibration` are None (or
    empty) without given labels."""
    checkpoint: str  # A's name
    rows: int
    agreement: float  # share of rows where both predict the same label (through `mapping`)
    disagreements: tuple[int, ...]
    mapping: dict  # A's name -> B's name when B's names are a renaming of A's predictions; {} otherwise
    fix: dict | None  # {"side": "checkpoint" | "baseline" | "either", "reason"} with a mapping
    fixes: tuple[int, ...] | None
    regressions: tuple[int, ...] | None
    mcnemar_p: float | None
    accuracy_baseline: float | None
    accuracy_checkpoint: float | None
    slices: tuple[dict, ...]  # per-slice deltas: {slice, rows, accuracy_baseline, accuracy_checkpoint, delta, ...}
    calibration: dict  # {"ece" | "temperature": {"baseline", "checkpoint", "delta"}}
    gone: tuple[dict, ...]  # A's findings that B's scan no longer has ({check, severity, message})
    predicted_baseline: tuple[str, ...]  # A's prediction per row, in A's names
    confidence_baseline: tuple[float, ...]  # A's probability of its prediction per row
    confidence_checkpoint: tuple[float, ...]  # B's

    @property
    def verdict(self) -> str | None:
        """"better", "worse" (B against A, McNemar p < ALPHA) or "same"; None without labels."""
        if self.mcnemar_p is None:
            return None
        if self.mcnemar_p >= ALPHA:
            return "same"
        return "better" if len(self.fixes) > len(self.regressions) else "worse"

    def summary(self, name: str) -> Message | None:
        """The McNemar line in plain words ("B is better on these rows (fixes: 12, regressions: 3, p = 0.035)").

        Args:
            name: the scanned checkpoint's name (B), as the line names it.

        Returns:
            The line as a Message (str() is English), or None without given labels.
        """
        if self.verdict is None:
            return None
        return Message(f"scan_baseline_{self.verdict}", name=name, baseline=self.checkpoint,
                       fixes=len(self.fixes), regressions=len(self.regressions), p=f"{self.mcnemar_p:.3g}")

    def ordered_rows(self) -> list[int]:
        """The disagreements, fixes and regressions first (each in row order), then the others."""
        first = list(self.fixes or ()) + list(self.regressions or ())
        seen = set(first)
        return first + [i for i in self.disagreements if i not in seen]

    def kind(self, i: int) -> str:
        # regressed, not the noun: the noun names a problem type, spelled only in explorer/model/problem.py
        return "fixed" if i in (self.fixes or ()) else "regressed" if i in (self.regressions or ()) else "changed"

    def table(self, report: ScanReport, limit: int | None = None) -> list[dict]:
        """The disagreement table, fixes and regressions first.

        Args:
            report: B's scan, which holds this comparison (its texts, given labels and B's predictions).
            limit: at most this many rows (None: every disagreement).

        Returns:
            One dict a row: row, text, A's label and probability, B's, and with given labels the given label and
            what the row is (fixed, regressed, changed).
        """
        out = []
        for i in self.ordered_rows()[:limit]:
            row = {"row": i, "text": report.texts[i] if i < len(report.texts) else "",
                   "baseline": self.predicted_baseline[i], "baseline_p": round(self.confidence_baseline[i], 3),
                   "checkpoint": report.predicted_checkpoint[i],
                   "checkpoint_p": round(self.confidence_checkpoint[i], 3)}
            if report.given is not None:
                row |= {"given": report.given[i], "kind": self.kind(i)}
            out.append(row)
        return out

    def to_dict(self) -> dict:
        return {"checkpoint": self.checkpoint, "rows": self.rows, "agreement": round(self.agreement, 6),
                "disagreements": list(self.disagreements), "mapping": dict(self.mapping), "fix": self.fix,
                "fixes": None if self.fixes is None else list(self.fixes),
                "regressions": None if self.regressions is None else list(self.regressions),
                "mcnemar_p": self.mcnemar_p, "verdict": self.verdict,
                "accuracy_baseline": self.accuracy_baseline, "accuracy_checkpoint": self.accuracy_checkpoint,
                "slices": list(self.slices), "calibration": self.calibration, "gone": list(self.gone)}


def check_pair(ck: Checkpoint, baseline) -> None:
    """Two sentence classifiers with the same number of labels, or one line saying which is not."""
    from explorer.model.checkpoints import TOKEN_CLASSIFICATION

    if not isinstance(baseline, Checkpoint):
        raise ExplorerError("api_not_a_checkpoint", kind=type(baseline).__name__)
    for c in (ck, baseline):
        if c.task == TOKEN_CLASSIFICATION:
            raise ExplorerError("scan_baseline_token", name=c.name)
    a, b = baseline.model.config.num_labels, ck.model.config.num_labels
    if a != b:
        raise ExplorerError("scan_baseline_labels", baseline=baseline.name, name=ck.name, a=a, b=b)


def scan_against(scan: Callable[[Checkpoint, Progress | None], ScanReport], ck: Checkpoint, *, baseline: Checkpoint,
                 progress: Progress | None = None) -> ScanReport:
    """`scan(checkpoint, progress)` of B (`ck`), then of A (`baseline`) on the same rows, compared (`compare`);
    each scan fills half the progress bar. The pair is checked before either scan runs."""
    check_pair(ck, baseline)
    report = scan(ck, span(progress, 0.0, 0.5))
    base = scan(baseline, span(progress, 0.5, 1.0, f"{baseline.name}: "))
    return compare(report, base, ck=ck, baseline=baseline)


def finding_key(f: Finding) -> tuple[str, str]:
    """What makes two findings the same finding on two checkpoints: the check and what it found it in (a slice,
    a word, a kind), not its figures."""
    what = f.fields.get("slice") or f.fields.get("word") or f.fields.get("kind") or ""
    return f.check, str(what)


def compare(report: ScanReport, base: ScanReport, *, ck: Checkpoint, baseline: Checkpoint) -> ScanReport:
    """`report` (B's scan of `ck`) with what changed against `base` (A's scan of `baseline` on the same rows):
    its `baseline` comparison, the comparison's findings, and each of its own findings marked new or same."""
    from explorer.data.mapping import agreement_mapping, permuted_mapping
    from explorer.data.names import name_matches
    from explorer.model.problem import problem_type

    n = report.rows
    names_b, names_a = ck.labels, baseline.labels
    ids_b = report.logits.argmax(-1)  # (n,)
    ids_a = base.logits.argmax(-1)
    probs_b = problem_type(ck.model.config).probabilities(report.logits)  # (n, labels)
    probs_a = problem_type(baseline.model.config).probabilities(base.logits)
    predicted_a = [names_a[i] for i in ids_a]
    check = agreement_mapping(predicted_a, ids_b, names_b, name_matches(list(names_a), names_b))
    mapping = permuted_mapping(check, ck) if check["after"] >= RENAMED_AGREEMENT else {}
    if sum(check["identity"].get(a) != b for a, b in mapping.items()) < 2:
        mapping = {}  # a renaming moves two names at least: one label said differently is two models disagreeing
    # A's label as B names it: through the renaming, else the same name (spellings folded), else the same id.
    as_b = {a: mapping.get(a) or check["identity"].get(a) or names_b[names_a.index(a)] for a in set(predicted_a)}
    differ = np.array([as_b[a] != names_b[b] for a, b in zip(predicted_a, ids_b)], bool)
    disagreements = np.flatnonzero(differ)

    fixes = regressions = p = acc_a = acc_b = None
    slices: list[dict] = []
    if report.given is not None and base.given is not None:
        given = np.array(report.given, dtype=object)
        right_b = np.array(report.predicted, dtype=object) == given  # each read as its own scan reads the labels
        right_a = np.array(base.predicted, dtype=object) == given
        fixes, regressions = np.flatnonzero(~right_a & right_b), np.flatnonzero(right_a & ~right_b)
        p = mcnemar_p(len(fixes), len(regressions))
        acc_a, acc_b = round(float(right_a.mean()), 6), round(float(right_b.mean()), 6)
        slices = slice_deltas(report, ck, right_a=right_a, right_b=right_b)
    fix = None
    if mapping:
        fix = which_side(report, base, ck=ck, baseline=baseline, mapping=mapping)
    comparison = BaselineComparison(
        checkpoint=baseline.name, rows=n, agreement=float(1.0 - differ.mean()) if n else 1.0,
        disagreements=tuple(disagreements.tolist()), mapping=mapping, fix=fix,
        fixes=None if fixes is None else tuple(fixes.tolist()),
        regressions=None if regressions is None else tuple(regressions.tolist()), mcnemar_p=p,
        accuracy_baseline=acc_a, accuracy_checkpoint=acc_b, slices=tuple(slices),
        calibration=calibration_deltas(base.calibration, report.calibration), gone=tuple(gone(report, base)),
        predicted_baseline=tuple(predicted_a),
        confidence_baseline=tuple(float(x) for x in probs_a[np.arange(n), ids_a]),
        confidence_checkpoint=tuple(float(x) for x in probs_b[np.arange(n), ids_b]))
    had = {finding_key(f) for f in base.findings}
    marked = [replace(f, fields=f.fields | {"baseline": "same" if finding_key(f) in had else "new"})
              for f in report.findings]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    findings = sorted(marked + comparison_findings(comparison, report, ck=ck), key=lambda f: order[f.severity])
    return replace(report, findings=tuple(findings), baseline=comparison,
                   seconds=report.seconds + base.seconds)


def which_side(report: ScanReport, base: ScanReport, *, ck: Checkpoint, baseline: Checkpoint, mapping: dict) -> dict:
    """Which checkpoint's names to change for a renaming between them: the one whose own scan found its names
    permuted against the data; else the one whose config gives itself away (fix_side: generic names, a label2id
    that disagrees with id2label); else either."""
    from explorer.data.mapping import fix_side

    permuted_b = any(f.check == "mapping.permutation" for f in report.findings)
    permuted_a = any(f.check == "mapping.permutation" for f in base.findings)
    if permuted_b != permuted_a:
        return {"side": "checkpoint" if permuted_b else "baseline", "reason": "data"}
    side, why = fix_side(ck, mapping)
    if side == "checkpoint":
        return {"side": "checkpoint", "reason": why}
    side, why = fix_side(baseline, {b: a for a, b in mapping.items()})
    return {"side": "baseline" if side == "checkpoint" else "either", "reason": why}


def slice_deltas(report: ScanReport, ck: Checkpoint, *, right_a: np.ndarray, right_b: np.ndarray) -> list[dict]:
    """Accuracy of A and B in each of the scan's slices (the slices check's slice_masks and MIN_SLICE), McNemar
    inside each, Benjamini-Hochberg over the slices tested (as the slices check); `changed` where q < ALPHA and
    the accuracy moved at least DROP."""
    from explorer.scan.checks.slices import DROP, MIN_SLICE, slice_masks

    rows = ScanData(ck, report.texts, None, report.given, np.zeros((report.rows, 0), np.float32),
                    np.zeros((report.rows, 0), np.float32))
    tested = []
    for name, m in slice_masks(rows).items():
        if m.sum() < MIN_SLICE:
            continue
        f, r = int((m & ~right_a & right_b).sum()), int((m & right_a & ~right_b).sum())
        a, b = float(right_a[m].mean()), float(right_b[m].mean())
        tested.append({"slice": name, "rows": int(m.sum()), "accuracy_baseline": round(a, 4),
                       "accuracy_checkpoint": round(b, 4), "delta": round(b - a, 4), "fixes": f, "regressions": r,
                       "p": mcnemar_p(f, r)})
    if not tested:
        return []
    q = false_discovery_control([s["p"] for s in tested], method="bh")
    for s, qv in zip(tested, q):
        s["q_value"] = round(float(qv), 6)
        s["p"] = round(s["p"], 6)
        s["changed"] = bool(qv < ALPHA and abs(s["delta"]) >= DROP)
    return sorted(tested, key=lambda s: s["delta"])


def calibration_deltas(a: dict, b: dict) -> dict:
    """The calibration check's ECE and fitted temperature for A and B, and B - A; {} where either has none."""
    out = {}
    for key in ("ece", "temperature"):
        if a.get(key) is not None and b.get(key) is not None:
            out[key] = {"baseline": a[key], "checkpoint": b[key], "delta": round(b[key] - a[key], 6)}
    return out


def gone(report: ScanReport, base: ScanReport) -> list[dict]:
    """A's findings that B's scan does not have (by finding_key)."""
    has = {finding_key(f) for f in report.findings}
    return [{"check": f.check, "severity": f.severity, "message": str(f.message)}
            for f in base.findings if finding_key(f) not in has]


def comparison_findings(c: BaselineComparison, report: ScanReport, *, ck: Checkpoint) -> list[Finding]:
    """A renaming (major), B significantly worse overall (major) and the slices where it got significantly worse
    (minor). Two identical checkpoints find nothing."""
    out = []
    if c.mapping:
        moved = {a: b for a, b in c.mapping.items() if a != b}
        named = [i for i, (a, b) in enumerate(zip(c.predicted_baseline, report.predicted_checkpoint)) if a != b]
        out.append(Finding("baseline.mapping", "major",
                           Message("scan_baseline_renamed", n=len(moved), name=ck.name, baseline=c.checkpoint,
                                   side=c.fix["side"]),
                           {"mapping": dict(c.mapping), "fix": c.fix, "rows": named}))
    if c.verdict == "worse":
        out.append(Finding("baseline.worse", "major", c.summary(ck.name),
                           {"fixes": len(c.fixes), "regressions": len(c.regressions), "mcnemar_p": c.mcnemar_p,
                            "rows": list(c.regressions)}))
    for s in c.slices:
        if s["changed"] and s["delta"] < 0:
            out.append(Finding("baseline.slice", "minor",
                               Message("scan_baseline_slice", slice=s["slice"], before=f"{s['accuracy_baseline']:.0%}",
                                       after=f"{s['accuracy_checkpoint']:.0%}", baseline=c.checkpoint),
                               {"slice": s["slice"], "delta": s["delta"], "q_value": s["q_value"]}))
    return out
