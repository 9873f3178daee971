"""Label report: what is wrong with a dataset's labels, alone and against a checkpoint (the Data page and
`inspect-data`), and the corrected CSV. Names that differ only in case, spacing or punctuation are a name
mismatch, not a permutation (explorer/data/names.py); the permuted-mapping check and both fixes are in
explorer/data/mapping.py.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.data.dataset import (Table, check_labels, clean_label_cells, empty_set_is_valid, guess_pair_columns,
                                   label_set, label_shape, sorted_names, split_multi)
from explorer.data.mapping import (MOVED_F1_GAIN, PERMUTED_GAIN, Issue, check_kind, checkpoint_issues, fix_for,
                                   mapping_check, multi_mapping_check)
from explorer.data.names import merge_labels, name_matches, near_duplicates, renamed
from explorer.model.checkpoints import Checkpoint
from explorer.model.problem import ProblemType
from explorer.results import JsonResult
from explorer.text.errors import Message
from explorer.text.plain import csv_bytes

IMBALANCE_RATIO = 5.0  # largest / smallest class count that counts as imbalanced
MAX_PREDICT = 2000  # rows predicted for the mapping check; enough to see a permutation


@dataclass(frozen=True, eq=False)
class LabelReport(JsonResult):
    rows: int
    text_column: str
    label_columns: tuple[str, ...]
    problem_type: ProblemType
    loss: str
    labels: tuple[tuple[str, int], ...]  # (name, count), most frequent first
    issues: tuple[Issue, ...]
    traps: tuple[Message, ...]  # transformers pitfalls this data would hit
    notes: tuple[Message, ...]
    suggested_mapping: dict[str, str]  # CSV name -> checkpoint name; {} without a clear gain
    accuracy_before: float | None = None
    accuracy_after: float | None = None
    confusion: np.ndarray | None = None  # (csv labels, checkpoint labels) counts
    confusion_rows: tuple[str, ...] = ()
    confusion_cols: tuple[str, ...] = ()
    misclassified: tuple[dict, ...] = ()  # {text, [text_pair], label, expected, predicted} under the best mapping
    agreement: str = "accuracy"  # what accuracy_before/after measure: "accuracy" | "macro_f1" (multi-label)
    # With a suggested mapping: {side: "checkpoint" | "either", reason, advice (Message), config
    # ({id2label, label2id} for config.json), csv ({CSV name: name to write in the CSV})}.
    fix: dict | None = None
    text_pair_column: str | None = None  # the second text of sentence pairs, read with the pair encoding

    @property
    def kinds(self) -> set[str]:
        return {i.kind for i in self.issues}

    def to_dict(self) -> dict:
        return {
            "rows": self.rows, "text_column": self.text_column, "text_pair_column": self.text_pair_column,
            "label_columns": list(self.label_columns),
            "problem_type": self.problem_type, "loss": self.loss,
            "labels": [{"name": n, "count": c} for n, c in self.labels],
            "issues": [{"kind": i.kind, "message": i.message, **({"detail": i.detail} if i.detail else {})}
                       for i in self.issues],
            "traps": list(self.traps), "notes": list(self.notes),
            "suggested_mapping": self.suggested_mapping,
            "accuracy_before": self.accuracy_before, "accuracy_after": self.accuracy_after,
            "agreement": self.agreement, "fix": self.fix,
            "confusion": None if self.confusion is None else {
                "rows": list(self.confusion_rows), "cols": list(self.confusion_cols),
                "counts": self.confusion.astype(int).tolist()},
            "misclassified": list(self.misclassified),
        }


def _traps(kind: str, names: list[str], ck: Checkpoint | None = None) -> list[Message]:
    """The transformers pitfalls this data would hit; a checkpoint whose config already sets the multi-label
    problem_type is told only what is left to get right (the labels' form), not to set it."""
    traps = []
    if kind == ProblemType.REGRESSION:
        traps.append(Message("trap_regression"))
    if kind == ProblemType.SINGLE and len(names) == 2:
        traps.append(Message("trap_two_classes"))
    if kind == ProblemType.MULTI:
        set_already = ck is not None and getattr(ck.model.config, "problem_type", None) == ProblemType.MULTI
        traps.append(Message("trap_multi_label_set", name=ck.name) if set_already else Message("trap_multi_label"))
    return traps


def label_report(table: Table, text_column: str | None = None, label_column: str | None = None,
                 ck: Checkpoint | None = None, max_predict: int = MAX_PREDICT, seed: int = 0,
                 text_pair_column: str | None = None) -> LabelReport:
    """Everything worth knowing about a table's labels; raises DataError only for unusable columns.
    `text_pair_column`: None guesses a sentence pair from the header, "" means one text (guess_pair_columns)."""
    if ck is not None:  # a token classifier has no one label per text to compare with: one line, not a traceback
        check_kind(ck, token_data=False)
    text_col, label_cols, pair_col = guess_pair_columns(table.frame, text_column, label_column, text_pair_column)
    frame, cleaned = clean_label_cells(table.frame, label_cols)
    kind = label_shape(frame, label_cols)
    # Shown with the other issues (the data page and inspect-data list them); prepare() notes the same.
    issues: list[Issue] = [Issue("invisible_characters", note) for note in cleaned]
    cells = frame[list(label_cols)]
    missing = cells.isna() | (cells.fillna("").apply(lambda c: c.str.strip()) == "")
    if empty_set_is_valid(kind, label_cols):  # an empty label set says no label applies, unless all are empty
        empty = frame[label_cols[0]].map(lambda v: not label_set(v))
        missing = empty.to_frame() if empty.all() else missing & False
    n_missing = int(missing.any(axis=1).sum())
    if n_missing:
        issues.append(Issue("missing_labels", Message("issue_missing_labels", n=n_missing, total=len(frame)),
                            {"rows": n_missing}))
    valid = frame[~missing.any(axis=1)]
    if kind == ProblemType.MULTI and len(label_cols) > 1:
        counts = {c: int(pd.to_numeric(valid[c], errors="coerce").fillna(0).sum()) for c in label_cols}
    elif kind == ProblemType.REGRESSION:
        counts = {}
    else:
        raw = valid[label_cols[0]]
        if kind == ProblemType.MULTI:
            raw = pd.Series([p for v in raw for p in label_set(v)], dtype=object)
        counts = {str(k): int(v) for k, v in raw.value_counts().items()}
    names = list(counts)
    check_labels(len(names))  # near_duplicates and the mapping compare every pair of labels
    merge = near_duplicates(counts, ck.labels if ck is not None and kind != ProblemType.REGRESSION else ())
    if merge:
        pairs = ", ".join(f"'{a}' → '{b}'" for a, b in merge.items())
        issues.append(Issue("near_duplicate_labels", Message("issue_near_spellings", pairs=pairs),
                            {"merge": merge}))
    if kind != ProblemType.REGRESSION and len(counts) - len(merge) <= 1:
        issues.append(Issue("single_class", Message("issue_single_class", names=", ".join(names) or "—")))
    elif counts and max(counts.values()) >= IMBALANCE_RATIO * max(min(counts.values()), 1):
        big, small = max(counts, key=counts.get), min(counts, key=counts.get)
        issues.append(Issue("imbalance", Message("issue_imbalance", big=big, n_big=counts[big], small=small,
                                                 n_small=counts[small])))
    # An id fits int64; a longer run of digits is a name (past 4,300 digits int() raises).
    ints = [int(n) for n in names if n.lstrip("-").isdigit() and len(n) <= 19]
    if kind == ProblemType.SINGLE and ints and len(ints) == len(names):
        ids = sorted(ints)
        if ids[0] == 1 or ids != list(range(ids[0], ids[0] + len(ids))):
            issues.append(Issue("one_based_ids", Message("issue_one_based_ids", ids=ids[:10], last=len(ids) - 1,
                                                         n=len(ids))))
    report: dict = dict(suggested_mapping={})
    if ck is not None:
        issues += checkpoint_issues(ck)
        generic = any(i.kind == "generic_label_names" for i in issues)
        ck_set = set(ck.labels)
        renames: dict[str, str] = {}
        if not generic and kind != ProblemType.REGRESSION and not ints:
            csv_set = set(names) - set(merge)
            renames = name_matches(sorted(csv_set), ck.labels)
            if renames:
                pairs = ", ".join(f"'{a}' → '{b}'" for a, b in renames.items())
                issues.append(Issue("label_name_mismatch",
                                    Message("issue_label_name_mismatch", name=ck.name, pairs=pairs), {"mapping": renames}))
            extra, unused = sorted(csv_set - ck_set - set(renames)), sorted(ck_set - csv_set - set(renames.values()))
            if extra or unused:
                issues.append(Issue("unseen_labels", Message("issue_unseen_labels", csv_only=", ".join(extra) or "—",
                                                             checkpoint_only=", ".join(unused) or "—"),
                                    {"csv_only": extra, "checkpoint_only": unused}))
        all_ids = bool(ints) and len(ints) == len(names)
        # A head with new (random) weights predicts nothing about the labels, so a "best mapping" found
        # from it would be noise presented as a fix. Placeholder names (LABEL_i) can only be compared
        # with label ids.
        if kind != ProblemType.REGRESSION and len(names) >= 2 and (not generic or all_ids) and not ck.new_weights:
            sample = valid.sample(n=min(max_predict, len(valid)), random_state=seed)
            texts = sample[text_col].fillna("").astype(str).tolist()
            pairs = sample[pair_col].astype(str).tolist() if pair_col else None
            if kind == ProblemType.SINGLE:
                labels = sample[label_cols[0]].str.strip().map(lambda v: merge.get(v, v)).tolist()
                check = mapping_check(texts, labels, ck, renames, text_pairs=pairs)
                permuted = check["after"] >= check["before"] + PERMUTED_GAIN
            else:
                y, rows = _label_matrix(sample, label_cols, merge)
                check = multi_mapping_check(texts, y, rows, ck, renames, text_pairs=pairs)
            moved = {a: b for a, b in check["best"].items() if check["identity"].get(a) != b}
            if kind == ProblemType.MULTI:
                permuted = bool(moved) and (check["after"] - check["before"]) * len(rows) / len(moved) >= MOVED_F1_GAIN
            report.update(accuracy_before=check["before"], accuracy_after=check["after"],
                          confusion=check["confusion"], confusion_rows=check["rows"], confusion_cols=check["cols"],
                          misclassified=check["misclassified"],
                          agreement="accuracy" if kind == ProblemType.SINGLE else "macro_f1")
            if permuted and moved:
                key = "issue_permuted" if kind == ProblemType.SINGLE else "issue_permuted_multi"
                issues.append(Issue("permuted_mapping",
                                    Message(key, n=len(moved), name=ck.name,
                                            before=f"{check['before']:.0%}", after=f"{check['after']:.0%}"),
                                    {"moved": moved}))
                report["suggested_mapping"] = check["best"]
                report["fix"] = fix_for(ck, check["best"], ids=all_ids)
        if renames and not report["suggested_mapping"]:
            report["suggested_mapping"] = renames
            report["fix"] = fix_for(ck, renames, reason="names")
    return LabelReport(
        rows=len(frame), text_column=text_col, label_columns=label_cols, problem_type=kind, loss=kind.loss_name,
        labels=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), issues=tuple(issues),
        traps=tuple(_traps(kind, names, ck)), notes=table.notes, text_pair_column=pair_col, **report)


