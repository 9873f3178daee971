"""Label report: what is wrong with a dataset's labels, alone and against a checkpoint.

The permuted-mapping check predicts with the checkpoint, builds the confusion matrix
(CSV label x checkpoint label) and lets the Hungarian algorithm find the one-to-one
mapping with the most agreement. If that beats the identity mapping clearly, the
checkpoint's id2label (or the CSV) is probably permuted. Multi-label data get the same
check on per-label F1 between the CSV's label sets and the checkpoint's sigmoid > 0.5.
Names that differ only in case, spacing or punctuation are a name mismatch, not a permutation.
Every suggested mapping comes with both fixes (a corrected CSV, a corrected id2label/label2id)
and what the data say about which side to change.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np
import pandas as pd
import torch
from scipy.optimize import linear_sum_assignment

from explorer.data.dataset import check_kind
from explorer.model.checkpoints import Checkpoint, fit_length
from explorer.model.kernel import attention_kernel
from explorer.model.problem import ProblemType, confusion_counts
from explorer.results import JsonResult
from explorer.text.errors import Message
from explorer.text.plain import csv_bytes
from explorer.data.dataset import (Table, clean_label_cells, empty_set_is_valid, guess_pair_columns, label_set,
                                   label_shape, sorted_names, split_multi, strip_invisible)

IMBALANCE_RATIO = 5.0  # largest / smallest class count that counts as imbalanced
PERMUTED_GAIN = 0.10  # the Hungarian mapping must beat the identity by this much accuracy
# Multi-label: the labels the mapping moves must gain this much F1 each, on average. Not a gain in
# the mean over all labels: one swapped pair among 28 labels moves that mean by 7 points at most.
MOVED_F1_GAIN = 0.25
MAX_PREDICT = 2000  # rows predicted for the mapping check; enough to see a permutation
_GENERIC = re.compile(r"^LABEL_\d+$")
_PUNCTUATION = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Issue:
    kind: str
    message: Message  # a str (English) that translates with .message(lang)
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class LabelReport(JsonResult):
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


def label_key(name: str) -> str:
    """Names equal under this key differ only by case, whitespace, invisible characters or Unicode form."""
    return " ".join(unicodedata.normalize("NFKC", strip_invisible(name)).casefold().split())


def name_key(name: str) -> str:
    """Names equal under this key differ only by case, spacing or punctuation ("very_negative", "Very Negative")."""
    return _PUNCTUATION.sub("", label_key(name))


def name_matches(csv_names, ck_labels: tuple[str, ...]) -> dict[str, str]:
    """{CSV name: checkpoint name} for names that are not equal but fold to one name_key, where that
    key names one label on each side (otherwise which is which is a guess)."""
    def by_key(names):
        out: dict[str, list[str]] = {}
        for n in names:
            out.setdefault(name_key(n), []).append(n)
        return out

    csv_names = list(csv_names)
    ours, theirs = by_key(csv_names), by_key(ck_labels)
    out = {n: theirs[k][0] for n in csv_names
           if n not in ck_labels and (k := name_key(n)) and len(ours[k]) == 1 and len(theirs.get(k, ())) == 1
           and theirs[k][0] not in csv_names}
    # A typo of one checkpoint label the CSV does not use ("postive" with no "positive" row) names it too.
    for n in csv_names:
        typos = [c for c in ck_labels if is_typo(n, c)]
        if n not in ck_labels and n not in out and len(typos) == 1 and typos[0] not in csv_names \
                and typos[0] not in out.values():
            out[n] = typos[0]
    return out


# A typo: the same words but one or more spelt a little differently ("postive", "negaitve"). difflib's
# ratio stands in for a Damerau-Levenshtein ratio (rapidfuzz is not a dependency and this runs on a
# few dozen names): a transposition costs it two matches, so "negaitve" still scores 0.875. Words
# under 4 letters, words with digits and words that differ in their first letter are never typos:
# "class_a"/"class_b", "label_1"/"label_2" and "sadness"/"madness" are different labels.
TYPO_RATIO = 0.85
MAX_TYPO_NAMES = 300  # distinct names compared pairwise; more is a text column, not labels
_WORDS = re.compile(r"[^\W_]+")


def is_typo(a: str, b: str) -> bool:
    """Do `a` and `b` name one label with a word misspelt? (Not when they are equal under label_key.)"""
    wa, wb = _WORDS.findall(label_key(a)), _WORDS.findall(label_key(b))
    pairs = [(x, y) for x, y in zip(wa, wb) if x != y]
    return len(wa) == len(wb) and bool(pairs) and all(
        min(len(x), len(y)) >= 4 and x[0] == y[0] and not any(c.isdigit() for c in x + y)
        and SequenceMatcher(None, x, y).ratio() >= TYPO_RATIO for x, y in pairs)


def near_duplicates(names_counts: dict[str, int], known: tuple[str, ...] = ()) -> dict[str, str]:
    """{variant: canonical}: names that differ by case, spacing or Unicode form, or by a typo
    (is_typo), merged into the group's name the checkpoint knows (`known`), else its most frequent.
    Canonicals are stripped of surrounding spaces (merge_labels strips every label, so a canonical
    "positive " would not stick). Two names the checkpoint both knows are never merged."""
    groups: dict[str, list[str]] = {}
    for name in names_counts:
        groups.setdefault(label_key(name), []).append(name)
    rank = lambda n: (n in known, names_counts[n], n)  # noqa: E731
    order = sorted(groups.values(), key=lambda g: max(map(rank, g)), reverse=True)
    fuzzy = len(order) <= MAX_TYPO_NAMES
    # Greedy, most frequent first: a group joins the first larger one it is a typo of, so a chain
    # of typos never links two labels the checkpoint knows.
    heads: list[list[str]] = []
    for group in order:
        head = max(group, key=rank)
        into = None if head in known or not fuzzy else next((h for h in heads if is_typo(head, max(h, key=rank))), None)
        if into is None:
            heads.append(list(group))
        else:
            into.extend(group)
    merge = {}
    for group in heads:
        if len(group) > 1:
            canonical = max(group, key=rank).strip()
            merge.update({n: canonical for n in group if n != canonical})
    return merge


def merge_labels(frame: pd.DataFrame, column: str, mapping: dict[str, str]) -> pd.DataFrame:
    """A copy of `frame` with `column`'s labels renamed (merge variants, or apply a mapping)."""
    out = frame.copy()
    out[column] = out[column].map(lambda v: _renamed(v, mapping))
    return out


