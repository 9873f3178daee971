"""Fine-tuning on a labelled dataset, always on a private copy of the checkpoint.

`head` mode freezes the encoder: the features of the token the head reads (the first, or on
decoder-only models the last non-pad one) are computed once (and cached), so the
head can train for many epochs in seconds (train_epochs). `full` mode trains everything with transformers'
Trainer (train_with_trainer). Both report each epoch as it ends (EpochReport), stop when asked and keep the
epoch with the lowest validation loss (the problem type's score breaks ties), or the last one with early
stopping off. Token fine-tuning (finetune_tags) runs on the same two loops and the same trainable_copy.
The result exports as an ordinary HF folder that `transformers.pipeline` loads.
"""
from __future__ import annotations

import copy
import os
import shutil
import re
import threading
import time
import zipfile
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from explorer.data.dataset import LabeledData
from explorer.model import tokenizer as shared_tokenizer
from explorer.model.analysis import max_length
from explorer.model.checkpoints import Checkpoint, init_seeded
from explorer.model.features import cached_features
from explorer.model.heads import HeadError, build_head, derive, native_kind, output_layer, run_head
from explorer.model.inference import predict_batches
from explorer.model.kernel import attention_kernel
from explorer.model.problem import ProblemType, confusion, metrics, score
from explorer.model.steps import Op
from explorer.runtime import scratch
from explorer.runtime.budget import Dims, chunks, full_finetune_bytes, token_passes
from explorer.runtime.device import halving_on_oom
from explorer.runtime.config import env_config, env_name
from explorer.runtime.jobs import Progress, Stop, span
from explorer.text.errors import ExplorerError

MODES = ("head", "full")
LEARNING_RATES = tuple(float(f"{m}e{e}") for e in range(-6, 0) for m in (1, 2, 5)) + (1.0,)  # the pages' 1-2-5 steps
# Full fine-tuning's memory budget in MB, checked before a run starts (see full_memory).
TRAIN_ENV = env_name("train_mb")
# Work a fine-tune may take, in token passes through the encoder, checked before it starts (see budget.token_passes):
# a job holds one of few slots for as long as it runs, and a 100,000-sentence file in head mode held one
# past 420 s. 4M passes is about 23,000 rows at length 128 in head mode, or 3,400 for 3 epochs in full mode.
WORK_ENV = env_name("train_tokens")
# The pooling steps (steps.Step.op) that read one token, each the features.POOLS entry holding it.
HEAD_POOLS = (Op.FIRST, Op.LAST)
MIN_LENGTH = 8  # room for the special tokens and a few words


class FinetuneError(ExplorerError):
    """Fine-tuning cannot run as asked; the message is one line, meant for the user."""


@dataclass(frozen=True)
class Settings:
    mode: str = "head"
    head: str = "own"
    epochs: int | None = None  # None: 30 for head mode, 3 for full mode
    learning_rate: float | None = None  # None: 1e-3 for head mode, 5e-5 for full mode
    batch_size: int = 32
    max_length: int = 128
    val_fraction: float = 0.2
    seed: int = 0
    weight_decay: float = 0.01
    early_stopping: bool = True  # keep the lowest validation loss's epoch; off: the last epoch

    def resolved(self) -> "Settings":
        head = self.mode == "head"
        # `is None`, not `or`: an explicit 0 must reach the validation and be refused, not become a default.
        return replace(self, epochs=(30 if head else 3) if self.epochs is None else self.epochs,
                       learning_rate=(1e-3 if head else 5e-5) if self.learning_rate is None else self.learning_rate)


@dataclass(frozen=True, eq=False)
class FinetuneResult:
    checkpoint: Checkpoint  # the fine-tuned private copy, eval mode, read-only from here on
    metrics: dict  # validation metrics of the best epoch
    history: tuple[dict, ...]  # one row per finished epoch: epoch, loss, val_loss, val metric
    labels: tuple[str, ...]
    problem_type: str
    confusion: np.ndarray | None  # (true, predicted) on validation, single-label only
    train_seconds: float
    best_epoch: int  # the epoch kept (1-based; 0: stopped before one ended)
    stopped: bool  # the stop flag ended training early
    kept_by: str = "val_loss"  # why best_epoch was kept: val_loss, score (a tie on loss) or last
    epochs: int = 0  # the epochs planned (more than history holds after a Stop); 0: not known


