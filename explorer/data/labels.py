"""Label report: what is wrong with a dataset's labels, alone and against a checkpoint.

The permuted-mapping check predicts with the checkpoint, builds the confusion matrix
(CSV label x checkpoint label) and lets the Hungarian algorithm find the one-to-one
mapping with the most agreement. If that beats the identity mapping clearly, the
checkpoint's id2label (or the CSV) is probably permuted.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from scipy.optimize import linear_sum_assignment

from explorer.model.checkpoints import Checkpoint
from explorer.model.problem import ProblemType, confusion_counts
from explorer.text.errors import Message
from explorer.data.dataset import (Table, clean_label_cells, guess_pair_columns,
                                   label_shape, sorted_names, split_multi, strip_invisible)

IMBALANCE_RATIO = 5.0  # largest / smallest class count that counts as imbalanced
PERMUTED_GAIN = 0.10  # the Hungarian mapping must beat the identity by this much accuracy
MAX_PREDICT = 2000  # rows predicted for the mapping check; enough to see a permutation
_GENERIC = re.compile(r"^LABEL_\d+$")


@dataclass(frozen=True)
class Issue:
    kind: str
    message: Message  # a str (English) that translates with .message(lang)
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class LabelReport:
    rows: int
    text_column: str
    label_columns: tuple[str, ...]
    problem_type: str
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
    misclassified: tuple[dict, ...] = ()  # {text, label, expected, predicted} under the best mapping
    text_pair_column: str | None = None  # the second text of sentence pairs, read with the pair encoding

    @property
    def kinds(self) -> set[str]:
        return {i.kind for i in self.issues}

    def to_json(self) -> dict:
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
            "confusion": None if self.confusion is None else {
                "rows": list(self.confusion_rows), "cols": list(self.confusion_cols),
                "counts": self.confusion.astype(int).tolist()},
            "misclassified": list(self.misclassified),
        }


def label_key(name: str) -> str:
    """Names equal under this key differ only by case, whitespace, invisible characters or Unicode form."""
    return " ".join(unicodedata.normalize("NFKC", strip_invisible(name)).casefold().split())


def near_duplicates(names_counts: dict[str, int]) -> dict[str, str]:
    """{variant: canonical} where canonical is the most frequent spelling of its group, stripped of
    surrounding spaces (merge_labels strips every label, so a canonical "positive " would not stick)."""
    groups: dict[str, list[str]] = {}
    for name in names_counts:
        groups.setdefault(label_key(name), []).append(name)
    merge = {}
    for group in groups.values():
        if len(group) > 1:
            canonical = max(group, key=lambda n: (names_counts[n], n)).strip()
            merge.update({n: canonical for n in group if n != canonical})
    return merge


def merge_labels(frame: pd.DataFrame, column: str, mapping: dict[str, str]) -> pd.DataFrame:
    """A copy of `frame` with `column`'s labels renamed (merge variants, or apply a mapping)."""
    out = frame.copy()
    out[column] = out[column].map(lambda v: mapping.get(v, mapping.get(v.strip(), v.strip())) if isinstance(v, str) else v)
    return out


def checkpoint_issues(ck: Checkpoint) -> list[Issue]:
    cfg = ck.model.config
    issues = []
    names = [str(cfg.id2label[i]) for i in range(cfg.num_labels)] if len(cfg.id2label) == cfg.num_labels else []
    if names and all(_GENERIC.match(n) for n in names):
        issues.append(Issue("generic_label_names", Message("issue_generic_names", name=ck.name,
                                                           names=", ".join(names[:3]))))
    id2label = {int(k): str(v) for k, v in cfg.id2label.items()}
    label2id = {str(k): int(v) for k, v in cfg.label2id.items()}
    if {v: k for k, v in id2label.items()} != label2id:
        issues.append(Issue("inconsistent_mapping", Message("issue_inconsistent_mapping", name=ck.name,
                                                            id2label=id2label, label2id=label2id)))
    return issues


