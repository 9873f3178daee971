"""Data labels against a checkpoint's: its own label issues, the one-to-one mapping with the most agreement
(the Hungarian algorithm on the confusion of data labels and predictions), and both fixes for a mapping.

If the mapping beats the identity clearly, the checkpoint's id2label (or the CSV) is probably permuted.
Multi-label data get the same check on per-label F1 between the CSV's label sets and the checkpoint's
sigmoid > 0.5. Every suggested mapping comes with both fixes (a corrected CSV, a corrected
id2label/label2id) and what the data say about which side to change.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from explorer.data.dataset import DataError, label_set, sorted_names
from explorer.data.names import name_matches
from explorer.model.checkpoints import Checkpoint, is_token_classifier
from explorer.model.inference import predict_ids, predict_logits
from explorer.model.problem import ProblemType, confusion_counts
from explorer.text.errors import Message

PERMUTED_GAIN = 0.10  # the Hungarian mapping must beat the identity by this much accuracy


# Multi-label: the labels the mapping moves must gain this much F1 each, on average. Not a gain in
# the mean over all labels: one swapped pair among 28 labels moves that mean by 7 points at most.
MOVED_F1_GAIN = 0.25
_GENERIC = re.compile(r"^LABEL_\d+$")


@dataclass(frozen=True)
class Issue:
    kind: str
    message: Message  # a str (English) that translates with .message(lang)
    detail: dict = field(default_factory=dict)


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


def _identity_target(name: str, ck_labels: tuple[str, ...], renames: dict[str, str] | None = None) -> str | None:
    """The checkpoint label a CSV label means with no remapping (`renames`: spelling differences)."""
    if name in ck_labels:
        return name
    if renames and name in renames:
        return renames[name]
    if is_id(name) and int(name) < len(ck_labels):
        return ck_labels[int(name)]  # integer labels are ids
    return None


# An id has at most this many digits: no head has 10**9 labels, and int() refuses a label past 4,300 digits.
ID_DIGITS = 9


def is_id(name: str) -> bool:
    """Can label `name` be a label id ("0", "12")? A label of more digits than any head has labels is a name."""
    return name.isascii() and name.isdigit() and len(name) <= ID_DIGITS


@dataclass(frozen=True)
class Target:
    """Which of a checkpoint's labels explains a dataset row's label (Label audit → Attributions)."""
    label: str | None  # a checkpoint label; None: explain its prediction
    note: Message | None = None  # how the row's label was mapped, or why it has no label to explain


def checkpoint_target(value: str | float, data_type: str, ck: Checkpoint,
                      permuted: dict[str, str] | None = None) -> Target:
    """The checkpoint label that explains a row's label `value` ("0", "postive", "a|b", 0.9) the way the
    Data page maps labels to the checkpoint: the mapping it found (`permuted`, CSV label -> checkpoint label,
    the report's suggested_mapping) first, then names as they are, spelling variants and typos of one
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
    if permuted and permuted.get(name) in ck_labels and len(parts) == 1:
        # The data disagree with the names: explaining the checkpoint's own "positive" for a row whose
        # "positive" it calls "neutral" would explain the wrong class, silently.
        return Target(permuted[name], Message("target_permuted", label=name, mapped=permuted[name], name=ck.name))
    if permuted and permuted.get(name) in ck_labels:
        return Target(permuted[name], Message("target_first_permuted", label=name, mapped=permuted[name],
                                              labels=str(value), name=ck.name))
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


def permuted_mapping(check: dict, ck: Checkpoint) -> dict[str, str]:
    """The mapping an agreement_mapping `check` found (data label -> checkpoint name) when it is a permutation
    worth acting on: it moves a label and beats the names as they are by PERMUTED_GAIN accuracy; else {}. A head
    with new (random) weights predicts nothing about the labels: a mapping found from it would be noise."""
    moved = any(check["identity"].get(a) != b for a, b in check["best"].items())
    if moved and check["after"] >= check["before"] + PERMUTED_GAIN and not ck.new_weights:
        return dict(check["best"])
    return {}


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


def fix_for(ck: Checkpoint, mapping: dict[str, str], reason: str | None = None, ids: bool = False) -> dict:
    """Both fixes for `mapping` (CSV name -> checkpoint name) and which side to change; `ids`: the CSV
    holds label ids, so its fix writes the checkpoint's ids, not its names."""
    side, why = ("either", reason) if reason else fix_side(ck, mapping)
    cfg = corrected_config(ck, mapping)
    return {"side": side, "reason": why, "advice": Message(f"fix_{why}", name=ck.name),
            "config": {"id2label": cfg["id2label"], "label2id": cfg["label2id"]},
            "csv": {a: str(ck.labels.index(b)) if ids else b for a, b in mapping.items()}}


def corrected_config(ck: Checkpoint, mapping: dict[str, str]) -> dict:
    """The checkpoint's config with id2label renamed so each id says the CSV's name for it."""
    back = {v: k for k, v in mapping.items()}  # checkpoint name -> CSV name
    cfg = ck.model.config.to_dict()
    id2label = {int(i): back.get(str(n), str(n)) for i, n in ck.model.config.id2label.items()}
    cfg["id2label"] = {str(i): n for i, n in sorted(id2label.items())}
    cfg["label2id"] = {n: i for i, n in sorted(id2label.items())}
    return cfg


def check_kind(ck: Checkpoint, token_data: bool) -> None:
    """A sentence classifier cannot read token data, nor a token classifier sentence data: one line each."""
    token_model = is_token_classifier(ck)
    if token_data and not token_model:
        raise DataError("tags_sequence_checkpoint", name=ck.name)
    if token_model and not token_data:
        raise DataError("tags_token_checkpoint", name=ck.name)

