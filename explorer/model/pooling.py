"""Pooling: how a head turns (batch, seq, hidden) states into one (batch, hidden) vector per row.

One home for the three poolings the heads, the own head and the feature pass read: the first token
(BERT-style [CLS]), the attention-masked mean, and the last non-pad token by HF's rule for
decoder-only classifiers (`XxxForSequenceClassification` reads the rightmost token whose id is not
`config.pad_token_id`).
"""
from __future__ import annotations

import torch


def pad_id(config) -> int:
    """The id last-token pooling treats as padding. A model without one pools as if it had an id no
    token uses, which HF's rule turns into "the last token" for every row."""
    return config.pad_token_id if config.pad_token_id is not None else -1


def last_token(ids: torch.Tensor, pad_id: int) -> torch.Tensor:  # (batch,)
    """HF's rule on the ids the model reads: the rightmost token that is not padding."""
    positions = torch.arange(ids.shape[-1], device=ids.device)
    return (positions * (ids != pad_id)).argmax(-1)


def last_index(mask: torch.Tensor, pad_id: int, ids: torch.Tensor | None = None) -> torch.Tensor:  # (batch,)
    """HF's rule with padding read from `mask` (batch, seq; 0 = padding): a masked position counts as
    padding whatever id the tokenizer filled it with, so each row of a padded batch reads the token it
    reads encoded alone. Without `ids` the mask alone says where each row ends; with them, a pad id
    inside the real tokens still counts as padding, as it does for the model."""
    if ids is None:
        ids = torch.where(mask.bool(), pad_id + 1, pad_id)
    else:
        ids = ids.masked_fill(mask == 0, pad_id)
    return last_token(ids, pad_id)


def first(hidden: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch, hidden)
    return hidden[:, 0]


def mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # (batch, seq, hidden) -> (batch, hidden)
    """The mean over the tokens `mask` marks real (an all-padding row gives zeros, not NaN)."""
    m = mask.unsqueeze(-1).to(hidden.dtype)  # (batch, seq, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1)


def last(hidden: torch.Tensor, mask: torch.Tensor, pad_id: int,
         ids: torch.Tensor | None = None) -> torch.Tensor:  # (batch, seq, hidden) -> (batch, hidden)
    """Each row's state at its last non-pad token (`last_index`)."""
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), last_index(mask, pad_id, ids)]
