"""Two checkpoints on one text, label by label: what the Logits page shows for a row opened from a scan against
a baseline (explorer/scan/baseline.py compares the two on many rows; this reads one row's numbers from both).

Each side is the checkpoint's own analysis (explorer.model.analysis.analyze), so every number here is one the
page already shows for a single checkpoint, with the same parity tests behind it. Labels are matched by id: a
renamed id2label shows as two different names on one row, which is the point of looking.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.model.analysis import Analysis
from explorer.text.errors import ExplorerError


@dataclass(frozen=True, eq=False)
class SideBySide:
    """A checkpoint (B) and a baseline (A) on the same text."""
    checkpoint: str
    baseline: str
    labels: tuple[str, ...]  # B's id2label order
    baseline_labels: tuple[str, ...]  # A's names for the same ids
    logits: np.ndarray  # (labels,) B's
    baseline_logits: np.ndarray  # (labels,) A's
    # Each model's own reading of its logits (ProblemType.probabilities: softmax, sigmoid, or none for a
    # regression), as the scan's probabilities are read.
    scores: np.ndarray  # (labels,)
    baseline_scores: np.ndarray  # (labels,)
    function: str  # B's reading: "softmax", "sigmoid" or "none"
    baseline_function: str

    @property
    def predicted(self) -> int:
        """B's top label id."""
        return int(np.argmax(self.scores))

    @property
    def baseline_predicted(self) -> int:
        """A's top label id."""
        return int(np.argmax(self.baseline_scores))

    @property
    def functions(self) -> str:
        """The reading of each side's scores, once when both read them alike ("softmax"), else B's / A's
        ("sigmoid / softmax": a multi-label head beside a single-label one, each scored by its own rule)."""
        same = self.function == self.baseline_function
        return self.function if same else f"{self.function} / {self.baseline_function}"

    @property
    def renamed(self) -> tuple[int, ...]:
        """The label ids the two checkpoints name differently."""
        return tuple(i for i, (a, b) in enumerate(zip(self.baseline_labels, self.labels)) if a != b)

    def rows(self) -> list[dict]:
        """One row per label id: each checkpoint's name, logit and score, and B's score minus A's."""
        return [{"id": i, "label": self.labels[i], "logit": float(self.logits[i]), "score": float(self.scores[i]),
                 "baseline_label": self.baseline_labels[i], "baseline_logit": float(self.baseline_logits[i]),
                 "baseline_score": float(self.baseline_scores[i]),
                 "difference": float(self.scores[i] - self.baseline_scores[i])} for i in range(len(self.labels))]


def side_by_side(checkpoint: Analysis, baseline: Analysis) -> SideBySide:
    """B's analysis (`checkpoint`) and A's (`baseline`) of one text, label id by label id. Two label counts that
    differ cannot be read side by side: one line saying so."""
    if len(checkpoint.labels) != len(baseline.labels):
        raise ExplorerError("scan_baseline_labels", baseline=baseline.checkpoint, name=checkpoint.checkpoint,
                            a=len(baseline.labels), b=len(checkpoint.labels))
    return SideBySide(checkpoint=checkpoint.checkpoint, baseline=baseline.checkpoint, labels=checkpoint.labels,
                      baseline_labels=baseline.labels, logits=checkpoint.logits, baseline_logits=baseline.logits,
                      scores=checkpoint.scores, baseline_scores=baseline.scores,
                      function=checkpoint.problem_type.output, baseline_function=baseline.problem_type.output)
