"""Rows whose given label is probably wrong: the label audit (out-of-fold linear heads and confident learning,
explorer.data.audit) on the vectors of the one forward pass."""
from __future__ import annotations

import numpy as np
import torch

from explorer.data import audit as audit_core
from explorer.data.dataset import LabeledData, sorted_names
from explorer.model.problem import ProblemType
from explorer.scan.base import Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import ExplorerError, Message

TOP_ROWS = 50  # rows a finding lists; the CSV of flags carries all


def _labelled(data: ScanData) -> str | None:
    why = labelled_single(data)
    if why:
        return why
    counts = np.unique(np.asarray(data.given), return_counts=True)[1]
    return "scan_na_audit_small" if len(counts) < 2 or counts.min() < 2 else None


@check("labels.suspect_rows", _labelled, cost=1.0)
def find_suspect_rows(data: ScanData, found: Found, progress) -> list[Finding]:
    """The audit's flags, most suspicious first. The audit learns the data's own labels, whatever the
    checkpoint calls them, so a permuted id2label cannot make a row look mislabelled."""
    names = tuple(sorted_names(list(data.given)))
    index = {n: i for i, n in enumerate(names)}
    labelled = LabeledData(texts=data.texts, y=np.array([index[g] for g in data.given], np.int64), label_names=names,
                           problem_type=ProblemType.SINGLE, text_column="text", label_columns=("label",), notes=(),
                           text_pairs=data.pairs)
    try:
        folds, _ = audit_core.fold_plan(labelled, audit_core.FOLDS)
    except ExplorerError:
        return []
    oof = audit_core.out_of_fold(torch.from_numpy(data.vectors), labelled, folds, data.seed,
                                 progress=progress)
    _, flagged, noise = audit_core.find_issues(labelled, oof)
    if not len(flagged):
        return []
    rows = [{"row": int(i), "given": data.given[i], "suggested": names[int(oof[i].argmax())],
             "p_given": round(float(oof[i, index[data.given[i]]]), 4)} for i in flagged]
    severity = "major" if len(flagged) >= 0.05 * data.rows else "minor"
    return [Finding("labels.suspect_rows", severity,
                    Message("scan_suspect_rows", n=len(flagged), rows=data.rows, noise=f"{noise:.1%}"),
                    {"rows": [r["row"] for r in rows], "examples": rows[:TOP_ROWS],
                     "estimated_noise_rate": round(noise, 4)})]
