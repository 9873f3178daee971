"""The scan's forward passes: one over every row for logits and vectors together, and logits-only passes over
the rows a perturbation changed."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from explorer.model import pooling
from explorer.model.checkpoints import Checkpoint, fit_length
from explorer.model.kernel import attention_kernel
from explorer.runtime.budget import chunks
from explorer.runtime.jobs import Progress


def _order(texts: Sequence[str], pairs: Sequence[str] | None) -> np.ndarray:
    """Rows by length, so a batch pads little; results go back to input order."""
    return np.argsort([len(t) + (len(pairs[i]) if pairs is not None else 0) for i, t in enumerate(texts)],
                      kind="stable")


def run_rows(ck: Checkpoint, texts: Sequence[str], pairs: Sequence[str] | None = None, vectors: bool = False,
             batch_size: int = 64, max_length: int = 128,
             progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """((n, labels) logits, (n, hidden) L2-normalised mean of the last hidden states or None), read-only.
    Each row reads as `model(**tokenizer(text, pair))` alone: padding is masked."""
    n = len(texts)
    if ck.tokenizer.pad_token is None or ck.model.config.pad_token_id is None:
        batch_size = 1  # a tokenizer that cannot pad (GPT-2) reads one row at a time
    max_length = fit_length(ck, max_length)
    order = _order(texts, pairs)
    logits = np.zeros((n, ck.model.config.num_labels), np.float32)
    vecs = np.zeros((n, ck.model.config.hidden_size), np.float32) if vectors else None
    pieces = chunks(n, batch_size)
    with torch.inference_mode(), attention_kernel(ck, "sdpa"):  # no attention weights read: the fast kernel
        for done, rows in enumerate(pieces, 1):
            take = order[rows.start:rows.stop]
            enc = ck.tokenizer([texts[i] for i in take], [pairs[i] for i in take] if pairs is not None else None,
                               truncation=True, max_length=max_length, padding=batch_size > 1,
                               return_tensors="pt").to(ck.model.device)
            out = ck.model(**enc, output_hidden_states=vectors)
            logits[take] = out.logits.float().cpu().numpy()
            if vectors:
                mean = pooling.mean(out.hidden_states[-1], enc["attention_mask"])  # (batch, hidden)
                vecs[take] = torch.nn.functional.normalize(mean.float(), dim=-1).cpu().numpy()
            if progress:
                progress(done / len(pieces), f"{min(rows.stop, n)}/{n}")
    return logits, vecs


def token_ids(ck: Checkpoint, texts: Sequence[str], pairs: Sequence[str] | None = None,
              max_length: int = 128) -> list[list[int]]:
    """The ids each row is read as: two texts that give the same ids are the same input to the model."""
    return ck.tokenizer(list(texts), list(pairs) if pairs is not None else None, truncation=True,
                        max_length=fit_length(ck, max_length))["input_ids"]