def _renamed(value, mapping: dict[str, str]):
    return mapping.get(value, mapping.get(value.strip(), value.strip())) if isinstance(value, str) else value


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


def predict_logits(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                   text_pairs: list[str] | None = None) -> np.ndarray:
    """(n, labels) float32 logits from the checkpoint, read-only (inference mode). With `text_pairs`, each
    row is the tokenizer's pair encoding of (text, pair), as a sentence-pair classifier reads it."""
    out = []
    if ck.tokenizer.pad_token is None or ck.model.config.pad_token_id is None:
        batch_size = 1  # GPT-2 cannot pad, and HF's last-token pooling refuses batches without a pad id
    max_length = fit_length(ck, max_length)
    with torch.inference_mode(), attention_kernel(ck, "sdpa"):  # no weights read: the fast kernel
        for i in range(0, len(texts), batch_size):
            pairs = text_pairs[i:i + batch_size] if text_pairs is not None else None
            enc = ck.tokenizer(texts[i:i + batch_size], pairs, truncation=True, max_length=max_length,
                               padding=batch_size > 1, return_tensors="pt").to(ck.model.device)
            out.append(ck.model(**enc).logits.float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(ck.labels)), np.float32)


def predict_ids(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                text_pairs: list[str] | None = None) -> np.ndarray:
    """(n,) argmax label ids from the checkpoint, read-only (inference mode); pairs as predict_logits."""
    return predict_logits(ck, texts, batch_size, max_length, text_pairs).argmax(-1)


