"""Frozen-encoder features: one batched, streamed pass over a dataset's texts.

The pass yields four vectors per text: the last layer's first-token state (what BERT-style heads
read), its attention-masked mean, L2-normalised (what sentence encoders such as all-MiniLM are
trained to produce), and the average of every layer's L2-normalised mean, L2-normalised again
(lower layers keep lexical cues that the last one has partly traded away; averaging them keeps
one hidden-size vector, where concatenating would multiply the cache by the layer count), and the
state at the last non-pad token (what decoder-only heads read, picked by pooling's rule). Texts
are tokenized a batch at a time and batched by length, so padding costs little and memory stays
flat however many rows there are.

Under `accelerate launch --num_processes N` (or torchrun) each process encodes a contiguous
share of the length-sorted batches and the shares are gathered, so every process ends with
the same (n, 4, hidden) array; one process gives the same batches, hence the same numbers.
"""
from __future__ import annotations

import hashlib
import os
import sys

import numpy as np
import torch

from explorer.model import pooling
from explorer.model.checkpoints import fit_length, forward_inputs
from explorer.model.inference import predict_shared, rank, world_size
from explorer.model.kernel import attention_kernel
from explorer.model.steps import Op
from explorer.runtime import device as dev
from explorer.runtime import precision
from explorer.runtime.budget import ByteCache
from explorer.runtime.config import env_config, env_name
from explorer.runtime.jobs import Progress

# Index into the features' second axis: the pooling steps' own ops (a head reads one of them), plus "layers",
# the normalised masked means of every layer summed, which the audit may choose and no head reads.
POOLS = (Op.FIRST, Op.MEAN, "layers", Op.LAST)


def _encode(ck, enc, pairs: bool) -> torch.Tensor:
    """(batch, 4, hidden) the pooled vectors of one batch's encoding (on the model's device)."""
    # A pair's second text is segment 1 for models with token types (BERT): without them it would read as text A.
    types = {"token_type_ids": enc["token_type_ids"]} if pairs and "token_type_ids" in enc and \
        "token_type_ids" in forward_inputs(ck.model) else {}
    with attention_kernel(ck, "sdpa"):  # hidden states only: the fast kernel
        out = ck.model.base_model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                  output_hidden_states=True, **types)
    # hidden_states is (embeddings, layer 1, ..., layer L); the last is taken from last_hidden_state, which
    # some decoders give after a final norm, so "first" and "mean" stay what they were.
    states = [*out.hidden_states[1:-1], out.last_hidden_state]
    mask = enc["attention_mask"]  # (batch, seq)
    means = [torch.nn.functional.normalize(pooling.mean(h, mask), dim=-1) for h in states]  # L x (batch, hidden)
    layers = torch.nn.functional.normalize(torch.stack(means).sum(0), dim=-1)
    # Padding counts as padding whatever id the tokenizer filled it with, so each row reads the token
    # it reads when encoded alone, as `model(**tokenizer(text))` does (eos-as-pad models included).
    pooled = pooling.last(out.last_hidden_state, mask, pooling.pad_id(ck.model.config), enc["input_ids"])
    first = pooling.first(out.last_hidden_state)
    return torch.stack([first, means[-1], layers, pooled], 1).float()  # (batch, 4, hidden)


def encoder_features(ck, texts: list[str], batch_size: int = 64, max_length: int = 128,
                     progress: Progress | None = None, text_pairs: list[str] | None = None,
                     dtype: str | torch.dtype | None = None) -> np.ndarray:
    """(n, 4, hidden) float32: first-token state, L2-normalised mean, layer-averaged mean and
    last-non-pad-token state per text (per pair encoding of text and `text_pairs[i]`), in input order.
    `dtype`: the encoder's precision (explorer/runtime/precision.py; None: the model's own)."""
    if dtype is not None:
        ck = precision.at_precision(ck, dtype)
    max_length = fit_length(ck, max_length)
    # Out of memory on the device: once more with half the batch, then one line (runtime/device.py).
    return dev.halving_on_oom(lambda size: _features(ck, texts, size, max_length, progress, text_pairs), batch_size,
                              ck.model.device)


def _features(ck, texts: list[str], batch_size: int, max_length: int, progress: Progress | None,
              pairs: list[str] | None = None) -> np.ndarray:
    n = len(texts)
    hidden = ck.model.config.hidden_size
    out = np.zeros((n, len(POOLS), hidden), np.float32)
    if n == 0:
        return out
    out = predict_shared(ck.tokenizer, ck.model, texts, pairs, batch_size=batch_size, max_length=max_length,
                         progress=progress, forward=lambda enc: _encode(ck, enc, pairs is not None), out=out)
    if world_size() > 1 and rank() == 0:  # one line, so a log (and the scale-out test) can tell the pass was shared
        print(f"features: {n} rows encoded by WORLD_SIZE={world_size()} processes", file=sys.stderr)
    return out


# ---- features, cached -----------------------------------------------------------------------

# All datasets' features together, in MB (4 vectors per row: 100,000 rows of MiniLM are ~615 MB), in the
# byte-bounded cache every session shares. The newest entry is always kept, however large: it is the one
# being trained on.
FEATURES_ENV = env_name("features_mb")
_FEATURES = ByteCache(lambda: env_config().features_mb, max_entries=4)


def cached_features(ck, texts: tuple[str, ...], max_length: int, pool: str = "first",
                    progress: Progress | None = None, text_pairs: tuple[str, ...] | None = None) -> torch.Tensor:
    """(n, hidden) frozen-encoder features (a pool of features.POOLS: "first" token, L2-normalised
    "mean", the "layers" average, or the "last" non-pad token), cached per (model, texts, pairs, max_length);
    one encoder pass fills every pool. With `text_pairs`, row i encodes the pair (texts[i], text_pairs[i])."""
    digest = hashlib.sha1("\x1f".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    # The pairs have a digest of their own: rows (a, b) and the single texts "a", or other b's, differ.
    pair_digest = None if text_pairs is None else hashlib.sha1(
        "\x1f".join(text_pairs).encode("utf-8", "surrogatepass")).hexdigest()
    # The device and precision are in the key: features from cuda, or in bfloat16, are other numbers.
    where = (str(ck.model.device), precision.dtype_name(precision.model_dtype(ck.model)))
    key = (id(ck.model), ck.name, ck.source, *where, max_length, digest, pair_digest)
    feats = _FEATURES.get_or_compute(key, lambda: torch.from_numpy(encoder_features(
        ck, list(texts), max_length=max_length, progress=progress,
        text_pairs=None if text_pairs is None else list(text_pairs))))
    return feats[:, POOLS.index(pool)]  # (n, pools, hidden) -> (n, hidden)