def _label_matrix(frame: pd.DataFrame, label_cols: tuple[str, ...],
                  merge: dict[str, str]) -> tuple[np.ndarray, list[str]]:
    """((rows, labels) bool, label names) from 0/1 columns or one label-set column (a|b, JSON lists)."""
    if len(label_cols) > 1:
        y = frame[list(label_cols)].apply(pd.to_numeric, errors="coerce").fillna(0).to_numpy() > 0
        return y, list(label_cols)
    sets = [[merge.get(p, p) for p in label_set(v)] for v in frame[label_cols[0]]]
    names = sorted_names(p for row in sets for p in row)
    index = {n: i for i, n in enumerate(names)}
    y = np.zeros((len(sets), len(names)), bool)
    for r, row in enumerate(sets):
        y[r, [index[p] for p in row]] = True
    return y, names


def corrected_csv(table: Table, report: LabelReport, raw: bool = False) -> bytes:
    """The CSV-side fix: `table` with the report's mapping applied to its labels (0/1 columns renamed,
    label sets rewritten in their own format), comma-separated and quoted, as UTF-8 bytes; formula cells
    guarded for a spreadsheet (explorer.text.plain.csv_bytes) unless `raw`."""
    mapping = dict(report.fix["csv"]) if report.fix else {}
    frame, _ = clean_label_cells(table.frame, report.label_columns)
    if len(report.label_columns) > 1:
        return csv_bytes(frame.rename(columns=mapping), raw=raw)
    column = report.label_columns[0]
    merge = next((i.detail["merge"] for i in report.issues if i.kind == "near_duplicate_labels"), {})
    full = {**{v: mapping.get(c, c) for v, c in merge.items()}, **mapping}  # spellings merged, then mapped
    if report.problem_type == ProblemType.MULTI:
        frame = frame.copy()
        frame[column] = frame[column].map(lambda v: _rename_set(v, full))
    else:
        frame = merge_labels(frame, column, full)
    return csv_bytes(frame, raw=raw)


def _rename_set(value, mapping: dict[str, str]):
    """A label-set cell with its labels renamed, written in the form it came in."""
    parts = split_multi(value) if isinstance(value, str) else None
    if parts is None:
        return renamed(value, mapping)
    names = [mapping.get(p, p) for p in parts]
    v = value.strip()
    if v.startswith("["):
        return json.dumps(names, ensure_ascii=False)
    return ("|" if "|" in v else ";").join(names)


