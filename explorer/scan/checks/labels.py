"""Rows whose given label is probably wrong: confident learning (cleanlab, through the label audit's own
`find_issues`) on the checkpoint's probabilities from the one forward pass, the labels read through a permutation
the mapping check found. The Label audit page fits K-fold probes on frozen features instead, for a checkpoint whose
head was not trained on these labels; a scan asks about the checkpoint as it is, whose head was."""
from __future__ import annotations

import numpy as np

from explorer.data import audit as audit_core
from explorer.data.dataset import LabeledData
from explorer.model.problem import ProblemType
from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import Message

TOP_ROWS = 50  # rows a finding lists in its examples; its `rows` carry all


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
    # cleanlab reads labels 0..k-1 against (n, k) probabilities: the labels the data use, renormalised.
    index = {c: i for i, c in enumerate(labels)}
    probs = data.probabilities[keep][:, labels]
    probs = probs / probs.sum(1, keepdims=True)
    labelled = LabeledData(texts=tuple(data.texts[i] for i in keep), y=np.array([index[c] for c in y[keep]]),
                           label_names=tuple(found.name_of(data, c) for c in labels), problem_type=ProblemType.SINGLE,
                           text_column="text", label_columns=("label",), notes=())
    _, flagged, noise = audit_core.find_issues(labelled, probs)
    progress(1.0, "")
    if not len(flagged):
        return []
    rows = [{"row": int(keep[i]), "given": data.given[keep[i]], "suggested": labelled.label_names[int(probs[i].argmax())],
             "p_given": round(float(probs[i, labelled.y[i]]), 4)} for i in flagged]
    severity = "major" if len(flagged) >= 0.05 * data.rows else "minor"
    return [Finding("labels.suspect_rows", severity,
                    Message("scan_suspect_rows", n=len(flagged), rows=data.rows, noise=f"{noise:.1%}"),
                    {"rows": [r["row"] for r in rows], "examples": rows[:TOP_ROWS],
                     "estimated_noise_rate": round(noise, 4), "read_through_mapping": found.through_mapping})]