def _identity_target(name: str, ck_labels: tuple[str, ...], renames: dict[str, str] | None = None) -> str | None:
    """The checkpoint label a CSV label means with no remapping (`renames`: spelling differences)."""
    if name in ck_labels:
        return name
    if renames and name in renames:
        return renames[name]
    if name.lstrip("-").isdigit() and 0 <= int(name) < len(ck_labels):
        return ck_labels[int(name)]  # integer labels are ids
    return None


@dataclass(frozen=True)
class Target:
    """Which of a checkpoint's labels explains a dataset row's label (Label audit → Attributions)."""
    label: str | None  # a checkpoint label; None: explain its prediction
    note: Message | None = None  # how the row's label was mapped, or why it has no label to explain


def checkpoint_target(value: str | float, data_type: str, ck: Checkpoint) -> Target:
    """The checkpoint label that explains a row's label `value` ("0", "postive", "a|b", 0.9) the way the
    Data page maps labels to the checkpoint: names as they are, spelling variants and typos of one
    checkpoint label, integer labels as ids. A score has a label only on a one-output (regression)
    checkpoint; a label set is explained one label at a time, its first."""
    from explorer.model.problem import problem_type

    ck_labels, ck_type = ck.labels, problem_type(ck.model.config)
    if data_type == ProblemType.REGRESSION:
        if ck_type == ProblemType.REGRESSION:
            return Target(ck_labels[0], Message("target_score", value=value, label=ck_labels[0]))
        return Target(None, Message("target_no_score_label", value=value, name=ck.name, n=len(ck_labels)))
    parts = label_set(value) if data_type == ProblemType.MULTI else [str(value).strip()]
    if not parts:
        return Target(None, Message("target_empty_set"))
    name = parts[0]
    mapped = _identity_target(name, ck_labels, name_matches([name], ck_labels))
    if mapped is None:
        return Target(None, Message("target_missing", label=name, name=ck.name))
    note = Message("target_first", label=mapped, labels=str(value)) if len(parts) > 1 else \
        Message("target_mapped", label=name, mapped=mapped) if mapped != name else None
    return Target(mapped, note)


def _assign(score: np.ndarray, rows: list[str], ck_labels: tuple[str, ...], identity: dict) -> dict[str, str]:
    """The one-to-one CSV -> checkpoint mapping with the most `score` (rows, checkpoint labels). Ties go
    to the identity, so a mapping never moves a label without evidence."""
    tie = np.zeros(score.shape)
    for i, n in enumerate(rows):
        if identity.get(n) is not None:
            tie[i, ck_labels.index(identity[n])] = 1e-6
    r, c = linear_sum_assignment(-(score + tie))
    return {rows[i]: ck_labels[j] for i, j in zip(r, c)}


def mapping_check(texts: list[str], labels: list[str], ck: Checkpoint, renames: dict[str, str] | None = None,
                  text_pairs: list[str] | None = None) -> dict:
    """Confusion matrix, Hungarian mapping and before/after accuracy for single-label data (sentence
    pairs when `text_pairs` is given)."""
    ck_labels = ck.labels
    pred = predict_ids(ck, texts, text_pairs=text_pairs)
    check = agreement_mapping(labels, pred, ck_labels, renames)
    best = check["best"]
    # A label with no counterpart in the checkpoint (more CSV labels than it has) is an unseen label,
    # not a disagreement on each of its rows.
    wrong = [{"text": t, **_pair(text_pairs, i), "label": v, "expected": best[v], "predicted": ck_labels[p]}
             for i, (t, v, p) in enumerate(zip(texts, labels, pred)) if v in best and best[v] != ck_labels[p]]
    return {**check, "misclassified": tuple(wrong[:50])}