@dataclass(frozen=True)
class EpochReport:
    """One epoch of a fine-tune as it ends: what a page draws its bar and curves from."""
    epoch: int  # 1-based
    epochs: int  # planned
    row: dict  # the epoch's row of the history: epoch, loss, val_loss and the validation metrics


OnEpoch = Callable[[EpochReport], None]

# ---- model preparation --------------------------------------------------------------------


def _label_slot_path(ck: Checkpoint) -> str:
    try:
        return output_layer(ck)
    except HeadError:
        raise FinetuneError("finetune_unknown_type", model_type=ck.model_type) from None


def _labelled(cfg, names: tuple[str, ...]) -> None:
    cfg.num_labels = len(names)
    cfg.id2label = dict(enumerate(names))
    cfg.label2id = {n: i for i, n in enumerate(names)}


def _token_model(ck: Checkpoint, names: tuple[str, ...], seed: int):
    """A token classifier for `names` on a copy of `ck`'s encoder weights."""
    from transformers import AutoModelForTokenClassification

    cfg = copy.deepcopy(ck.model.config)
    _labelled(cfg, names)
    cfg.architectures = None  # save_pretrained writes the token class
    torch.manual_seed(seed)  # from_config draws the layers it makes from the global generator
    try:
        model = AutoModelForTokenClassification.from_config(cfg, attn_implementation="eager")
    except ValueError:
        raise FinetuneError("finetune_unknown_type", model_type=ck.model_type) from None
    # The sentence model's pooler has no place in a token model (add_pooling_layer=False): unexpected, not missing.
    missing, _ = model.base_model.load_state_dict(ck.model.base_model.state_dict(), strict=False)
    if missing or not isinstance(getattr(model, "classifier", None), torch.nn.Linear):
        raise FinetuneError("finetune_unknown_type", model_type=ck.model_type)
    return model


def trainable_copy(ck: Checkpoint, names: tuple[str, ...], *, name: str, seed: int = 0,
                   problem_type: str | None = ProblemType.SINGLE, token: bool = False) -> Checkpoint:
    """A copy of `ck` whose output layer gives `names` (`token`: a token classifier on `ck`'s encoder, its
    `classifier` applied to every token; else a sequence classifier with `problem_type`). `ck` is never
    touched. Where `ck` already has an output layer of its kind for the same names (single-label, or token
    tags), the copy keeps its rows: a warm start keeps what it already knows. Otherwise the layer is new,
    drawn from `seed` (checkpoints.init_seeded)."""
    if token:
        model, path = _token_model(ck, names, seed), "classifier"
        same_kind = type(ck.model).__name__.endswith("ForTokenClassification")
        problem_type = None  # token classification has one loss; a sentence problem type would mislead
    else:
        path = _label_slot_path(ck)
        model = copy.deepcopy(ck.model)
        model.set_submodule(path, torch.nn.Linear(model.get_submodule(path).in_features, len(names)))
        same_kind = problem_type == ProblemType.SINGLE
    new = model.get_submodule(path)
    old = getattr(ck.model, path, None) if token else ck.model.get_submodule(path)  # ck's own, if it has one
    with torch.no_grad():
        if same_kind and isinstance(old, torch.nn.Linear) and set(names) == set(ck.labels):
            order = [ck.labels.index(n) for n in names]
            new.weight.copy_(old.weight[order])
            new.bias.copy_(old.bias[order])
        else:
            init_seeded(new.weight, new.bias, model.config, torch.Generator().manual_seed(seed))
    model.num_labels = len(names)
    _labelled(model.config, names)
    model.config.problem_type = problem_type
    model.to(ck.model.device)
    model.requires_grad_(False)
    model.eval()
    # A private tokenizer too: Trainer's collator sets padding on it as it goes.
    return Checkpoint(name=name, model=model, tokenizer=shared_tokenizer.private(ck.tokenizer), new_weights=(),
                      source=f"fine-tuned from {ck.name}")


_NAME_PART = re.compile(r"[^A-Za-z0-9._-]+")
_ISSUED: dict[str, int] = {}  # this second's names -> how often issued (older seconds cannot collide)
_ISSUED_LOCK = threading.Lock()