def predict_ids(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                text_pairs: list[str] | None = None) -> np.ndarray:
    """(n,) argmax label ids from the checkpoint, read-only (inference mode). With `text_pairs`, each row
    is the tokenizer's pair encoding of (text, pair), as a sentence-pair classifier reads it."""
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch_size):
            pairs = text_pairs[i:i + batch_size] if text_pairs is not None else None
            enc = ck.tokenizer(texts[i:i + batch_size], pairs, truncation=True, max_length=max_length,
                               padding=True, return_tensors="pt").to(ck.model.device)
            out.append(ck.model(**enc).logits.argmax(-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _identity_target(name: str, ck_labels: tuple[str, ...]) -> str | None:
    """The checkpoint label a CSV label means with no remapping."""
    if name in ck_labels:
        return name
    if name.lstrip("-").isdigit() and 0 <= int(name) < len(ck_labels):
        return ck_labels[int(name)]  # integer labels are ids
    return None


def mapping_check(texts: list[str], labels: list[str], ck: Checkpoint, text_pairs: list[str] | None = None) -> dict:
    """Confusion matrix, Hungarian mapping and before/after accuracy for single-label data (sentence
    pairs when `text_pairs` is given)."""
    ck_labels = ck.labels
    rows = sorted_names(labels)
    pred = predict_ids(ck, texts, text_pairs=text_pairs)
    r_index = {n: i for i, n in enumerate(rows)}
    conf = confusion_counts([r_index[v] for v in labels], pred, len(rows), len(ck_labels))
    r, c = linear_sum_assignment(-conf)
    best = {rows[i]: ck_labels[j] for i, j in zip(r, c)}
    identity = {n: _identity_target(n, ck_labels) for n in rows}
    n = max(len(labels), 1)
    before = sum(conf[r_index[a], ck_labels.index(b)] for a, b in identity.items() if b is not None) / n
    after = sum(conf[r_index[a], ck_labels.index(b)] for a, b in best.items()) / n
    wrong = [{"text": t, "label": v, "expected": best.get(v), "predicted": ck_labels[p]}
             for t, v, p in zip(texts, labels, pred) if best.get(v) != ck_labels[p]]
    return {"confusion": conf, "rows": tuple(rows), "cols": ck_labels, "best": best, "identity": identity,
            "before": float(before), "after": float(after), "misclassified": tuple(wrong[:50])}


def _traps(kind: str, names: list[str]) -> list[Message]:
    traps = []
    if kind == ProblemType.REGRESSION:
        traps.append(Message("trap_regression"))
    if kind == ProblemType.SINGLE and len(names) == 2:
        traps.append(Message("trap_two_classes"))
    if kind == ProblemType.MULTI:
        traps.append(Message("trap_multi_label"))
    return traps


def label_report(table: Table, text_column: str | None = None, label_column: str | None = None,
                 ck: Checkpoint | None = None, max_predict: int = MAX_PREDICT, seed: int = 0,
                 text_pair_column: str | None = None) -> LabelReport:
    """Everything worth knowing about a table's labels; raises DataError only for unusable columns.
    `text_pair_column`: None guesses a sentence pair from the header, "" means one text (guess_pair_columns)."""
    text_col, label_cols, pair_col = guess_pair_columns(table.frame, text_column, label_column, text_pair_column)
    frame, cleaned = clean_label_cells(table.frame, label_cols)
    kind = label_shape(frame, label_cols)
    # Shown with the other issues (the data page and inspect-data list them); prepare() notes the same.
    issues: list[Issue] = [Issue("invisible_characters", note) for note in cleaned]
    cells = frame[list(label_cols)]
    missing = cells.isna() | (cells.fillna("").apply(lambda c: c.str.strip()) == "")
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
            raw = pd.Series([p for v in raw for p in (split_multi(v) or [v.strip()])], dtype=object)
        counts = {str(k): int(v) for k, v in raw.value_counts().items()}
    names = list(counts)
    merge = near_duplicates(counts)
    if merge:
        pairs = ", ".join(f"'{a}' → '{b}'" for a, b in merge.items())
        issues.append(Issue("near_duplicate_labels", Message("issue_near_duplicates", pairs=pairs),
                            {"merge": merge}))
    if kind != ProblemType.REGRESSION and len(counts) - len(merge) <= 1:
        issues.append(Issue("single_class", Message("issue_single_class", names=", ".join(names) or "—")))
    elif counts and max(counts.values()) >= IMBALANCE_RATIO * max(min(counts.values()), 1):
        big, small = max(counts, key=counts.get), min(counts, key=counts.get)
        issues.append(Issue("imbalance", Message("issue_imbalance", big=big, n_big=counts[big], small=small,
                                                 n_small=counts[small])))
    ints = [int(n) for n in names if n.lstrip("-").isdigit()]
    if kind == ProblemType.SINGLE and ints and len(ints) == len(names):
        ids = sorted(ints)
        if ids[0] == 1 or ids != list(range(ids[0], ids[0] + len(ids))):
            issues.append(Issue("one_based_ids", Message("issue_one_based_ids", ids=ids[:10], last=len(ids) - 1,
                                                         n=len(ids))))
    report = dict(suggested_mapping={})
    if ck is not None:
        issues += checkpoint_issues(ck)
        generic = any(i.kind == "generic_label_names" for i in issues)
        ck_set = set(ck.labels)
        if not generic and kind != ProblemType.REGRESSION and not ints:
            csv_set = set(names) - set(merge)
            extra, unused = sorted(csv_set - ck_set), sorted(ck_set - csv_set)
            if extra or unused:
                issues.append(Issue("unseen_labels", Message("issue_unseen_labels", csv_only=", ".join(extra) or "—",
                                                             checkpoint_only=", ".join(unused) or "—"),
                                    {"csv_only": extra, "checkpoint_only": unused}))
        # A head with new (random) weights or placeholder names predicts nothing about the labels,
        # so a "best mapping" found from it would be noise presented as a fix.
        if kind == ProblemType.SINGLE and len(names) >= 2 and not generic and not ck.new_weights:
            sample = valid.sample(n=min(max_predict, len(valid)), random_state=seed)
            texts = sample[text_col].fillna("").astype(str).tolist()
            labels = sample[label_cols[0]].str.strip().map(lambda v: merge.get(v, v)).tolist()
            pairs = sample[pair_col].astype(str).tolist() if pair_col else None
            check = mapping_check(texts, labels, ck, text_pairs=pairs)
            report.update(accuracy_before=check["before"], accuracy_after=check["after"],
                          confusion=check["confusion"], confusion_rows=check["rows"], confusion_cols=check["cols"],
                          misclassified=check["misclassified"])
            if check["after"] >= check["before"] + PERMUTED_GAIN and check["best"] != check["identity"]:
                moved = {a: b for a, b in check["best"].items() if check["identity"].get(a) != b}
                issues.append(Issue("permuted_mapping",
                                    Message("issue_permuted", n=len(moved), name=ck.name,
                                            before=f"{check['before']:.0%}", after=f"{check['after']:.0%}"),
                                    {"moved": moved}))
                report["suggested_mapping"] = check["best"]
    return LabelReport(
        rows=len(frame), text_column=text_col, label_columns=label_cols, problem_type=kind, loss=kind.loss_name,
        labels=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), issues=tuple(issues),
        traps=tuple(_traps(kind, names)), notes=table.notes, text_pair_column=pair_col, **report)


def corrected_config(ck: Checkpoint, mapping: dict[str, str]) -> dict:
    """The checkpoint's config with id2label renamed so each id says the CSV's name for it."""
    back = {v: k for k, v in mapping.items()}  # checkpoint name -> CSV name
    cfg = ck.model.config.to_dict()
    id2label = {int(i): back.get(str(n), str(n)) for i, n in ck.model.config.id2label.items()}
    cfg["id2label"] = {str(i): n for i, n in sorted(id2label.items())}
    cfg["label2id"] = {n: i for i, n in sorted(id2label.items())}
    return cfg
