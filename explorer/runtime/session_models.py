"""Fine-tuned models kept in memory for the sessions that made them, within two bounds.

Each owner (one browser session) keeps its last `per_owner` models; all owners together stay within
`budget_bytes`. Going over either evicts the oldest model (the owner's own for the first bound, the
process's oldest for the second), and the evicted names wait, per owner, for its next page run to
say what went. Both bounds come from the environment (HEAD_EXPLORER_SESSION_MODELS,
HEAD_EXPLORER_MODELS_MB). Freed memory is handed back to the OS: glibc keeps freed arenas
otherwise, which is how 20 fine-tunes in background threads once held ~1 GB after release.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

from explorer.runtime.config import env_config


class StoredModel(Protocol):
    """What the store needs of a model (explorer.model.checkpoints.Checkpoint, one layer up): its name and
    its torch module, to key it and to count its bytes."""
    name: str
    model: Any  # a torch.nn.Module

CAP, BUDGET = "cap", "budget"  # why a model was evicted


def model_bytes(ck: Checkpoint) -> int:
    m = ck.model
    return sum(t.numel() * t.element_size() for t in (*m.parameters(), *m.buffers()))


def release_memory() -> None:
    """Return freed heap pages to the OS (glibc only; a no-op elsewhere). Evicted models are freed by
    reference counting; only the young generations are collected, as a full pass costs ~0.6 s here."""
    gc.collect(1)
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def freeze_long_lived() -> None:
    """Collect everything once, then move what is alive into the permanent generation (gc.freeze).

    Streamlit runs a full gc.collect(2) after every script run (`runner.postScriptGC`, kept on: it frees a
    rerun's interrupted frames and the tensors they hold). With torch, transformers, plotly and a model
    loaded that pass walks about 560,000 objects, a quarter of the server's CPU per edit in a class
    (bench_classroom). Modules and models live for the process, so they are walked here, once per load and
    once per server report, and not after every run. Unfreezing first lets this pass free whatever an
    earlier freeze kept that has since died in a cycle, so only what is alive now stays frozen (an evicted
    model is freed by reference counting anyway)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@functools.cache
def _libc():
    """glibc, or None. Looked up once: find_library forks `ldconfig -p` on every call."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.malloc_trim  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError, TypeError):
        return None


@dataclass(frozen=True)
class _Entry:
    owner: str
    checkpoint: StoredModel
    nbytes: int


class ModelStore:
    """Thread-safe: sessions register models from their own script threads."""

    def __init__(self, per_owner: int | None = None, budget_bytes: int | None = None):
        self.per_owner = per_owner or env_config().session_models
        self.budget_bytes = budget_bytes or env_config().models_mb * 2**20  # 1024: ~11 copies of the 88 MB MiniLM
        # Re-entrant: a session owner's finalizer (explorer.ui.session._Owner) calls in here from the garbage
        # collector, which can run at any allocation, also in a thread that holds this lock already.
        self._lock = threading.RLock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # oldest first
        self._evicted: dict[str, list[tuple[str, str]]] = {}  # owner -> [(name, CAP | BUDGET)]

    def add(self, owner: str, ck: Checkpoint) -> None:
        """Keep `ck` for `owner`, evicting what the bounds require (never `ck` itself)."""
        entry = _Entry(owner, ck, model_bytes(ck))
        with self._lock:
            self._entries[ck.name] = entry
            while sum(e.owner == owner for e in self._entries.values()) > self.per_owner:
                self._evict(next(n for n, e in self._entries.items() if e.owner == owner), CAP)
            while self.total_bytes > self.budget_bytes and len(self._entries) > 1:
                self._evict(next(n for n in self._entries if n != ck.name), BUDGET)
        release_memory()

    def _evict(self, name: str, why: str) -> None:
        entry = self._entries.pop(name)
        self._evicted.setdefault(entry.owner, []).append((name, why))

    def get(self, owner: str, name: str) -> StoredModel | None:
        with self._lock:
            entry = self._entries.get(name)
        return entry.checkpoint if entry is not None and entry.owner == owner else None

    def holds(self, name: str) -> bool:
        """Is a model of that name kept, for any owner?"""
        with self._lock:
            return name in self._entries

    def names(self, owner: str) -> list[str]:
        with self._lock:
            return [n for n, e in self._entries.items() if e.owner == owner]

    def take_evicted(self, owner: str) -> list[tuple[str, str]]:
        """What was evicted from `owner` since the last call: [(name, CAP | BUDGET)]."""
        with self._lock:
            return self._evicted.pop(owner, [])

    def drop_owner(self, owner: str) -> None:
        """Forget everything `owner` kept (its session ended)."""
        with self._lock:
            for name in [n for n, e in self._entries.items() if e.owner == owner]:
                del self._entries[name]
            self._evicted.pop(owner, None)
        release_memory()

    @property
    def total_bytes(self) -> int:
        return sum(e.nbytes for e in list(self._entries.values()))
