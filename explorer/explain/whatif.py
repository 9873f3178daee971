"""What-if: two texts side by side (a second text, or an edited copy of the first), aligned word by
word, and the live ablation "drop this word".

Both texts' attributions explain the same label (text A's prediction), so their word scores can be
subtracted. Words come from the tokenizer's own word ids, the same grouping as the attribution
page's word level, and a dropped word is cut from the text at its character span. A token classifier
compares its tags instead (compare_tags): each word's tag in both texts, aligned the same way.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from explorer.explain.attribution import Attribution, merge_words
from explorer.explain.batched import attribute_many
from explorer.model.analysis import MAX_TEXT_CHARS, Analysis, analyze, encode, encoder_inputs, max_length
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head, run_head
from explorer.model.inference import predict_batches
from explorer.model.kernel import attention_kernel
from explorer.model.token_analysis import IGNORED, TokenAnalysis, analyze_tokens
from explorer.runtime import budget
from explorer.runtime.jobs import HEARD_S, Progress
from explorer.text.errors import ExplorerError


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
    merged, scores = merge_words(r.tokens, ids, scores=r.scores, pieces=r.pieces)
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
    return a.problem_type.probabilities(a.logits)


def compare_texts(ck: Checkpoint, head: Head, *, text_a: str, text_b: str, method: str = "lig",
                  text_pair: str = "", progress: Progress | None = None) -> WhatIf:
    """Analyse both texts and attribute text A's predicted label's logit in each. With `text_pair`
    (a sentence-pair model's second text), both are paired with it, unchanged. `progress`: the attributions'."""
    pair = text_pair or None
    a, b = analyze(ck, head, text_a, text_pair=pair), analyze(ck, head, text_b, text_pair=pair)
    target = int(np.argmax(a.logits))
    ra, rb = attribute_many(ck, head, texts=[text_a, text_b], method=method, target=target, text_pairs=[pair, pair],
                            progress=progress)
    return WhatIf(a=a, b=b, target=target, attr_a=ra, attr_b=rb, rows=align(words(ra), words(rb)))


def drop_word(ck: Checkpoint, text: str, *, word_id: int) -> str:
    """`text` without the word the tokenizer numbers `word_id` (cut at its character span)."""
    return _cut(text, _spans(ck, text, [word_id])[0])


def _spans(ck: Checkpoint, text: str, word_ids: list[int]) -> list:
    """Each word's character span in `text`, from one tokenization of it."""
    enc = ck.tokenizer(text, truncation=True, max_length=max_length(ck))
    out = []
    for word_id in word_ids:
        try:
            span = enc.word_to_chars(word_id)
        except (ValueError, TypeError, AttributeError):  # no such word, or a slow tokenizer without offsets
            span = None
        if span is None:
            raise WhatIfError("whatif_no_word", word=word_id)
        out.append(span)
    return out


def _reach(ck: Checkpoint, text: str) -> str:
    """The start of `text` that any text-minus-one-word can bring into the model's window: cutting a
    word frees at most its own tokens, so the window ends at most that many tokens later. Everything
    after is never read; tokenizing it once per word cost ~0.8 GB on a 20,000-character text (a
    truncating tokenizer keeps what it cut off)."""
    enc = ck.tokenizer(text[:MAX_TEXT_CHARS])
    n, limit = len(enc["input_ids"]), max_length(ck)
    try:
        longest = max(Counter(w for w in enc.word_ids() if w is not None).values(), default=1)
        end = enc.token_to_chars(limit + longest + 4) if n > limit + longest + 5 else None
    except (ValueError, TypeError, AttributeError, IndexError):  # a slow tokenizer: no offsets
        end = None
    return text if end is None else text[:end.end]


def _cut(text: str, span) -> str:
    left, right = text[:span.start].rstrip(), text[span.end:].lstrip()
    glue = " " if left and right and right[0].isalnum() else ""
    return left + glue + right


def batch_logits(ck: Checkpoint, head: Head, *, texts: list[str], text_pair: str | list[str] = "",
                 progress: Progress | None = None) -> np.ndarray:
    """(len(texts), labels): padded forward passes over the texts (each paired with `text_pair` if
    given, or with its own where it is a list), in batches that fit HEAD_EXPLORER_BATCH_MB at the longest text's
    length (predict_batches: masked padding changes nothing, so each row's logits are its own). With `progress`
    (a job), each forward runs about HEARD_S seconds at most, so that a Stop is heard within about that."""
    pairs = list(text_pair) if isinstance(text_pair, list) else [text_pair] * len(texts) if text_pair else None
    limit = max_length(ck)
    seq = max(len(ids) for ids in ck.tokenizer(texts, pairs, truncation=True, max_length=limit)["input_ids"])

    def forward(enc) -> torch.Tensor:
        hidden = ck.model.base_model(**encoder_inputs(enc, ck)).last_hidden_state
        return run_head(head, hidden, enc["attention_mask"], input_ids=enc["input_ids"])[-1][1].double()

    return predict_batches(ck.tokenizer, ck.model, texts, pairs, max_length=limit, progress=progress,
                           batch_size=budget.batch_rows(ck.model.config, seq, device=ck.model.device),
                           forward=forward, heard_s=HEARD_S if progress is not None else None)


# Leave-one-out runs the encoder once per word: above this many words it takes long enough that the
# pages ask first ("Compute anyway"), and run it as a job. Memory stays within HEAD_EXPLORER_BATCH_MB at any length.
LOO_WARN_WORDS = 64
# A costly text drops its first LOO_MAX_WORDS words unless "all words" is asked for: a 20,000-character text
# has 510 words in MiniLM's 512 tokens, and each 512-token row took ~0.2 s on one idle core here (sdpa; 0.31 s
# with the 2 cores loaded ~1.8x: 200 words in 62 s), so 160 words stay within a minute either way.
LOO_MAX_WORDS = 160


def _found(a: Analysis) -> list[tuple[str, int]]:
    """(word, word id) of each word of text A that leave-one-out drops."""
    in_a = _text_a_ids(a.word_ids, a.segments)
    names = merge_words(a.tokens, in_a, scores=np.zeros(len(a.tokens)), pieces=a.pieces)[0]
    return [(n, w) for n, w in zip(names, _group_ids(in_a)) if w is not None]


def loo_words(a: Analysis) -> int:
    """How many texts-minus-one-word leave-one-out would run."""
    return len(_found(a))


def loo_is_costly(a: Analysis) -> bool:
    return loo_words(a) > LOO_WARN_WORDS


def leave_one_out(ck: Checkpoint, head: Head, *, a: Analysis, progress: Progress | None = None,
                  limit: int | None = None) -> tuple[tuple[str, ...], np.ndarray]:
    """For each word of `a`'s text (its first `limit` words; None: all), how much the predicted label's
    probability (the problem type's function) falls when that word is cut from the text: (words, (words,)).
    Positive: the word supported the label. For a sentence pair, the words of text A; text B stays whole.
    `progress(fraction)` is called after each batch.

    The texts run in padded batches under the sdpa kernel (no attention weights are read): the same
    numbers as one eager forward per text to float32 rounding (kernel.TOLERANCE; tests/test_whatif.py)."""
    found = _found(a)[:limit]
    if not found:
        return (), np.zeros(0)
    text = _reach(ck, a.text)
    texts = [_cut(text, span) for span in _spans(ck, text, [w for _, w in found])]
    target = int(np.argmax(a.logits))
    with attention_kernel(ck, "sdpa"):
        logits = batch_logits(ck, head, texts=[text, *texts], text_pair=a.text_pair, progress=progress)
    probs = a.problem_type.probabilities(logits)
    return tuple(n for n, _ in found), probs[0, target] - probs[1:, target]


# What-if attributes both texts (lig, refined until complete): above this many tokens in either text
# that takes long enough that the page asks first.
COMPARE_WARN_TOKENS = 128


def compare_tokens(ck: Checkpoint, text_a: str, *, text_b: str, text_pair: str = "") -> int:
    """The longer text's token count as the model reads it (truncated): what compare's cost grows with."""
    return max(encode(ck, t, text_pair or None)[0]["input_ids"].shape[1] for t in (text_a, text_b))


@dataclass(frozen=True, eq=False)
class TagWhatIf:
    """A token classifier on two texts: each word's tag in both, aligned as the sentence what-if aligns words.
    A word's tag is its first token's (pipeline()'s "first" vote); Word.score is that tag's probability."""
    a: TokenAnalysis
    b: TokenAnalysis
    rows: tuple[Row, ...]
    tags_a: dict  # word index in a.words -> tag
    tags_b: dict

    def changed(self, row: Row) -> bool:
        """The word is in both texts with another tag, or in one text only with a tag other than O."""
        tag_a = self.tags_a.get(row.a.word_id) if row.a else None
        tag_b = self.tags_b.get(row.b.word_id) if row.b else None
        return tag_a != tag_b and not ({tag_a, tag_b} <= {None, *IGNORED})


def _tag_words(a: TokenAnalysis) -> tuple[tuple[Word, ...], dict]:
    words = tuple(Word(k, w.text, float(a.softmax[w.first].max())) for k, w in enumerate(a.words))
    return words, {k: a.labels[int(a.predicted[w.first])] for k, w in enumerate(a.words)}


def compare_tags(ck: Checkpoint, head: Head, *, text_a: str, text_b: str) -> TagWhatIf:
    """Both texts through a token classifier (one encoder pass each), their words aligned (align)."""
    a, b = analyze_tokens(ck, head, text_a), analyze_tokens(ck, head, text_b)
    (words_a, tags_a), (words_b, tags_b) = _tag_words(a), _tag_words(b)
    return TagWhatIf(a=a, b=b, rows=align(words_a, words_b), tags_a=tags_a, tags_b=tags_b)
