"""What every scan check shares: a finding, the data and predictions a check reads (one forward pass, shared),
and the registry of checks, each declaring what it applies to (as LIT components declare `is_compatible`), what
it reads of earlier checks (`needs`), the page that shows its findings in depth (`deeper`) and whether what it
finds is a cause that explains the findings of the checks that need it (`cause`).

A check is one module under `explorer/scan/checks/`, found by the package itself (`checks.load_checks`), plus its
messages. Checks run in the order their `needs` give (registration order among the free ones); a later check
reads what earlier ones found by check id (`Found.result`). Two kinds of cause:
- "through": later checks read the data through it. Once the mapping check has found a permuted id2label,
  every later check reads the data's labels through that mapping and says so; nothing is folded under it.
- "fold": what it finds (an untrained or missing head) explains everything downstream. The findings of every
  check that needs it are reported under it as consequences (`because`: the cause's check id), never as
  separate majors: a random head makes every row look mislabelled, every word look like a shortcut.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from explorer.model.checkpoints import Checkpoint
from explorer.model.problem import ProblemType
from explorer.runtime.jobs import Progress
from explorer.text.errors import ExplorerError, Message

SEVERITIES = ("major", "minor", "info")  # most serious first: the report's order
CONSEQUENCE_CAP = "minor"  # the most serious a consequence of a found cause may be


@dataclass(frozen=True)
class Finding:
    """One thing a check found: its check id, how serious, one line for people and the evidence (`fields`:
    JSON-safe; row indices are 0-based positions among the data's rows). `because`: the check id of the cause
    that explains it (reported under that cause), None for a finding that stands on its own."""
    check: str
    severity: str  # one of SEVERITIES
    message: Message
    fields: dict = field(default_factory=dict)
    because: str | None = None

    def to_dict(self) -> dict:
        out = {"check": self.check, "severity": self.severity, "message": str(self.message), **self.fields}
        if self.because:
            out["because"] = self.because
        return out

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
    """What earlier checks found, for later ones: every finding so far, each check's result by check id, and
    how to read the data's labels."""
    findings: list[Finding] = field(default_factory=list)
    # data label -> the checkpoint's name for what it predicts on those rows, once a permutation is found
    mapping: dict[str, str] = field(default_factory=dict)
    # data label -> checkpoint label id, as the labels are read (through `mapping` when one was found)
    label_ids: dict[str, int] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)  # check id -> what it measured (JSON-safe)
    not_applicable: list[tuple[str, Message]] = field(default_factory=list)  # (check, why) found while running

    @property
    def through_mapping(self) -> bool:
        return bool(self.mapping)

    def result(self, check_id: str, default=None):
        return self.results.get(check_id, default)

    def given_ids(self, data: ScanData) -> np.ndarray:
        """(n,) each row's label as a checkpoint id; -1 where the label has no counterpart."""
        if data.given is None:
            return np.full(data.rows, -1)
        return np.array([self.label_ids.get(g, -1) for g in data.given], dtype=np.int64)

    def name_of(self, data: ScanData, label_id: int) -> str:
        """The data's name for checkpoint label `label_id` (its own name where the data have none)."""
        back = {v: k for k, v in self.label_ids.items()}
        return back.get(int(label_id), str(data.ck.labels[int(label_id)]))

    def names_of(self, data: ScanData, label_ids: Sequence[int]) -> list[str]:
        """`name_of` for each id, with the inverse map built once (a report names every row)."""
        back = {v: k for k, v in self.label_ids.items()}
        return [back.get(int(i), str(data.ck.labels[int(i)])) for i in label_ids]


