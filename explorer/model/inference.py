"""Read-only predictions over many texts, in batches: the checkpoint's logits and label ids (the label report
and the audit's mapping check, the kernel and architecture tests)."""
from __future__ import annotations

import numpy as np
import torch

from explorer.model.checkpoints import Checkpoint, fit_length
from explorer.model.kernel import attention_kernel
from explorer.runtime.budget import chunks

def predict_logits(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                   text_pairs: list[str] | None = None) -> np.ndarray:
    """(n, labels) float32 logits from the checkpoint, read-only (inference mode). With `text_pairs`, each
    row is the tokenizer's pair encoding of (text, pair), as a sentence-pair classifier reads it."""
    out = []
    if ck.tokenizer.pad_token is None or ck.model.config.pad_token_id is None:
        batch_size = 1  # GPT-2 cannot pad, and HF's last-token pooling refuses batches without a pad id
    max_length = fit_length(ck, max_length)
    # Batches of similar lengths pad less: the demo tweets' 180 rows padded to 10,160 tokens in file order and
    # 7,308 sorted (5,534 real), the Data page's first check of them ~15% faster (#33). Rows come back in order.
    order = np.argsort([len(t) + (len(text_pairs[i]) if text_pairs is not None else 0) for i, t in enumerate(texts)],
                       kind="stable")
    with torch.inference_mode(), attention_kernel(ck, "sdpa"):  # no weights read: the fast kernel
        for rows in chunks(len(texts), batch_size):
            take = order[rows.start:rows.stop]
            pairs = [text_pairs[i] for i in take] if text_pairs is not None else None
            enc = ck.tokenizer([texts[i] for i in take], pairs, truncation=True, max_length=max_length,
                               padding=batch_size > 1, return_tensors="pt").to(ck.model.device)
            out.append(ck.model(**enc).logits.float().cpu().numpy())
    if not out:
        return np.zeros((0, len(ck.labels)), np.float32)
    logits = np.empty((len(texts), out[0].shape[1]), np.float32)
    logits[order] = np.concatenate(out)
    return logits


def predict_ids(ck: Checkpoint, texts: list[str], batch_size: int = 64, max_length: int = 128,
                text_pairs: list[str] | None = None) -> np.ndarray:
    """(n,) argmax label ids from the checkpoint, read-only (inference mode); pairs as predict_logits."""
    return predict_logits(ck, texts, batch_size, max_length, text_pairs).argmax(-1)
