"""What every scan check shares: a finding, the data and predictions a check reads (one forward pass, shared),
and the registry of checks, each declaring what it applies to (as LIT components declare `is_compatible`).

Checks run in registry order; a later check reads what earlier ones found (`Found`): once the mapping check has
found a permuted id2label, every later check reads the data's labels through that mapping and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from explorer.model.checkpoints import Checkpoint
from explorer.model.problem import ProblemType
from explorer.runtime.jobs import Progress
from explorer.text.errors import Message

SEVERITIES = ("major", "minor", "info")  # most serious first: the report's order


@dataclass(frozen=True)
class Finding:
    """One thing a check found: its check id, how serious, one line for people and the evidence (`fields`:
    JSON-safe; row indices are 0-based positions among the data's rows)."""
    check: str
    severity: str  # one of SEVERITIES
    message: Message
    fields: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"check": self.check, "severity": self.severity, "message": str(self.message), **self.fields}

    def evidence(self) -> dict:
        """The fields that are one value each (figures, words, labels), for a table; rows and lists stay out."""
        return {k: v for k, v in self.fields.items() if not isinstance(v, (list, dict, tuple))}

    def rows(self) -> list[int]:
        """The data rows it points at: its `rows`, else both rows of each of its `pairs`."""
        return [int(r) for r in (self.fields.get("rows") or [i for p in self.fields.get("pairs", []) for i in p])]


@dataclass(frozen=True, eq=False)
class ScanData:
    """The rows a scan reads and the one forward pass every check shares."""
    ck: Checkpoint
    texts: tuple[str, ...]
    pairs: tuple[str, ...] | None  # the second text of sentence pairs
    given: tuple[str, ...] | None  # each row's label as the data names it (single-label data); None without labels
    logits: np.ndarray  # (n, labels) float32
    vectors: np.ndarray  # (n, hidden) float32, L2-normalised mean of the last hidden states
    seed: int = 0
    batch_size: int = 64
    max_length: int = 128

    @property
    def rows(self) -> int:
        return len(self.texts)

    @property
    def problem(self) -> ProblemType:
        """The checkpoint's problem type, as HF's loss reads its config."""
        from explorer.model.problem import problem_type
        return problem_type(self.ck.model.config)

    @property
    def probabilities(self) -> np.ndarray:  # (n, labels)
        return self.problem.probabilities(self.logits)

    @property
    def predicted(self) -> np.ndarray:  # (n,) argmax ids
        return self.logits.argmax(-1)


@dataclass
class Found:
    """What earlier checks found, for later ones: every finding so far and how to read the data's labels."""
    findings: list[Finding] = field(default_factory=list)
    # data label -> the checkpoint's name for what it predicts on those rows, once a permutation is found
    mapping: dict[str, str] = field(default_factory=dict)
    # data label -> checkpoint label id, as the labels are read (through `mapping` when one was found)
    label_ids: dict[str, int] = field(default_factory=dict)
    robustness: dict[str, dict] = field(default_factory=dict)  # transform -> {flip_rate, rows, examples}
    calibration: dict = field(default_factory=dict)  # {ece, bins, temperature, nll, nll_scaled, reliability}
    tags: dict[str, list[int]] = field(default_factory=dict)  # row tags (Azimuth's neighbour rules) -> rows
    not_applicable: list[tuple[str, Message]] = field(default_factory=list)  # (check, why) found while running

    @property
    def through_mapping(self) -> bool:
        return bool(self.mapping)

    def given_ids(self, data: ScanData) -> np.ndarray:
        """(n,) each row's label as a checkpoint id; -1 where the label has no counterpart."""
        if data.given is None:
            return np.full(data.rows, -1)
        return np.array([self.label_ids.get(g, -1) for g in data.given], dtype=np.int64)

    def name_of(self, data: ScanData, label_id: int) -> str:
        """The data's name for checkpoint label `label_id` (its own name where the data have none)."""
        back = {v: k for k, v in self.label_ids.items()}
        return back.get(int(label_id), str(data.ck.labels[int(label_id)]))


@dataclass(frozen=True)
class Check:
    """A registered check: its id prefix, what it needs (`applies`: None if it applies, else the key of
    why not) and what it does (`run`: the data, what earlier checks found, progress -> findings)."""
    name: str
    applies: Callable[[ScanData], str | None]
    run: Callable[[ScanData, Found, Progress], list[Finding]]
    cost: float = 1.0  # relative share of the progress bar


CHECKS: list[Check] = []


def check(name: str, applies: Callable[[ScanData], str | None], cost: float = 1.0):
    """Register a check function under `name`, in the order modules register them."""
    def register(run):
        CHECKS.append(Check(name, applies, run, cost))
        return run
    return register


# ---- what a check applies to ---------------------------------------------------------------

def sentence_classifier(data: ScanData) -> str | None:
    from explorer.model.checkpoints import TOKEN_CLASSIFICATION, model_task
    return "scan_na_token" if model_task(data.ck.model) == TOKEN_CLASSIFICATION else None


def labelled_single(data: ScanData) -> str | None:
    """A check that reads one given label per row against one predicted label."""
    why = sentence_classifier(data)
    if why:
        return why
    if data.given is None:
        return "scan_na_no_labels"
    if data.problem != ProblemType.SINGLE:
        return "scan_na_single_only"
    return None


def classifier(data: ScanData) -> str | None:
    """A check that reads predicted labels (no given labels needed)."""
    why = sentence_classifier(data)
    if why:
        return why
    return None if data.problem == ProblemType.SINGLE else "scan_na_single_only"


def anything(data: ScanData) -> str | None:
    return None
