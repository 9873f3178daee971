"""Memory budgets shared by every session of the process: byte-bounded caches and batch sizes.

A `ByteCache` keeps its entries, oldest first, under a byte budget read (explorer/runtime/config.py) on
every insert (so a test or an operator can change it without a restart); the newest entry is always
kept, however large, because it is the one being used. Evicted memory is handed back to the OS
(session_models.release_memory), as glibc keeps freed arenas otherwise.

`batch_rows` sizes the forward batches of every view that grows with its input (leave-one-out,
faithfulness, attributions' internal batches, Monte-Carlo dropout) from HEAD_EXPLORER_BATCH_MB, so a
20,000-character text costs time, not memory. On a CUDA device an unset HEAD_EXPLORER_BATCH_MB is a share
(CUDA_BATCH_SHARE) of the memory the device has free when the batch is sized (`batch_mb`): an 80 GB card runs
the batches it can hold, where the CPU default (256 MB) would run a 512-token lig in dozens of small ones.

Every estimate reads a model's shape as one `Dims`. A fine-tune is sized here before it starts: its peak
bytes in full mode (`full_finetune_bytes`) and its work in token passes (`token_passes`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np
import torch

from explorer.runtime.session_models import release_memory
from explorer.runtime.config import env_config, env_name, given
from explorer.text.errors import ExplorerError

BATCH_ENV = env_name("batch_mb")  # one request's forward batch
# On cuda, without HEAD_EXPLORER_BATCH_MB: a quarter of the free device memory per batch, so the two job slots
# (HEAD_EXPLORER_TRAINING) and a session's own forward can each size one at once and still leave room for
# fragmentation and the allocator's cache (free memory is read again for every batch).
CUDA_BATCH_SHARE = 0.25
ANALYSES_ENV = env_name("analyses_mb")  # cached analyses and page results
SESSION_ENV = env_name("session_mb")  # what one session keeps: its pages' results and its state


def nbytes(obj, _seen: set | None = None) -> int:
    """The array memory `obj` holds: numpy arrays and tensors, inside dataclasses, tuples, lists and
    dicts (strings counted by length). Each object is counted once, however often it is referenced."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (str, bytes)):
        return len(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # Its fields and whatever it has cached on itself since (a functools.cached_property's value).
        values = vars(obj).values() if hasattr(obj, "__dict__") else \
            (getattr(obj, f.name) for f in dataclasses.fields(obj))
        return sum(nbytes(v, seen) for v in values)
    if isinstance(obj, dict):
        return sum(nbytes(k, seen) + nbytes(v, seen) for k, v in obj.items())
    if isinstance(obj, (tuple, list)):
        return sum(nbytes(v, seen) for v in obj)
    return 0


class ByteCache:
    """Thread-safe LRU of computed values under `budget_mb()` MB (and at most `max_entries`).

    Not cachetools.LRUCache(getsizeof=...): it refuses a value larger than its maxsize, where this keeps
    the newest entry however large (the page is using it), and its maxsize is fixed when it is made,
    where this reads the budget on each insert (a setting, e.g. `lambda: env_config().analyses_mb`)."""

    def __init__(self, budget_mb: Callable[[], int], max_entries: int | None = None,
                 size: Callable[[object], int] = nbytes):
        self.budget_mb, self.max_entries, self.size = budget_mb, max_entries, size
        # Re-entrant: a session owner's finalizer (explorer.ui.session._Owner) calls in here from the garbage
        # collector, which can run at any allocation, also in a thread that holds this lock already.
        self._lock = threading.RLock()
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()  # key -> (value, bytes)

    @property
    def budget_bytes(self) -> int:
        return self.budget_mb() * 2**20

    def get(self, key: Hashable):
        """The cached value (now the newest), or None."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value) -> None:
        """Keep `value` as the newest entry, evicting the oldest while over the bounds."""
        nb = self.size(value)  # outside the lock: it walks the value
        with self._lock:
            self._entries[key] = (value, nb)
            self._entries.move_to_end(key)
            budget, evicted = self.budget_bytes, False
            while len(self._entries) > 1 and (
                    (self.max_entries is not None and len(self._entries) > self.max_entries)
                    or self._total() > budget):
                self._entries.popitem(last=False)
                evicted = True
        if evicted:
            release_memory()

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        """The cached value, or compute it (outside the lock: it is slow) and keep it."""
        value = self.get(key)
        if value is None:
            value = compute()
            self.put(key, value)
        return value

    def trim(self, match: Callable[[Hashable], bool], budget_bytes: int, extra: int = 0) -> int:
        """Evict the oldest entries whose key matches while they, plus `extra` bytes held elsewhere, pass
        `budget_bytes`; the newest matching entry stays (it is the one in use). Returns the bytes evicted."""
        evicted = 0
        with self._lock:
            mine = [k for k in self._entries if match(k)]  # oldest first
            held = extra + sum(self._entries[k][1] for k in mine)
            for key in mine[:-1]:
                if held <= budget_bytes:
                    break
                nb = self._entries.pop(key)[1]
                held -= nb
                evicted += nb
        if evicted:
            release_memory()
        return evicted

    def drop(self, match: Callable[[Hashable], bool]) -> None:
        """Forget every entry whose key matches (e.g. a closed session's)."""
        with self._lock:
            for key in [k for k in self._entries if match(k)]:
                del self._entries[key]
        release_memory()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def _total(self) -> int:
        return sum(nb for _, nb in self._entries.values())

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._total()


@dataclass(frozen=True)
class Dims:
    """The shape of a transformer that memory grows with, whatever its family calls it: PretrainedConfig's
    attribute_map gives hidden_size etc. for GPT-2- and DistilBERT-style configs; the feed-forward width has no
    common name. A size the config does not give is BERT-base's (4 x hidden for the feed-forward), so an
    estimate from a strange config errs large, the safe side for a budget."""
    layers: int
    hidden: int
    intermediate: int
    heads: int

    @classmethod
    def of(cls, config) -> "Dims":
        """The dims of a transformers config (a multimodal one's text part)."""
        cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
        hidden = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "dim", None) or 768)
        inter = next((v for k in _INTERMEDIATE_NAMES if isinstance(v := getattr(cfg, k, None), int) and v > 0),
                     4 * hidden)
        return cls(layers=int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layers", None) or 12),
                   hidden=hidden, intermediate=inter,
                   heads=int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_heads", None) or 12))


_INTERMEDIATE_NAMES = ("intermediate_size", "hidden_dim", "n_inner", "ffn_dim", "d_ff", "encoder_ffn_dim")


def row_bytes(config, seq: int, attentions: bool = False, grad: bool = False) -> int:
    """Estimated float32 bytes one row of `seq` tokens takes in an encoder forward: the hidden and
    feed-forward activations of every layer, plus one layer's attention scores (every layer's when
    attentions are returned or kept for a backward pass, which also keeps the activations: x2)."""
    d = Dims.of(config)
    acts = seq * (d.layers + 1) * (d.hidden + d.intermediate)
    scores = d.heads * seq * seq * (d.layers if attentions or grad else 1)
    return 4 * (acts + scores) * (2 if grad else 1)


def batch_mb(device: torch.device | str | None = None) -> int:
    """One batch's budget in MB on `device`: HEAD_EXPLORER_BATCH_MB when it is set; else, on a CUDA device,
    CUDA_BATCH_SHARE of its free memory now (torch.cuda.mem_get_info); else the default (256)."""
    kind = torch.device(device).type if device is not None else "cpu"
    if kind != "cuda" or given("batch_mb"):
        return env_config().batch_mb  # also parses (and refuses) a bad value, as every setting is read
    free, _total = torch.cuda.mem_get_info(torch.device(device))
    return max(1, int(free * CUDA_BATCH_SHARE) // 2**20)


def rows_within(per_row: int, device: torch.device | str | None = None) -> int:
    """How many rows of `per_row` bytes fit one batch on `device` (batch_mb; at least 1)."""
    return max(1, batch_mb(device) * 2**20 // max(1, per_row))


def batch_rows(config, seq: int, attentions: bool = False, grad: bool = False,
               device: torch.device | str | None = None) -> int:
    """How many rows of `seq` tokens one encoder forward on `device` may take within its batch budget (batch_mb).
    Sized as float32 whatever the precision: a half-precision forward fits twice over, which is the safe side."""
    return rows_within(row_bytes(config, max(1, seq), attentions, grad), device)


def beyond_one_batch(config, seq: int, rows: int, grad_rows: int = 0, device: torch.device | str | None = None) -> bool:
    """Does work of `rows` forward rows and `grad_rows` forward+backward rows of `seq` tokens need more than one
    HEAD_EXPLORER_BATCH_MB batch? The line between interactive work, run on a session's own thread, and heavy
    work, which waits for a job slot (explorer/runtime/jobs.py)."""
    seq = max(1, seq)
    need = rows * row_bytes(config, seq) + grad_rows * row_bytes(config, seq, grad=True)
    return need > batch_mb(device) * 2**20


# Full fine-tuning. Floats a training step keeps for the backward pass, per token and layer: the linear parts
# grow with hidden and intermediate sizes, eager attention's scores, softmax and dropout with heads x length.
# Fitted on MiniLM-L6 (CPU, eager attention; measured peaks in the README), rounded up.
_PER_HIDDEN, _PER_INTERMEDIATE, _PER_SCORE = 12, 4, 4
_WEIGHT_COPIES = 5  # the trained copy, its gradients, AdamW's two moments, the best epoch's state
_ROW_OVERHEAD = 112  # bytes per tokenized field and row beyond its int32 ids (a numpy array's header)


def full_finetune_bytes(dims: Dims, weight_bytes: int, fields: int, batch: int, length: int, rows: int) -> int:
    """Bytes a full fine-tune adds at its peak: `weight_bytes` of weights in their copies, one step's
    activations (batch x length tokens), `rows` rows tokenized into `fields` int32 fields. Validation runs in
    batches of the same size without gradients, so it stays below the training step."""
    per_token = dims.layers * (_PER_HIDDEN * dims.hidden + _PER_INTERMEDIATE * dims.intermediate
                               + _PER_SCORE * dims.heads * length) * 4
    return _WEIGHT_COPIES * weight_bytes + batch * length * per_token + rows * fields * (length * 4 + _ROW_OVERHEAD)


# Work, not memory: a job holds one of few slots for as long as it runs. A training step's backward pass costs
# about twice its forward: MiniLM-L6 at batch 32 x 128 on one CPU thread ran 1,684 tokens/s forward and 590
# forward and backward (2.9x).
FULL_PASS = 3


def token_passes(rows: int, length: int, epochs: int = 1, full: bool = False) -> int:
    """Token passes through the encoder a fine-tune of `rows` rows may take, at most (rows are cut at `length`,
    not padded to it): head mode encodes every row once and trains its epochs on the cached features (cheap
    beside the encoder); `full` mode runs every epoch forward and backward through the encoder."""
    return rows * length * (epochs * FULL_PASS if full else 1)


def chunks(n: int, size: int) -> list[range]:
    """range(n) in consecutive pieces of at most `size`."""
    return [range(i, min(n, i + size)) for i in range(0, n, max(1, size))]


def check_label_work(rows: int, labels: int, folds: int) -> None:
    """Refuse a label audit (or a scan over its folds) whose work, rows x labels x folds, passes
    HEAD_EXPLORER_AUDIT_WORK, before any feature is computed: its out-of-fold probabilities, the heads'
    logits and confident learning's arrays all grow with rows x labels, once per fold."""
    limit = env_config().audit_work
    need = rows * max(labels, 1) * folds
    if need > limit:
        raise ExplorerError("audit_work", rows=f"{rows:,}", labels=f"{labels:,}", folds=folds, need=f"{need:,}",
                            limit=f"{limit:,}", env=env_name("audit_work"))