def agreement_mapping(labels: list[str], pred: np.ndarray, ck_labels: tuple[str, ...],
                      renames: dict[str, str] | None = None) -> dict:
    """Confusion of data labels (n,) against predicted checkpoint ids (n,), the Hungarian mapping on it and
    the agreement before (names as they are) and after (the mapping). One row per text for sentence
    labels, one per word for tags (explorer.data.tags)."""
    rows = sorted_names(labels)
    r_index = {n: i for i, n in enumerate(rows)}
    conf = confusion_counts([r_index[v] for v in labels], pred, len(rows), len(ck_labels))
    identity = {n: _identity_target(n, ck_labels, renames) for n in rows}
    best = _assign(conf.astype(float), rows, ck_labels, identity)
    n = max(len(labels), 1)
    before = sum(conf[r_index[a], ck_labels.index(b)] for a, b in identity.items() if b is not None) / n
    after = sum(conf[r_index[a], ck_labels.index(b)] for a, b in best.items()) / n
    return {"confusion": conf, "rows": tuple(rows), "cols": ck_labels, "best": best, "identity": identity,
            "before": float(before), "after": float(after)}


def _pair(text_pairs: list[str] | None, i: int) -> dict:
    """A misclassified row's second text, when the data are sentence pairs."""
    return {} if text_pairs is None else {"text_pair": text_pairs[i]}


def multi_mapping_check(texts: list[str], y: np.ndarray, names: list[str], ck: Checkpoint,
                        renames: dict[str, str] | None = None, text_pairs: list[str] | None = None) -> dict:
    """Multi-label data (`y`: (n, names) 0/1) against the checkpoint's sigmoid(logits) > 0.5:
    co-occurrence counts, per-pair F1, the assignment with the most F1 and the mean F1 before/after."""
    ck_labels = ck.labels
    pred = torch.sigmoid(torch.from_numpy(predict_logits(ck, texts, text_pairs=text_pairs))).numpy() > 0.5  # (n, m), HF's multi-label rule
    yes = np.asarray(y) > 0.5  # (n, k)
    both = yes.T.astype(np.int64) @ pred.astype(np.int64)  # (k, m) rows where CSV label i and prediction j agree on yes
    size = yes.sum(0)[:, None] + pred.sum(0)[None, :]
    # F1 per (CSV label, checkpoint label) pair from one matrix product; sklearn's f1_score would be k*m calls.
    f1 = np.divide(2.0 * both, size, out=np.zeros(both.shape), where=size > 0)
    identity = {n: _identity_target(n, ck_labels, renames) for n in names}
    best = _assign(f1, names, ck_labels, identity)
    k = max(len(names), 1)
    before = sum(f1[i, ck_labels.index(identity[n])] for i, n in enumerate(names) if identity[n] is not None) / k
    after = sum(f1[i, ck_labels.index(best[n])] for i, n in enumerate(names) if n in best) / k
    wrong = []
    for i, (t, row, p) in enumerate(zip(texts, yes, pred)):
        expected = sorted(best[n] for n, on in zip(names, row) if on and n in best)
        predicted = [c for c, on in zip(ck_labels, p) if on]
        if sorted(predicted) != expected:
            wrong.append({"text": t, **_pair(text_pairs, i), "label": "|".join(n for n, on in zip(names, row) if on),
                          "expected": "|".join(expected), "predicted": "|".join(predicted)})
    return {"confusion": both, "rows": tuple(names), "cols": ck_labels, "best": best, "identity": identity,
            "before": float(before), "after": float(after), "misclassified": tuple(wrong[:50])}