def _name_part(text: str, limit: int = 24) -> str:
    """`text` as one path-safe piece of a model name: a checkpoint's folder name or a file's stem."""
    stem = Path(str(text)).name
    stem = stem[: -len(Path(stem).suffix)] if Path(stem).suffix in (".csv", ".txt", ".conll", ".tsv") else stem
    return _NAME_PART.sub("_", stem).strip("_.-")[:limit] or "model"


def session_name(checkpoint: str = "model", *, mode: str = "head", data: str = "data", epochs: int | None = None,
                 when: datetime | None = None) -> str:
    """A fine-tuned model's name, saying what it is: checkpoint-mode-data-<epochs>ep-MMDD-HHMMSS (UTC), e.g.
    minilm-sentiment-full-tweets-3ep-1205-073102. Unique in the process, as the models' zips are kept in one
    folder under these names: a second one in the same second (a class pressing Start together) gets -2, -3."""
    when = when or datetime.now(timezone.utc)
    eps = Settings(mode=mode, epochs=epochs).resolved().epochs
    base = "-".join((_name_part(checkpoint, 32), mode, _name_part(data), f"{eps}ep", when.strftime("%m%d-%H%M%S")))
    stamp = base[-11:]
    with _ISSUED_LOCK:
        for old in [n for n in _ISSUED if not n.endswith(stamp)]:
            del _ISSUED[old]  # an earlier second's names can never come again
        n = _ISSUED[base] = _ISSUED.get(base, 0) + 1
    return base if n == 1 else f"{base}-{n}"


# ---- memory bound (full mode) ----------------------------------------------------------------

def full_memory(ck: Checkpoint, batch: int, *, length: int, rows: int) -> int:
    """Bytes a full fine-tune of `ck` adds at its peak (budget.full_finetune_bytes of its shape and weights)."""
    weights = sum(p.numel() * p.element_size() for p in ck.model.parameters())
    fields = len(getattr(ck.tokenizer, "model_input_names", ()) or ("input_ids", "attention_mask"))
    return full_finetune_bytes(Dims.of(ck.model.config), weights, fields, batch, length, rows)


