"""Read-only predictions over many texts, in batches: one length sort and one padding rule for every batched
forward pass over texts (the label report, the audit's mapping check, what-if, the frozen-encoder features,
the kernel and architecture tests)."""
from __future__ import annotations

import atexit
import os
import sys
import time
from typing import Callable

import numpy as np
import torch

from explorer.model.checkpoints import Checkpoint, fit_length
from explorer.model.kernel import attention_kernel
from explorer.runtime import device as dev
from explorer.runtime.budget import chunks
from explorer.runtime.jobs import Progress

Forward = Callable[[dict], torch.Tensor]  # a batch's encoding on the device -> (batch, ...) outputs


def rows_per_batch(tokenizer, model, batch_size: int) -> int:
    """`batch_size`, or 1 where rows cannot share a batch: a tokenizer without a pad token (GPT-2) cannot pad,
    and HF's last-token pooling refuses batches when the config has no pad id."""
    if tokenizer.pad_token is None or model.config.pad_token_id is None:
        return 1
    return batch_size


def length_batches(tokenizer, texts: list[str], text_pairs: list[str] | None = None, batch_size: int = 64,
                   max_length: int = 128) -> list[np.ndarray]:
    """Row indices per batch, longest first by token count (stable): rows of similar length share a batch, so
    padding costs little, and the longest batch comes first, where running out of memory costs least."""
    lengths = [len(ids) for ids in tokenizer(texts, text_pairs, truncation=True, max_length=max_length)["input_ids"]]
    order = np.argsort(-np.asarray(lengths), kind="stable")
    return [order[r.start:r.stop] for r in chunks(len(order), batch_size)]


def predict_batches(tokenizer, model, texts: list[str], text_pairs: list[str] | None = None, *,
                    batch_size: int = 64, max_length: int = 128, device: torch.device | str | None = None,
                    progress: Progress | None = None, forward: Forward | None = None,
                    batches: list[np.ndarray] | None = None, out: np.ndarray | None = None,
                    heard_s: float | None = None) -> np.ndarray:
    """(n, ...) each row's outputs in input order: `forward` (default: the model's float32 logits) on batches of
    rows of similar length (length_batches; `batches` to run only some), each padded to its own longest row.
    With `text_pairs`, row i is the tokenizer's pair encoding of (texts[i], text_pairs[i]). Rows not run keep
    their value in `out` (zeros when it is not given and some batch ran). `progress(fraction, "k/total")` after
    each batch. Masked padding changes no row: each row's outputs are its own, as encoded alone.

    `heard_s`: the longest a forward should run between two progress calls, which is where a job hears its Stop
    (explorer.runtime.jobs). A batch then runs as parts of as many rows as the last forward's seconds per row
    allow (its first row alone, to measure), so long rows on a loaded CPU are stopped within about that time;
    the rows and their outputs are the same."""
    forward = forward or (lambda enc: model(**enc).logits.float())
    device = model.device if device is None else device
    pads = rows_per_batch(tokenizer, model, batch_size) > 1
    if batches is None:
        batches = length_batches(tokenizer, texts, text_pairs, batch_size if pads else 1, max_length)
    per_row = None  # seconds per row of the last forward (with heard_s): how many rows the next one may take
    with torch.inference_mode():
        for done, rows in enumerate(batches, 1):
            start = 0
            while start < len(rows):
                take = len(rows) if heard_s is None else 1 if per_row is None else int(heard_s / per_row)
                part = rows[start:start + max(1, take)]
                t0 = time.perf_counter()
                enc = tokenizer([texts[i] for i in part], None if text_pairs is None else [text_pairs[i] for i in part],
                                truncation=True, max_length=max_length, padding=pads, return_tensors="pt")
                got = forward(dev.to(enc, device)).cpu().numpy()  # (part, ...)
                per_row = (time.perf_counter() - t0) / len(part)
                if out is None:
                    out = np.zeros((len(texts), *got.shape[1:]), got.dtype)
                out[part] = got
                start += len(part)
                if progress:
                    progress((done - 1 + start / len(rows)) / len(batches), f"{done}/{len(batches)}")
    return out if out is not None else np.zeros((len(texts), 0), np.float32)


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def predict_shared(tokenizer, model, texts: list[str], text_pairs: list[str] | None = None, *, batch_size: int = 64,
                   max_length: int = 128, progress: Progress | None = None, forward: Forward | None = None,
                   out: np.ndarray) -> np.ndarray:
    """predict_batches into `out` (n, ...), shared by the processes of an `accelerate launch`: each runs its share
    of the length batches and every process ends with every row where one process puts it (all_gathered)."""
    pads = rows_per_batch(tokenizer, model, batch_size)
    batches = length_batches(tokenizer, texts, text_pairs, pads, max_length)
    size = world_size()
    share = np.array_split(np.arange(len(batches)), size)[rank()] if size > 1 else np.arange(len(batches))
    out = predict_batches(tokenizer, model, texts, text_pairs, batch_size=batch_size, max_length=max_length,
                          progress=progress, forward=forward, batches=[batches[b] for b in share], out=out)
    if size > 1:
        rows = np.concatenate([batches[b] for b in share]) if len(share) else np.zeros(0, np.int64)
        for got, values in all_gathered((rows, out[rows])):  # the shares differ in size: indices travel too
            out[got] = values
    return out


def all_gathered(obj) -> list:
    """`obj` from every process, in rank order. torch.distributed's own all_gather_object: accelerate's
    gather and reduce return their input where PartialState reads the launch as DistributedType.NO, which CPU
    processes started by `accelerate launch --multi_gpu` are (accelerate 1.16; see cli/common.py)."""
    import torch.distributed as dist
    from accelerate import PartialState

    PartialState()  # sets up the process group that the launcher describes in the environment
    if not dist.is_initialized():
        dist.init_process_group("gloo")
    atexit.unregister(leave_process_group)  # registered once, however many gathers a program runs
    atexit.register(leave_process_group)
    parts: list = [None] * dist.get_world_size()
    dist.all_gather_object(parts, obj)
    return parts


def leave_process_group() -> None:
    """Destroy the gloo process group that the scale-out gathers open under `accelerate launch`, on every rank, so
    its threads are joined before the interpreter exits: left to exit with it, a finished rank can die with
    "terminate called without an active exception" (SIGABRT), and the launcher then fails the whole run. Run at
    exit for any program that gathered (a script, a notebook's kernel), and by the CLI when a command ends."""
    dist = sys.modules.get("torch.distributed")  # never imported here for a program that did not gather
    if dist is not None and dist.is_available() and dist.is_initialized():
        try:
            dist.destroy_process_group()
        except Exception:  # noqa: BLE001 - the program's work is done; its exit must not add a traceback
            pass


def predict_logits(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                   text_pairs: list[str] | None = None) -> np.ndarray:
    """(n, labels) float32 logits from the checkpoint, read-only (inference mode). With `text_pairs`, each
    row is the tokenizer's pair encoding of (text, pair), as a sentence-pair classifier reads it."""
    if not texts:
        return np.zeros((0, len(ck.labels)), np.float32)
    with attention_kernel(ck, "sdpa"):  # no weights read: the fast kernel
        return predict_batches(ck.tokenizer, ck.model, texts, text_pairs, batch_size=batch_size,
                               max_length=fit_length(ck, max_length))


def predict_ids(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                text_pairs: list[str] | None = None) -> np.ndarray:
    """(n,) argmax label ids from the checkpoint, read-only (inference mode); pairs as predict_logits."""
    return predict_logits(ck, texts, batch_size, max_length, text_pairs).argmax(-1)