def fix_side(ck: Checkpoint, mapping: dict[str, str]) -> tuple[str, str]:
    """(side to change, why): the checkpoint when its config gives itself away, else "either": a
    permutation looks the same whichever side was rotated."""
    cfg = ck.model.config
    labels = ck.labels
    if labels and all(_GENERIC.match(str(n)) for n in labels):
        return "checkpoint", "generic"
    label2id = {str(k): int(v) for k, v in cfg.label2id.items()}
    if {str(v): int(k) for k, v in cfg.id2label.items()} != label2id:
        # label2id still saying what the model predicts for each CSV label: id2label is the rotated half.
        agrees = all(0 <= label2id.get(a, -1) < len(labels) and labels[label2id[a]] == b for a, b in mapping.items())
        return "checkpoint", "label2id_agrees" if agrees else "inconsistent"
    return "either", "no_evidence"


def _fix(ck: Checkpoint, mapping: dict[str, str], reason: str | None = None, ids: bool = False) -> dict:
    """Both fixes for `mapping` (CSV name -> checkpoint name) and which side to change; `ids`: the CSV
    holds label ids, so its fix writes the checkpoint's ids, not its names."""
    side, why = ("either", reason) if reason else fix_side(ck, mapping)
    cfg = corrected_config(ck, mapping)
    return {"side": side, "reason": why, "advice": Message(f"fix_{why}", name=ck.name),
            "config": {"id2label": cfg["id2label"], "label2id": cfg["label2id"]},
            "csv": {a: str(ck.labels.index(b)) if ids else b for a, b in mapping.items()}}


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
    ints = [int(n) for n in names if n.lstrip("-").isdigit()]
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
                report["fix"] = _fix(ck, check["best"], ids=all_ids)
        if renames and not report["suggested_mapping"]:
            report["suggested_mapping"] = renames
            report["fix"] = _fix(ck, renames, reason="names")
    return LabelReport(
        rows=len(frame), text_column=text_col, label_columns=label_cols, problem_type=kind, loss=kind.loss_name,
        labels=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), issues=tuple(issues),
        traps=tuple(_traps(kind, names)), notes=table.notes, text_pair_column=pair_col, **report)


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
    label sets rewritten in their own format), in the file's delimiter, as UTF-8 bytes; formula cells
    guarded for a spreadsheet (explorer.text.plain.csv_bytes) unless `raw`."""
    mapping = dict(report.fix["csv"]) if report.fix else {}
    frame, _ = clean_label_cells(table.frame, report.label_columns)
    if len(report.label_columns) > 1:
        return csv_bytes(frame.rename(columns=mapping), raw=raw, sep=table.delimiter)
    column = report.label_columns[0]
    merge = next((i.detail["merge"] for i in report.issues if i.kind == "near_duplicate_labels"), {})
    full = {**{v: mapping.get(c, c) for v, c in merge.items()}, **mapping}  # spellings merged, then mapped
    if report.problem_type == ProblemType.MULTI:
        frame = frame.copy()
        frame[column] = frame[column].map(lambda v: _rename_set(v, full))
    else:
        frame = merge_labels(frame, column, full)
    return csv_bytes(frame, raw=raw, sep=table.delimiter)


def _rename_set(value, mapping: dict[str, str]):
    """A label-set cell with its labels renamed, written in the form it came in."""
    parts = split_multi(value) if isinstance(value, str) else None
    if parts is None:
        return _renamed(value, mapping)
    renamed = [mapping.get(p, p) for p in parts]
    v = value.strip()
    if v.startswith("["):
        return json.dumps(renamed, ensure_ascii=False)
    return ("|" if "|" in v else ";").join(renamed)


def corrected_config(ck: Checkpoint, mapping: dict[str, str]) -> dict:
    """The checkpoint's config with id2label renamed so each id says the CSV's name for it."""
    back = {v: k for k, v in mapping.items()}  # checkpoint name -> CSV name
    cfg = ck.model.config.to_dict()
    id2label = {int(i): back.get(str(n), str(n)) for i, n in ck.model.config.id2label.items()}
    cfg["id2label"] = {str(i): n for i, n in sorted(id2label.items())}
    cfg["label2id"] = {n: i for i, n in sorted(id2label.items())}
    return cfg