def check_memory(ck: Checkpoint, settings: Settings, *, rows: int) -> None:
    """Refuse, before anything is allocated, a full fine-tune that would pass HEAD_EXPLORER_TRAIN_MB; the
    message names the largest batch (at this length), or else the longest length (at batch 1), that fits."""
    s = settings.resolved()
    if s.mode != "full":
        return  # head mode trains on cached features: bounded by the feature cache and its batches
    budget_mb = env_config().train_mb
    budget = budget_mb * 2**20
    need = full_memory(ck, s.batch_size, length=s.max_length, rows=rows)
    if need <= budget:
        return
    mb = lambda b: -(-b // 2**20)  # noqa: E731 - rounded up: "needs about" never understates
    fixed = full_memory(ck, 0, length=s.max_length, rows=rows)
    per_row = full_memory(ck, 1, length=s.max_length, rows=rows) - fixed
    batch = min(s.batch_size, max(0, (budget - fixed) // per_row))
    length = s.max_length
    if batch == 0:  # not even one row at this length: the longest length that fits one row
        batch = 1
        length = max((n for n in range(MIN_LENGTH, s.max_length) if full_memory(ck, 1, length=n, rows=rows) <= budget),
                     default=0)
    if length == 0:
        raise FinetuneError("finetune_memory_model", name=ck.name,
                            need=mb(full_memory(ck, 1, length=MIN_LENGTH, rows=rows)),
                            budget=budget_mb, rows=rows)
    raise FinetuneError("finetune_memory", batch=s.batch_size, length=s.max_length, rows=rows, need=mb(need),
                        budget=budget_mb, fit_batch=batch, fit_length=length)


def check_work(settings: Settings, rows: int) -> None:
    """Refuse, before it starts, a fine-tune past HEAD_EXPLORER_TRAIN_TOKENS token passes; the message names
    the most rows that fit at these settings and, where one does, the longest length that fits all rows."""
    s = settings.resolved()
    budget = env_config().train_tokens
    passes = lambda n, length=s.max_length: token_passes(n, length, s.epochs, s.mode == "full")  # noqa: E731
    need = passes(rows)
    if need <= budget:
        return
    fit_rows = budget // passes(1)
    fit_length = budget // passes(rows, 1) if rows else 0
    millions = lambda n: f"{n / 1e6:,.1f}"  # noqa: E731
    common = dict(rows=f"{rows:,}", length=s.max_length, epochs=s.epochs, mode=s.mode, need=millions(need),
                  budget=millions(budget), env=WORK_ENV, fit_rows=f"{fit_rows:,}")
    if fit_length >= MIN_LENGTH:
        raise FinetuneError("finetune_work", fit_length=min(fit_length, s.max_length), **common)
    raise FinetuneError("finetune_work_rows", **common)


def check_size(ck: Checkpoint, settings: Settings, *, rows: int) -> None:
    """Everything sized before a fine-tune starts (and takes a job slot): its work, and full mode's memory."""
    check_work(settings, rows)
    check_memory(ck, settings, rows=rows)


def check_head(ck: Checkpoint, settings: Settings) -> str:
    """The kind of head `settings.head` trains on `ck` (own resolves to its architecture's, e.g. bert), or
    one line on why it cannot: only the checkpoint's own head saves as an HF model, and head mode
    trains on the cached features of the one token the head's first step reads."""
    native = native_kind(ck)
    if settings.head not in ("own", native):
        raise FinetuneError("finetune_own_head", native=native, head=settings.head)
    if settings.mode == "head" and derive(ck).steps[0].op not in HEAD_POOLS:
        # A head that pools every token (a mean) would be trained on a vector it never reads.
        raise FinetuneError("finetune_pooling", model_type=ck.model_type)
    return native or ck.model_type


# ---- metrics --------------------------------------------------------------------------------


def split(data: LabeledData, fraction: float, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train idx, val idx), stratified when every class has at least two rows."""
    idx = np.arange(len(data.texts))
    strat = None
    if data.problem_type == ProblemType.SINGLE and np.bincount(data.y).min(initial=2) >= 2:
        strat = data.y
    n_val = max(int(round(len(idx) * fraction)), len(data.label_names) if strat is not None else 1)
    if len(idx) - n_val < 2:
        raise FinetuneError("finetune_too_few", n=len(idx))
    return tuple(train_test_split(idx, test_size=n_val, random_state=seed, stratify=strat))


def _loss(row: dict) -> float:
    v = row.get("val_loss", float("nan"))
    return float("inf") if v != v else v  # a NaN loss never beats a number


def better(problem_type: str, new: dict, *, old: dict | None, early_stopping: bool = True) -> bool:
    """Does epoch row `new` replace the kept `old`? The lower validation loss wins: accuracy alone ties
    for many epochs on small data while the probabilities flatten, and the earliest of the tie would be
    kept. Equal losses go to the higher score (accuracy, micro-F1 or -MSE). Off: every epoch replaces."""
    if old is None or not early_stopping:
        return True
    if _loss(new) != _loss(old):
        return _loss(new) < _loss(old)
    return score(problem_type, new) > score(problem_type, old)


def kept_epoch(history, problem_type: str, *, early_stopping: bool = True) -> tuple[int, str]:
    """(the epoch to keep, why: val_loss | score | last) over per-epoch rows, as training keeps it."""
    best = None
    for row in history:
        if better(problem_type, row, old=best, early_stopping=early_stopping):
            best = row
    if best is None:
        return 0, "last"
    if not early_stopping:
        return best["epoch"], "last"
    tied = sum(_loss(r) == _loss(best) for r in history) > 1
    return best["epoch"], "score" if tied else "val_loss"


# ---- training -------------------------------------------------------------------------------


class EpochRecorder:
    """The per-epoch bookkeeping of both training paths (head mode's loop, full mode's Trainer): each ended
    epoch becomes a history row (epoch, loss, val_loss and the validation metrics), reported to `on_epoch`,
    and the best row by `better(rule, ...)` is kept with what `keep()` saves of the model then."""

    def __init__(self, s: Settings, rule: str, on_epoch: OnEpoch | None):
        self.s, self.rule, self.on_epoch = s, rule, on_epoch
        self.history: list[dict] = []
        self.best: dict | None = None  # the kept epoch's row
        self.epoch = 0  # the kept epoch (0: none yet)
        self.kept: object = None  # keep()'s value at the kept epoch
        self.logits: object = None  # the kept epoch's validation logits

    def record(self, loss: float, evaluated: tuple[object, dict, float], keep: Callable[[], object]) -> None:
        """One epoch ended with mean training `loss` and `evaluated` = (validation logits, metrics, val loss)."""
        logits, m, val_loss = evaluated
        epoch = len(self.history) + 1
        self.history.append({"epoch": epoch, "loss": loss, "val_loss": val_loss, **m})
        if better(self.rule, self.history[-1], old=self.best, early_stopping=self.s.early_stopping):
            self.best, self.epoch, self.kept, self.logits = self.history[-1], epoch, keep(), logits
        if self.on_epoch:
            self.on_epoch(EpochReport(epoch=epoch, epochs=self.s.epochs, row=self.history[-1]))


def finetune(ck: Checkpoint, data: LabeledData, *, settings: Settings = Settings(), on_epoch: OnEpoch | None = None,
             stop: Stop | None = None, name: str | None = None) -> FinetuneResult:
    """Train a private copy of `ck` on `data`; `ck` itself is never modified. `on_epoch` hears each epoch
    as it ends; `stop()` ends training early (the best epoch so far is kept)."""
    s = checked(ck, settings, rows=len(data.texts), check=lambda s: check_head(ck, s))
    name = name or session_name(ck.name, mode=s.mode, data=data.label_columns[0] if data.label_columns else "data",
                                epochs=s.epochs)
    train_idx, val_idx = split(data, s.val_fraction, seed=s.seed)
    labels = data.label_names if data.problem_type != ProblemType.REGRESSION else ("value",)
    run = _train_head if s.mode == "head" else _train_full
    work, s, (history, best_epoch, stopped, val_logits), seconds = trained(
        ck, s, make_copy=lambda: trainable_copy(ck, labels, name=name, seed=s.seed, problem_type=data.problem_type),
        run=lambda work, s: run(ck, work, data, s, train_idx, val_idx, on_epoch, stop))
    n = len(work.labels)
    kept_by = kept_epoch(history, data.problem_type, early_stopping=s.early_stopping)[1]
    y_val = data.y[val_idx]
    return FinetuneResult(
        checkpoint=work, metrics=metrics(data.problem_type, val_logits, y_val, n), history=tuple(history),
        labels=data.label_names, problem_type=data.problem_type,
        confusion=confusion(data.problem_type, val_logits, y_val, n), train_seconds=seconds,
        best_epoch=best_epoch, stopped=stopped, kept_by=kept_by, epochs=s.epochs)


def checked(ck: Checkpoint, settings: Settings, *, rows: int,
            check: Callable[[Settings], object] | None = None) -> Settings:
    """`settings` resolved, or one line on why they cannot run on `ck` for `rows` rows: the mode, `check`
    (e.g. the head), the numbers, the length, the size (work, and full mode's memory)."""
    s = settings.resolved()
    if s.mode not in MODES:
        raise FinetuneError("finetune_unknown_mode", mode=s.mode)
    if check:
        check(s)
    if s.epochs < 1 or s.batch_size < 1 or s.learning_rate <= 0:
        raise FinetuneError("finetune_not_positive")
    limit = max_length(ck)
    if not MIN_LENGTH <= s.max_length <= limit:
        raise FinetuneError("max_length_range", value=s.max_length, lo=MIN_LENGTH, hi=limit, name=ck.name)
    check_size(ck, s, rows=rows)
    return s


def trained(ck: Checkpoint, s: Settings, *, make_copy: Callable[[], Checkpoint], run) -> tuple:
    """(kept model, settings as run, run's result, seconds): `run(work, settings)` on a fresh `make_copy()`
    from the same seed per attempt, once more with half the batch when the device runs out of memory."""
    def attempt(batch: int):  # from scratch each time: a fresh copy, the same seed
        torch.manual_seed(s.seed)
        work = make_copy()
        return work, replace(s, batch_size=batch), run(work, replace(s, batch_size=batch))

    t0 = time.perf_counter()
    # Out of memory on the device: once more with half the batch, then one line (runtime/device.py).
    # Training reads no attention weights: sdpa, set here in the thread that trains.
    with attention_kernel(ck, "sdpa"):
        work, s, out = halving_on_oom(attempt, s.batch_size, ck.model.device)
    seconds = time.perf_counter() - t0
    work.model.requires_grad_(False)
    work.model.eval()
    # The private tokenizer was only for the Trainer's collator. The kept model reads with the shared
    # one (same vocabulary, state untouched), so a session model costs its weights alone (~7 MB less
    # for BERT's) and an export carries no padding state the collator left behind.
    return replace(work, tokenizer=ck.tokenizer), s, out, seconds


def _target(data: LabeledData, idx) -> torch.Tensor:
    y = torch.from_numpy(np.asarray(data.y[idx]))
    return y.long() if data.problem_type == ProblemType.SINGLE else y.float()


def sgd_epoch(n: int, batch_size: int, *, gen: torch.Generator, opt, sched, device,
              loss_of: Callable[[torch.Tensor], torch.Tensor]) -> float:
    """One epoch over `n` rows in a random order (drawn from `gen`): per batch of row indices `b`,
    `loss_of(b)`, then a step of `opt` and `sched`. Returns the mean loss per row."""
    perm = torch.randperm(n, generator=gen)
    total = 0.0
    for rows in chunks(n, batch_size):
        b = perm[rows.start:rows.stop].to(device)
        loss = loss_of(b)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        total += float(loss.detach()) * len(b)
    return total / max(n, 1)


def train_epochs(params: list[torch.nn.Parameter], n: int, *, s: Settings, device, rule: str,
                 loss_of: Callable[[torch.Tensor, torch.Generator], torch.Tensor],
                 evaluate: Callable[[], tuple[object, dict, float]], on_epoch: OnEpoch | None,
                 stop: Stop | None) -> tuple[list[dict], int, bool, object]:
    """Head-mode training, for sentence and token heads alike: `params` (the private copy's head) trained with
    AdamW for s.epochs over `n` rows of cached features, `loss_of(row indices, generator)` per batch. After
    each epoch `evaluate()` (-> (validation logits, metrics, validation loss)) makes a history row, reported
    to `on_epoch`; the best epoch by `better(rule, ...)` is kept, and `stop()` ends training after the epoch.
    Returns (history, kept epoch, stopped, the kept epoch's validation logits), as train_with_trainer does."""
    for p in params:
        p.requires_grad_(True)  # the private copy only
    opt = torch.optim.AdamW(params, lr=s.learning_rate, weight_decay=s.weight_decay)
    steps = max(1, s.epochs * -(-n // s.batch_size))
    # Linear decay to zero, as Trainer does: late epochs settle instead of bouncing around.
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.0, 1 - step / steps))
    gen = torch.Generator().manual_seed(s.seed)  # the order of the rows, and the head's dropout where it asks
    epochs, stopped = EpochRecorder(s, rule, on_epoch), False
    for _ in range(s.epochs):
        loss = sgd_epoch(n, s.batch_size, gen=gen, opt=opt, sched=sched, device=device,
                         loss_of=lambda b: loss_of(b, gen))
        epochs.record(loss, evaluate(), lambda: [p.detach().clone() for p in params])
        if stop and stop():
            stopped = True
            break
    with torch.no_grad():
        for p, kept in zip(params, epochs.kept):
            p.copy_(kept)
            p.requires_grad_(False)
    return epochs.history, epochs.epoch, stopped, evaluate()[0]


def _train_head(ck, work, data, s, train_idx, val_idx, on_epoch, stop):
    pool = derive(ck).steps[0].op  # the token the head reads (one of HEAD_POOLS): first, or last non-pad
    # (n, hidden), from the untouched encoder. Its batches ask `stop` too, so a job whose owner is gone
    # (jobs.Cancelled is raised from there) does not encode 100,000 rows first.
    feats = cached_features(ck, data.texts, s.max_length, pool, progress=(lambda frac, msg: stop()) if stop else None,
                            text_pairs=data.text_pairs)
    head = build_head(work, "own", s.seed)
    problem = ProblemType(data.problem_type)
    device = work.model.device  # the head's layers are the copy's, on the checkpoint's device
    xtr, xva = feats[train_idx].unsqueeze(1).to(device), feats[val_idx].unsqueeze(1).to(device)  # (n, 1, hidden)
    ytr, yva = _target(data, train_idx).to(device), _target(data, val_idx).to(device)
    ones_tr, ones_va = torch.ones(xtr.shape[:2], device=device), torch.ones(xva.shape[:2], device=device)

    def evaluate() -> tuple[np.ndarray, dict, float]:
        with torch.no_grad():
            logits = run_head(head, xva, ones_va)[-1][1]
            val_loss = float(problem.batch_loss(logits, yva))
        logits = logits.cpu().numpy()
        return logits, metrics(data.problem_type, logits, data.y[val_idx], len(work.labels)), val_loss

    params = [p for layer in head.layers.values() for p in layer.parameters()]
    return train_epochs(params, len(xtr), s=s, device=device, rule=data.problem_type, loss_of=lambda b,
                        gen: problem.batch_loss(
        run_head(head, xtr[b], ones_tr[b], generator=gen)[-1][1], ytr[b]), evaluate=evaluate, on_epoch=on_epoch,
        stop=stop)


class _TokenizedRows(torch.utils.data.Dataset):
    """Tokenized rows kept as int32 arrays, tokenized a chunk at a time: the tokenizer's lists of Python
    ints cost ~50 bytes a token (100,000 rows x 512 tokens: ~2.6 GB), int32 arrays 4 per field."""

    def __init__(self, tokenizer, texts: list[str], y: torch.Tensor, max_length: int, chunk: int = 1024,
                 pairs: list[str] | None = None):
        self.enc: dict[str, list[np.ndarray]] = {}
        for part in chunks(len(texts), chunk):
            enc = tokenizer(texts[part.start:part.stop], pairs[part.start:part.stop] if pairs is not None else None,
                            truncation=True, max_length=max_length)
            for k, rows in enc.items():
                self.enc.setdefault(k, []).extend(np.asarray(r, np.int32) for r in rows)
        self.y = y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {**{k: v[i].tolist() for k, v in self.enc.items()}, "labels": self.y[i]}


def _train_full(ck, work, data, s, train_idx, val_idx, on_epoch, stop):
    from transformers import DataCollatorWithPadding

    def pairs(idx):
        return None if data.text_pairs is None else [data.text_pairs[i] for i in idx]

    def evaluate(model) -> tuple[np.ndarray, dict, float]:
        # Batches of the training size, so the peak is one batch's, not the whole split's.
        logits = predict_batches(work.tokenizer, model, [data.texts[i] for i in val_idx], pairs(val_idx),
                                 batch_size=s.batch_size, max_length=s.max_length)  # (val rows, labels)
        m = metrics(data.problem_type, logits, data.y[val_idx], len(work.labels))
        loss = ProblemType(data.problem_type).batch_loss(torch.from_numpy(logits), _target(data, val_idx))
        return logits, m, float(loss)

    train = _TokenizedRows(work.tokenizer, [data.texts[i] for i in train_idx], _target(data, train_idx), s.max_length,
                  pairs=pairs(train_idx))
    return train_with_trainer(work, s, train=train, collator=DataCollatorWithPadding(work.tokenizer), evaluate=evaluate,
                              rule=data.problem_type,
                              on_epoch=on_epoch, stop=stop)


def train_with_trainer(work: Checkpoint, s: Settings, *, train, collator, evaluate, rule: str,
                       on_epoch: OnEpoch | None, stop: Stop | None) -> tuple[list[dict], int, bool, object]:
    """Full fine-tuning of `work.model` on the dataset `train` with transformers' Trainer: after each epoch
    `evaluate(model)` (-> (validation logits, metrics, validation loss), in eval mode) makes a history row,
    reported to `on_epoch`; the best epoch by `better(rule, ...)` is kept, and `stop()` ends training after
    the current step.
    Returns (history, kept epoch, stopped, the kept epoch's validation logits). Sentence and token
    fine-tuning (finetune_tags) share it."""
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    # Logging once per epoch, on its last step, so the epoch's loss is known when the epoch ends.
    epochs, flags = EpochRecorder(s, rule, on_epoch), {"stopped": False}

    def evaluated(model):
        was_training = model.training
        model.eval()
        out = evaluate(model)
        model.train(was_training)
        return out

    class ReportEpochs(TrainerCallback):
        def on_epoch_end(self, args, state, control, model=None, **kw):
            losses = [r["loss"] for r in state.log_history if "loss" in r]
            epochs.record(losses[-1] if losses else float("nan"), evaluated(model),
                          lambda: {k: v.detach().clone() for k, v in model.state_dict().items()})

        def on_step_end(self, args, state, control, **kw):
            if stop and stop():
                flags["stopped"] = True
                control.should_training_stop = True

    device = work.model.device  # the checkpoint's: the copy was made there
    work.model.requires_grad_(True)
    work.model.train()
    with scratch.temporary() as tmp:  # Trainer wants an output folder; nothing is saved there
        args = TrainingArguments(
            output_dir=str(tmp), num_train_epochs=s.epochs, learning_rate=s.learning_rate,
            per_device_train_batch_size=s.batch_size, seed=s.seed, save_strategy="no", eval_strategy="no",
            # Batches of similar length waste less compute on padding than random batches.
            train_sampling_strategy="group_by_length",
            logging_strategy="steps", logging_steps=max(1, -(-len(train) // s.batch_size)), report_to=[],
            disable_tqdm=True, use_cpu=device.type == "cpu")  # the checkpoint's device: Trainer would take any GPU
        trainer = Trainer(model=work.model, args=args, train_dataset=train, data_collator=collator,
                          callbacks=[ReportEpochs()])
        trainer.remove_callback(PrinterCallback)  # it prints logs to stdout, which --json keeps clean
        trainer.train()
    work.model.to(device)  # Trainer may have moved it; the kept model lives where its checkpoint does
    if epochs.kept is None:  # stopped before the first epoch ended: evaluate what there is
        return epochs.history, 0, flags["stopped"], evaluated(work.model)[0]
    if epochs.epoch != len(epochs.history) or flags["stopped"]:
        work.model.load_state_dict(epochs.kept)
    return epochs.history, epochs.epoch, flags["stopped"], epochs.logits


# ---- export ---------------------------------------------------------------------------------


def export(result: FinetuneResult, out: str | os.PathLike) -> Path:
    """Write an HF folder (config with the data's label names, tokenizer, safetensors) atomically:
    everything goes to a temp folder beside `out` that is renamed at the end, so `out` is never half-written."""
    return save(result.checkpoint, out)


def save(ck: Checkpoint, out: str | os.PathLike) -> Path:
    """export() for a checkpoint alone."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FinetuneError("out_exists", out=str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = scratch.partial_for(out)
    try:
        ck.model.save_pretrained(tmp, safe_serialization=True)
        ck.tokenizer.save_pretrained(tmp)
        scratch.normal_modes(tmp)
        if out.exists():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


# Weights barely compress (about 7 % for float32) and deflating 80 MB of them took most of a zip's
# 17 s, so they are stored; config, vocabulary and tokenizer files are deflated.
_STORED = (".safetensors", ".bin")
_CHUNK = 2**20


def zip_once(ck: Checkpoint, folder: Path, *, progress: Progress | None = None) -> Path:
    """`folder`/<model name>.zip holding the exported HF folder, built on the first call only (model
    names are unique per fine-tune) and written atomically; `progress(fraction, "")` while it is built."""
    stem = Path(ck.name).name or "model"  # a checkpoint loaded from a folder is named by its path
    out = Path(folder) / f"{stem}.zip"
    if out.is_file():
        return out
    report = progress or (lambda frac, msg: None)
    writing = span(report, 0.1, 1.0)  # the export's tenth first, then the bytes written
    with scratch.temporary() as tmp:
        report(0.0, "")
        exported = save(ck, tmp / stem)
        files = sorted(f for f in exported.rglob("*") if f.is_file())
        total, done = sum(f.stat().st_size for f in files) or 1, 0
        writing(0.0)
        part = scratch.partial_for(out) / out.name
        try:
            with zipfile.ZipFile(part, "w") as zf:
                for f in files:
                    kind = zipfile.ZIP_STORED if f.suffix in _STORED else zipfile.ZIP_DEFLATED
                    info = zipfile.ZipInfo.from_file(f, f"{exported.name}/{f.relative_to(exported)}")
                    info.compress_type = kind
                    with f.open("rb") as src, zf.open(info, "w", force_zip64=True) as dst:
                        while chunk := src.read(_CHUNK):
                            dst.write(chunk)
                            done += len(chunk)
                            writing(done / total)
            os.replace(part, out)  # beside `out`: one filesystem, so the rename is atomic
        finally:
            shutil.rmtree(part.parent, ignore_errors=True)
    return out


def export_zip(ck: Checkpoint) -> bytes:
    """The exported folder as zip bytes (zip_once in a folder that is removed afterwards)."""
    with scratch.temporary() as tmp:
        return zip_once(ck, tmp).read_bytes()