@dataclass(frozen=True)
class Check:
    """A registered check: its id, what it applies to (`applies`: None if it applies, else the key of why
    not), what it does (`run`: the data, what earlier checks found, progress -> findings), the ids (or id
    prefixes) of the checks whose results it reads (`needs`, run first), the page that shows a finding in
    depth (`deeper`, a path under pages/) and its kind of cause (None, "through" or "fold")."""
    name: str
    applies: Callable[[ScanData], str | None]
    run: Callable[[ScanData, Found, Progress], list[Finding]]
    cost: float = 1.0  # relative share of the progress bar
    needs: tuple[str, ...] = ()
    deeper: str | None = None
    cause: str | None = None

    @property
    def title(self) -> Message:
        """Its human title (`errors.scan_title_<id>` in the catalogs, dots as underscores)."""
        key = "scan_title_" + self.name.replace(".", "_")
        return Message(key)


CHECKS: list[Check] = []


def check(name: str, applies: Callable[[ScanData], str | None], *, cost: float = 1.0,
          needs: Sequence[str] = (), deeper: str | None = None, cause: str | None = None):
    """Register a check function under `name`."""
    if any(c.name == name for c in CHECKS):
        raise ExplorerError("scan_check_twice", name=name)
    if cause not in (None, "through", "fold"):
        raise ExplorerError("scan_check_cause", name=name, cause=str(cause))

    def register(run):
        CHECKS.append(Check(name, applies, run, cost, tuple(needs), deeper, cause))
        return run
    return register


def matches(name: str, wanted: str) -> bool:
    """Does check id `name` answer to `wanted`: the id itself or a prefix of whole parts ("head", "head.x")."""
    return name == wanted or name.startswith(wanted + ".")


def needed(c: Check) -> list[Check]:
    """The registered checks `c` reads (each of its `needs` as an id or a prefix)."""
    return [o for o in CHECKS if o.name != c.name and any(matches(o.name, w) for w in c.needs)]


def ordered(chosen: Sequence[Check]) -> list[Check]:
    """`chosen` and everything they need, each after what it needs, otherwise in registration order."""
    todo, seen = list(chosen), {c.name for c in chosen}
    while todo:  # close over needs
        for o in needed(todo.pop()):
            if o.name not in seen:
                seen.add(o.name)
                todo.append(o)
    left = [c for c in CHECKS if c.name in seen]
    # Among the checks free to run, those others read come first (the head, the mapping): a report lists its
    # findings in run order within a severity, and a cause reads best above what it explains.
    read = {o.name for c in left for o in needed(c)}
    left.sort(key=lambda c: c.name not in read)
    out: list[Check] = []
    while left:
        free = next((c for c in left if all(o in out for o in needed(c) if o.name in seen)), None)
        if free is None:
            raise ExplorerError("scan_check_circle", names=", ".join(c.name for c in left))
        out.append(free)
        left.remove(free)
    return out


def by_id(check_id: str) -> Check | None:
    return next((c for c in CHECKS if c.name == check_id), None)


def deeper_page(check_id: str) -> str:
    """The page (a path under pages/) that shows a finding of `check_id` in depth; the Data page by default."""
    c = by_id(check_id)
    return (c.deeper if c else None) or "pages/data.py"


def explaining(c: Check, found: Found) -> Finding | None:
    """The major finding of a "fold" cause among the checks `c` needs (directly or through them), if any."""
    stack, seen = list(needed(c)), set()
    while stack:
        o = stack.pop()
        if o.name in seen:
            continue
        seen.add(o.name)
        stack += needed(o)
        if o.cause == "fold":
            hit = next((f for f in found.findings if f.check == o.name and f.severity == "major" and not f.because),
                       None)
            if hit:
                return hit
    return None


def as_consequence(f: Finding, cause: Finding) -> Finding:
    """`f` reported under `cause`: never more serious than CONSEQUENCE_CAP."""
    cap = SEVERITIES.index(CONSEQUENCE_CAP)
    return replace(f, severity=SEVERITIES[max(SEVERITIES.index(f.severity), cap)], because=cause.check)


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


# What every check that reads the model's predictions needs first: the head (a cause that folds) and the label
# mapping (a cause read through). A check module passes these as its `needs`.
HEAD = ("head.new_weights", "head.untrained")
READS_LABELS = HEAD + ("mapping.permutation",)
