"""What-if: two texts side by side (a second text, or an edited copy of the first), aligned word by
word, and the live ablation "drop this word".

Both texts' attributions explain the same label (text A's prediction), so their word scores can be
subtracted. Words come from the tokenizer's own word ids, the same grouping as the attribution
page's word level, and a dropped word is cut from the text at its character span.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np
import torch

from . import probabilities
from .analysis import Analysis, analyze, encoder_inputs, max_length
from .attribution import Attribution, attribute, merge_words
from .checkpoints import Checkpoint
from .errors import ExplorerError
from .heads import Head, run_head


class WhatIfError(ExplorerError):
    """A bad what-if request; the message is one line, meant for the user."""


@dataclass(frozen=True)
class Word:
    word_id: int  # the tokenizer's word index in its text
    text: str
    score: float  # attribution summed over the word's tokens


def words(r: Attribution) -> tuple[Word, ...]:
    """The text's words with their attributions; special tokens (and a pair's text B) are left out."""
    ids = _text_a_ids(r.word_ids, r.segments)
    merged, scores = merge_words(r.tokens, ids, r.scores, r.pieces)
    return tuple(Word(wid, w, float(s)) for wid, w, s in zip(_group_ids(ids), merged, scores) if wid is not None)


def _text_a_ids(word_ids, segments) -> tuple[int | None, ...]:
    """Word ids of text A's tokens; None for special tokens and for a pair's text B (its ids restart at 0)."""
    segments = segments or (0,) * len(word_ids)
    return tuple(w if s == 0 else None for w, s in zip(word_ids, segments))


def _group_ids(word_ids) -> list:
    """The word id of each entry merge_words makes: it starts one at a special token or a new word id."""
    return [wid for k, wid in enumerate(word_ids) if k == 0 or wid is None or wid != word_ids[k - 1]]


@dataclass(frozen=True)
class Row:
    op: str  # equal | replace | delete (only in A) | insert (only in B)
    a: Word | None
    b: Word | None

    @property
    def difference(self) -> float:
        """B's score minus A's; a word absent from a text contributes 0 there."""
        return (self.b.score if self.b else 0.0) - (self.a.score if self.a else 0.0)


def align(a: tuple[Word, ...], b: tuple[Word, ...]) -> tuple[Row, ...]:
    """A word-level diff (difflib on the words' texts, case-sensitive)."""
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, [w.text for w in a], [w.text for w in b], autojunk=False)
    for op, i0, i1, j0, j1 in matcher.get_opcodes():
        if op == "equal":
            rows += [Row("equal", x, y) for x, y in zip(a[i0:i1], b[j0:j1])]
            continue
        left, right = a[i0:i1], b[j0:j1]
        for k in range(max(len(left), len(right))):
            x = left[k] if k < len(left) else None
            y = right[k] if k < len(right) else None
            rows.append(Row("replace" if x and y else "delete" if x else "insert", x, y))
    return tuple(rows)


@dataclass(frozen=True, eq=False)
class WhatIf:
    a: Analysis
    b: Analysis
    target: int  # the label both attributions explain: text A's prediction
    attr_a: Attribution
    attr_b: Attribution
    rows: tuple[Row, ...]

    @property
    def probs(self) -> tuple[np.ndarray, np.ndarray]:  # (labels,) each, following the problem type
        return probabilities_of(self.a), probabilities_of(self.b)


def probabilities_of(a: Analysis) -> np.ndarray:  # (labels,)
    return probabilities.probabilities(a.logits, a.problem_type)


def compare(ck: Checkpoint, head: Head, text_a: str, text_b: str, method: str = "lig",
            text_pair: str = "") -> WhatIf:
    """Analyse both texts and attribute text A's predicted label's logit in each. With `text_pair`
    (a sentence-pair model's second text), both are paired with it, unchanged."""
    pair = text_pair or None
    a, b = analyze(ck, head, text_a, text_pair=pair), analyze(ck, head, text_b, text_pair=pair)
    target = int(np.argmax(a.logits))
    ra = attribute(ck, head, text_a, method, target=target, text_pair=pair)
    rb = attribute(ck, head, text_b, method, target=target, text_pair=pair)
    return WhatIf(a=a, b=b, target=target, attr_a=ra, attr_b=rb, rows=align(words(ra), words(rb)))


def drop_word(ck: Checkpoint, text: str, word_id: int) -> str:
    """`text` without the word the tokenizer numbers `word_id` (cut at its character span)."""
    enc = ck.tokenizer(text, truncation=True, max_length=max_length(ck))
    try:
        span = enc.word_to_chars(word_id)
    except (ValueError, TypeError, AttributeError):  # no such word, or a slow tokenizer without offsets
        span = None
    if span is None:
        raise WhatIfError("whatif_no_word", word=word_id)
    left, right = text[:span.start].rstrip(), text[span.end:].lstrip()
    glue = " " if left and right and right[0].isalnum() else ""
    return left + glue + right


def batch_logits(ck: Checkpoint, head: Head, texts: list[str], text_pair: str = "") -> np.ndarray:
    """(len(texts), labels): one padded forward pass for all texts (each paired with `text_pair` if given)."""
    pairs = [text_pair] * len(texts) if text_pair else None
    enc = ck.tokenizer(texts, pairs, truncation=True, max_length=max_length(ck), padding=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = ck.model.base_model(**encoder_inputs(enc, ck)).last_hidden_state
        return run_head(head, hidden, enc["attention_mask"], input_ids=enc["input_ids"])[-1][1].double().numpy()


def leave_one_out(ck: Checkpoint, head: Head, a: Analysis) -> tuple[tuple[str, ...], np.ndarray]:
    """For each word of `a`'s text, how much the predicted label's probability (the problem type's
    function) falls when that word is cut from the text: (words, (words,)). Positive: the word supported
    the label. For a sentence pair, the words of text A; text B stays whole."""
    in_a = _text_a_ids(a.word_ids, a.segments)
    names = merge_words(a.tokens, in_a, np.zeros(len(a.tokens)), a.pieces)[0]
    found = [(n, w) for n, w in zip(names, _group_ids(in_a)) if w is not None]
    if not found:
        return (), np.zeros(0)
    texts = [drop_word(ck, a.text, w) for _, w in found]
    target = int(np.argmax(a.logits))
    probs = probabilities.probabilities(batch_logits(ck, head, [a.text, *texts], a.text_pair), a.problem_type)
    return tuple(n for n, _ in found), probs[0, target] - probs[1:, target]
