"""The scan's forward passes: one over every row for logits and vectors together, and logits-only passes over
the rows a perturbation changed."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from explorer.model import pooling
from explorer.model.checkpoints import Checkpoint, fit_length
from explorer.model.kernel import attention_kernel
from explorer.model.inference import predict_shared
from explorer.runtime.jobs import Progress


def run_rows(ck: Checkpoint, texts: Sequence[str], *, pairs: Sequence[str] | None = None, vectors: bool = False,
             batch_size: int = 64, max_length: int = 128,
             progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """((n, labels) logits, (n, hidden) L2-normalised mean of the last hidden states or None), read-only, through
    the one batched forward pass over texts (inference.predict_batches): each row reads as it does alone.
    `progress(fraction, "k/total")` before the pass and after every batch; it may raise to stop the scan there."""
    labels = ck.model.config.num_labels

    def forward(enc) -> torch.Tensor:  # (batch, labels [+ hidden]): logits and vectors from the same pass
        out = ck.model(**enc, output_hidden_states=vectors)
        if not vectors:
            return out.logits.float()
        mean = pooling.mean(out.hidden_states[-1], enc["attention_mask"])  # (batch, hidden)
        return torch.cat([out.logits.float(), torch.nn.functional.normalize(mean.float(), dim=-1)], -1)

    if not len(texts):
        return np.zeros((0, labels), np.float32), (np.zeros((0, ck.model.config.hidden_size), np.float32)
                                                   if vectors else None)
    if progress:  # a stop check before the pass tokenizes every row to sort them by length
        progress(0.0, "")
    width = labels + (ck.model.config.hidden_size if vectors else 0)
    with attention_kernel(ck, "sdpa"):  # no attention weights read: the fast kernel
        # Shared by the processes of an `accelerate launch`: every process ends with every row.
        both = predict_shared(ck.tokenizer, ck.model, list(texts), list(pairs) if pairs is not None else None,
                              batch_size=batch_size, max_length=fit_length(ck, max_length), progress=progress,
                              forward=forward, out=np.zeros((len(texts), width), np.float32))
    return both[:, :labels], (both[:, labels:] if vectors else None)


def token_ids(ck: Checkpoint, texts: Sequence[str], *, pairs: Sequence[str] | None = None,
              max_length: int = 128) -> list[list[int]]:
    """The ids each row is read as: two texts that give the same ids are the same input to the model."""
    return ck.tokenizer(list(texts), list(pairs) if pairs is not None else None, truncation=True,
                        max_length=fit_length(ck, max_length))["input_ids"]
