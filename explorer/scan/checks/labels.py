"""Rows whose given label is probably wrong, told apart from the model's own errors.

The Label audit's method, one audit for both: a linear head cross-validated on the rows' frozen vectors (the scan's
one forward pass), so every row's probabilities come from a head that never saw its label, then confident learning
(cleanlab, through the audit's own `find_issues`). The checkpoint's own probabilities alone would not do: on a
model that is 71% right, its errors are what cleanlab would flag. cleanlab reads the mean of the two (an ensemble
of two witnesses; the probe alone under-counts the noise where its probabilities are soft). A flagged row is a
*label error* where the checkpoint also predicts the suggested label. The probe reads the checkpoint's own vectors, so the two are not independent
witnesses: a hard row can fool both. So a share of such rows is major only where label noise explains the model's
errors: the checkpoint is accurate on the rows nobody flagged (MODEL_ACCURATE) and the estimated noise rate is at
least EXPLAINED of the checkpoint's error rate on all rows. Where it is less, the model errs beyond what label
noise explains, and the rows are reported as either (minor, or info on an inaccurate model)."""
from __future__ import annotations

import numpy as np
import torch

from explorer.data import audit as audit_core
from explorer.data.dataset import LabeledData
from explorer.model.problem import ProblemType
from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import ExplorerError, Message

TOP_ROWS = 50  # rows a finding lists in its examples; its `rows` carry all
MAJOR_SHARE = 0.05  # label errors in at least this share of the rows is major ...
MODEL_ACCURATE = 0.90  # ... when the checkpoint is at least this accurate on the rows nobody flagged ...
EXPLAINED = 0.8  # ... and the estimated noise rate is at least this share of its error rate on all rows


def _trained(data: ScanData) -> str | None:
    why = labelled_single(data)
    if why:
        return why
    # A random head's probabilities say nothing about the labels: every row would look mislabelled.
    return "scan_na_new_head" if data.ck.new_weights else None


@check("labels.suspect_rows", _trained, cost=0.1, needs=READS_LABELS, deeper="pages/audit.py")
def find_suspect_rows(data: ScanData, found: Found, progress) -> list[Finding]:
    y = found.given_ids(data)
    keep = np.flatnonzero(y >= 0)  # rows whose label names one of the checkpoint's
    labels = sorted(set(y[keep].tolist()))
    if len(labels) < 2 or len(keep) < 4:
        return []
    index = {c: i for i, c in enumerate(labels)}  # cleanlab reads labels 0..k-1
    labelled = LabeledData(texts=tuple(data.texts[i] for i in keep), y=np.array([index[c] for c in y[keep]]),
                           label_names=tuple(found.name_of(data, c) for c in labels), problem_type=ProblemType.SINGLE,
                           text_column="text", label_columns=("label",), notes=())
    try:
        folds, _ = audit_core.fold_plan(labelled)
    except ExplorerError:  # a label with one row: no fold can hold it out
        return []
    oof = audit_core.out_of_fold(torch.from_numpy(np.ascontiguousarray(data.vectors[keep])), labelled, folds,
                                 data.seed, progress)
    own = data.probabilities[keep][:, labels]
    both = (oof + own / own.sum(1, keepdims=True)) / 2  # (rows, labels) the probe and the checkpoint, averaged
    _, flagged, noise = audit_core.find_issues(labelled, both)
    progress(1.0, "")
    if not len(flagged):
        return []
    model = np.array([index.get(int(p), -1) for p in data.predicted[keep]])  # the checkpoint, in cleanlab's ids
    suggested = both.argmax(-1)
    confirmed = [i for i in flagged if model[i] == suggested[i] != labelled.y[i]]
    others = np.setdiff1d(np.arange(len(keep)), flagged)
    model_accuracy = float((model[others] == labelled.y[others]).mean()) if len(others) else 0.0
    rows = [{"row": int(keep[i]), "given": data.given[keep[i]], "suggested": labelled.label_names[int(suggested[i])],
             "predicted": found.name_of(data, int(data.predicted[keep[i]])), "p_given": round(float(both[i, labelled.y[i]]), 4),
             "model_agrees": bool(model[i] == suggested[i])} for i in flagged]
    error_rate = float((model != labelled.y).mean())
    accurate = model_accuracy >= MODEL_ACCURATE
    explained = accurate and noise >= EXPLAINED * error_rate
    severity = "major" if explained and len(confirmed) >= MAJOR_SHARE * data.rows else "minor" if accurate else "info"
    key = "scan_label_errors" if explained else "scan_suspect_rows_or_model"
    return [Finding("labels.suspect_rows", severity,
                    Message(key, n=len(flagged), rows=data.rows, confirmed=len(confirmed), noise=f"{noise:.1%}",
                            accuracy=f"{model_accuracy:.0%}", errors=f"{error_rate:.1%}"),
                    {"rows": [r["row"] for r in rows], "label_errors": [int(keep[i]) for i in confirmed],
                     "examples": rows[:TOP_ROWS], "estimated_noise_rate": round(noise, 4),
                     "model_accuracy_elsewhere": round(model_accuracy, 4), "model_error_rate": round(error_rate, 4),
                     "explained_by_label_noise": bool(explained), "folds": folds,
                     "probabilities": "mean of an out-of-fold linear head on the frozen vectors and the checkpoint",
                     "read_through_mapping": found.through_mapping})]
