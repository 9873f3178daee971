"""Words meet subwords: pre-split words encoded by a fast tokenizer, each word's label on its first subword
(-100 on the others and on special tokens, HF's convention: the token classification course and
run_ner.py), how many words and tokens that labels, and a token classifier's logits per word.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from explorer.data.dataset import DataError
from explorer.data.tags import TagData
from explorer.model.checkpoints import forward_inputs
from explorer.runtime.budget import chunks
from explorer.runtime.jobs import Stop
from explorer.text.errors import Message

IGNORE = -100  # the label id CrossEntropyLoss skips (torch's ignore_index default, HF's convention)


def _spaced(tokenizer) -> bool:
    """Does `tokenizer` read pre-split words without the space before them? Byte-level BPE (GPT-2, RoBERTa)
    with add_prefix_space=False encodes each word as if it began the text ("world" -> w o r l d, not
    "Ġworld"), so its tokens would differ from the same sentence as running text, which is what the model
    reads at inference (pipeline()). Whitespace-splitting tokenizers (WordPiece, SentencePiece) have no such gap."""
    pre = getattr(getattr(tokenizer, "backend_tokenizer", None), "pre_tokenizer", None)
    try:
        state = json.loads(pre.__getstate__()) if pre is not None else {}
    except (TypeError, ValueError, AttributeError):
        return False
    parts = state.get("pretokenizers", [state]) if isinstance(state, dict) else []
    return any(p.get("type") == "ByteLevel" and not p.get("add_prefix_space", True) for p in parts if isinstance(p, dict))


def encode_words(tokenizer, words: list[list[str]], max_length: int, **kw):
    if not getattr(tokenizer, "is_fast", False):
        raise DataError("tags_slow_tokenizer", kind=type(tokenizer).__name__)
    if _spaced(tokenizer):  # each word after the first keeps its space, as in running text
        words = [[w if i == 0 else " " + w for i, w in enumerate(row)] for row in words]
    try:
        return tokenizer([list(w) for w in words], is_split_into_words=True, truncation=True,
                         max_length=max_length, **kw)
    except Exception as err:  # noqa: BLE001 - e.g. byte-level BPE without add_prefix_space
        raise DataError("tags_tokenizer", detail=str(err).strip().splitlines()[0][:200]) from None


def first_subwords(word_ids: list[int | None]) -> list[int]:
    """Positions of each word's first subword, in word order (words cut by truncation are missing)."""
    out, prev = [], None
    for pos, w in enumerate(word_ids):
        if w is not None and w != prev:
            out.append(pos)
        prev = w
    return out


def aligned(word_ids: list[int | None], labels) -> list[int]:
    """Per-token label ids: the word's label on its first subword, IGNORE (-100) on the other subwords and
    on special tokens, as HF's token-classification examples align them."""
    out, prev = [], None
    for w in word_ids:
        out.append(IGNORE if w is None or w == prev else int(labels[w]))
        prev = w
    return out


def align_labels(tokenizer, words: list[list[str]], labels: list, max_length: int = 128) -> dict:
    """The tokenizer's encoding of pre-split `words` (is_split_into_words=True) with a `labels` list per row
    (aligned). Raises DataError for a tokenizer that cannot say which word a token belongs to."""
    enc = encode_words(tokenizer, words, max_length)
    enc["labels"] = [aligned(enc.word_ids(i), labels[i]) for i in range(len(words))]
    return enc


@dataclass(frozen=True)
class Alignment:
    """How words met subwords: counts for the report's note."""
    words: int
    tokens: int
    labelled: int  # tokens carrying a label (first subwords)
    ignored: int  # tokens at -100: later subwords and specials
    truncated: int  # words cut off by max_length (no label at all)

    def note(self) -> Message:
        return Message("note_tags_alignment", words=self.words, tokens=self.tokens, labelled=self.labelled,
                       ignored=self.ignored, truncated=self.truncated)


def alignment(tokenizer, data: TagData, max_length: int = 128) -> Alignment:
    enc = encode_words(tokenizer, list(data.words), max_length)
    tokens = labelled = 0
    for i in range(len(data.words)):
        ids = enc.word_ids(i)
        tokens += len(ids)
        labelled += len(first_subwords(ids))
    return Alignment(words=data.n_words, tokens=tokens, labelled=labelled, ignored=tokens - labelled,
                     truncated=data.n_words - labelled)


def word_outputs(model, tokenizer, *, words: list[list[str]], max_length: int = 128, batch_size: int = 32,
                 encoder: bool = False, stop: Stop | None = None) -> list[torch.Tensor]:
    """Per sentence, the model's outputs at each word's first subword, `batch_size` sentences at a time (padded
    per batch), read-only: (words kept, labels) logits of its token-classification forward, or with `encoder`
    (words kept, hidden) states of the encoder alone (what HF's token classifier applies dropout + classifier
    to). Words cut by truncation are left out, so a row may be shorter than its sentence. `stop()` is asked
    before each batch: a cancelled job (jobs.Cancelled) ends before encoding every sentence."""
    run = model.base_model if encoder else model
    accepted = forward_inputs(run)  # a tokenizer may return token_type_ids a model (DistilBERT) does not take
    out = []
    with torch.inference_mode():
        for rows in chunks(len(words), batch_size):
            if stop:
                stop()
            chunk = words[rows.start:rows.stop]
            enc = encode_words(tokenizer, chunk, max_length, padding=True, return_tensors="pt")
            got = run(**{k: v.to(model.device) for k, v in enc.items() if k in accepted})  # (batch, seq, ...)
            got = got[0] if encoder else got.logits
            out += [got[j, first_subwords(enc.word_ids(j))].clone() for j in range(len(chunk))]
    return out


def word_logits(model, tokenizer, words: list[list[str]], max_length: int = 128,
                batch_size: int = 32) -> list[np.ndarray]:
    """Per sentence, (words kept, labels) float32 logits at each word's first subword (word_outputs)."""
    return [r.float().cpu().numpy() for r in word_outputs(model, tokenizer, words=words, max_length=max_length,
                                                                batch_size=batch_size)]
