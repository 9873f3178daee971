"""One token-classification analysis: text -> tokens -> encoder (run once) -> the head on every token.

The sibling of analysis.Analysis for `…ForTokenClassification` checkpoints (Checkpoint.task ==
"token-classification"). A token classifier's head is applied to the hidden state of every token, not
to one pooled vector: its logits are (seq, labels), and each token gets a tag.

Entities are grouped by transformers' own TokenClassificationPipeline code (postprocess: the
special-token filter, subword detection, the first/average/max word votes, B-/I- grouping, the "O"
filter), called on our logits through a stand-in that never runs the model (`_Grouping`). Reusing it
rather than rewriting it is the only way to stay exactly what `pipeline("token-classification",
aggregation_strategy=…)` returns, heuristics included (a BPE tokenizer without a subword prefix decides
words by spaces in the text), as transformers changes them.

Public API:
    analyze_tokens(ck, head, text, aggregation="simple") -> TokenAnalysis
    TokenAnalysis: logits (seq, labels), softmax (seq, labels), tags, offsets, words (TokenWord: which
        subword carries the label under first/average/max), entities[strategy] (Entity, as pipeline()),
        layer_logits (layers+1, seq, labels): the head on every layer for every token; to_dict().
    analyze_tokens(..., strategies=AGGREGATIONS) groups all five at once; entities(ck, a, strategy) any later.
    token_encoder(ck, text) -> TokenEncoder: the encoder's attention and every layer's token vectors, for the
        pages that show what the head reads (every token's vector) and inside the encoder.
    AGGREGATIONS = ("none", "simple", "first", "average", "max")
"""
from __future__ import annotations

import functools
import html
import warnings
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from explorer.model.analysis import AnalysisError, encode, encoder_inputs, readable, to_numpy, token_info
from explorer.model.checkpoints import TOKEN_CLASSIFICATION, Checkpoint, max_length
from explorer.model.heads import Head, is_per_token, run_head, used_new_weights
from explorer.model.kernel import attention_kernel
from explorer.results import JsonResult, html_table, rounded

AGGREGATIONS = ("none", "simple", "first", "average", "max")  # pipeline()'s aggregation_strategy values
WORD_AGGREGATIONS = ("first", "average", "max")  # those that vote per word (need a fast tokenizer's offsets)
DEFAULT_AGGREGATION = "simple"
IGNORED = ("O",)  # pipeline()'s default ignore_labels


@dataclass(frozen=True)
class Entity(JsonResult):
    """One entry of pipeline()'s answer. `grouped`: an entity group (simple/first/average/max: the keys
    entity_group, score, word, start, end); otherwise one token (none: entity, score, index, word, start,
    end)."""
    label: str  # entity_group, or entity for "none"
    word: str
    start: int | None  # character offsets in the text (None with a slow tokenizer)
    end: int | None
    score: float
    index: int | None = None  # the token's position ("none" only)
    grouped: bool = True

    def to_dict(self) -> dict:
        """The pipeline()'s dict for this entity, with the same keys."""
        if self.grouped:
            return {"entity_group": self.label, "score": self.score, "word": self.word, "start": self.start,
                    "end": self.end}
        return {"entity": self.label, "score": self.score, "index": self.index, "word": self.word,
                "start": self.start, "end": self.end}


@dataclass(frozen=True)
class TokenWord:
    """A word as pipeline() delimits it for first/average/max (its first token, then the tokens it calls
    subwords), with which subword's scores decide the word's label under each strategy."""
    text: str  # the text's characters from the first token's start to the last one's end
    start: int | None
    end: int | None
    tokens: tuple[int, ...]  # token positions
    first: int  # "first": the first token's label
    max: int  # "max": the token with the highest single score (the first of equals, as max() picks)

    def carriers(self, strategy: str) -> tuple[int, ...]:
        """The tokens whose scores give the word's label: one for first and max, all for average."""
        return {"first": (self.first,), "max": (self.max,)}.get(strategy, self.tokens)


@dataclass(frozen=True, eq=False)
class TokenAnalysis(JsonResult):
    checkpoint: str
    head_kind: str
    text: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    special: tuple[bool, ...]  # as Analysis.special ([UNK] is not special)
    word_ids: tuple[int | None, ...]  # the tokenizer's word of each token; None for special tokens
    offsets: tuple[tuple[int, int] | None, ...]  # (start, end) characters of each token; None: no offsets (slow)
    token_word: tuple[int | None, ...]  # per token: its index in `words` (pipeline()'s words); None for specials
    words: tuple[TokenWord, ...]
    truncated_tokens: int
    max_length: int
    labels: tuple[str, ...]
    logits: np.ndarray  # (seq, labels): the head on every token's last hidden state
    softmax: np.ndarray  # (seq, labels) float32, as pipeline() computes its scores (token_pipeline_scores)
    special_mask: tuple[bool, ...]  # the tokenizer's special_tokens_mask: the tokens pipeline() skips
    layer_logits: np.ndarray  # (layers+1, seq, labels): the head on the embeddings, then on each layer's output
    aggregation: str  # the strategy `entities_json` and to_dict() report
    entities: dict  # strategy -> tuple[Entity, ...]: `aggregation`'s and any others asked for
    new_weights: tuple[str, ...]
    unused_weights: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()  # per token: as the tokenizer decodes it (Analysis.shown)
    pieces: tuple[str, ...] = ()

    task = TOKEN_CLASSIFICATION

    @property
    def predicted(self) -> np.ndarray:  # (seq,) label index per token
        return self.logits.argmax(-1)

    @property
    def tags(self) -> tuple[str, ...]:
        """The argmax tag of every token, special tokens included (what the model outputs there)."""
        return tuple(self.labels[i] for i in self.predicted)

    @property
    def layer_tags(self) -> np.ndarray:  # (layers+1, seq) label index per layer and token
        return self.layer_logits.argmax(-1)

    def grouped(self) -> tuple[Entity, ...]:
        """The entities of self.aggregation (other strategies: `entities(ck, a, strategy)`)."""
        return self.entities[self.aggregation]

    def to_dict(self) -> dict:
        """JSON-safe values (what `analyze --json` prints for a token classifier); numbers rounded to 6 digits."""
        return {
            "task": self.task,
            "checkpoint": self.checkpoint,
            "head": {"kind": self.head_kind},
            "tokens": list(self.tokens),
            "token_text": list(self.shown),
            "special": list(self.special),
            "offsets": [list(o) if o is not None else None for o in self.offsets],
            "word_ids": list(self.word_ids),
            "labels": list(self.labels),
            "token_logits": rounded(self.logits),  # (seq, labels)
            "token_softmax": rounded(self.softmax),
            "tags": list(self.tags),
            "layer_tags": [[self.labels[i] for i in row] for row in self.layer_tags],  # (layers+1, seq)
            "words": [{"word": w.text, "start": w.start, "end": w.end, "tokens": list(w.tokens),
                       "first": w.first, "max": w.max} for w in self.words],
            "aggregation": self.aggregation,
            "entities": [_rounded_entity(e) for e in self.grouped()],
            "truncated_tokens": self.truncated_tokens,
            "new_weights": list(self.new_weights),
            "unused_weights": list(self.unused_weights),
        }

    def _repr_html_(self) -> str:
        rows = [{"token": tok, "tag": tag, "score": float(self.softmax[i].max())}
                for i, (tok, tag) in enumerate(zip(self.shown, self.tags))]
        ents = ", ".join(f"{e.word} ({e.label})" for e in self.grouped()) or "—"
        return (f"<p><b>{html.escape(ents)}</b> ({html.escape(self.checkpoint)}, {html.escape(self.head_kind)} head, "
                f"aggregation {self.aggregation})</p>" + html_table(rows))


def tag_rows(a: TokenAnalysis, strategy: str) -> list[dict]:
    """One row per token, special tokens as the model sees them: its tag and score, its word (pipeline()'s),
    and whether it carries that word's label under `strategy` (first/average/max; never for none/simple)."""
    rows = []
    for i, (tok, tag) in enumerate(zip(a.shown, a.tags)):
        w = a.token_word[i]
        carries = w is not None and strategy in WORD_AGGREGATIONS and i in a.words[w].carriers(strategy)
        rows.append({"position": i, "token": tok, "special": a.special[i], "tag": tag,
                     "score": round(float(a.softmax[i].max()), 4),
                     "word": a.words[w].text if w is not None else "", "carries": carries})
    return rows


def _rounded_entity(e: Entity) -> dict:
    d = e.to_dict()
    d["score"] = round(d["score"], 6)
    return d


def entities(ck: Checkpoint, a: TokenAnalysis, strategy: str) -> tuple[Entity, ...]:
    """The entities pipeline() returns with aggregation_strategy=`strategy`: those `a` holds, else grouped now
    from its scores (no model run); one line where the tokenizer cannot give them (first/average/max need a
    fast tokenizer's offsets, as pipeline() says)."""
    _check_strategy(strategy)
    if strategy in a.entities:
        return a.entities[strategy]
    offsets = a.offsets if a.offsets and a.offsets[0] is not None else None  # None: a slow tokenizer's
    if strategy not in _strategies(offsets is not None):
        raise AnalysisError("analysis_aggregation_slow_tokenizer", strategy=strategy)
    return _group(ck, _pre_entities(ck, a.text, a.token_ids, a.softmax, offsets, a.special_mask), strategy)


def _check_strategy(strategy: str) -> None:
    if strategy not in AGGREGATIONS:
        raise AnalysisError("analysis_unknown_aggregation", strategy=strategy, choices=", ".join(AGGREGATIONS))


@functools.lru_cache(maxsize=1)
def _grouping_class() -> type:
    """transformers' token-classification pipeline without its model run: only `postprocess` and the
    grouping methods it calls are used, and they read nothing but `self.tokenizer` and
    `self.model.config.id2label`. Pipeline.__init__ is skipped on purpose: it would place the shared
    model on a device and set up preprocessing we never use. Built on first use: importing
    transformers.pipelines costs about a second, which every CLI start would otherwise pay."""
    from transformers.pipelines.token_classification import TokenClassificationPipeline

    class _Grouping(TokenClassificationPipeline):
        def __init__(self, model, tokenizer):  # no super().__init__: see above
            self.model, self.tokenizer = model, tokenizer

    return _Grouping


def _strategy(name: str):
    from transformers.pipelines.token_classification import AggregationStrategy

    return AggregationStrategy[name.upper()]


_GROUPINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> _Grouping


def _grouping(ck: Checkpoint):
    g = _GROUPINGS.get(ck.model)
    if g is None or g.tokenizer is not ck.tokenizer:
        g = _GROUPINGS[ck.model] = _grouping_class()(ck.model, ck.tokenizer)
    return g


def _pre_entities(ck: Checkpoint, text: str, ids, scores: np.ndarray, offsets, special_mask) -> list[dict]:
    """The pipeline's gather_pre_entities: each non-special token's scores, span and whether it is a subword.
    Its subword test does not depend on the strategy (only its warning does), so one gather serves all five."""
    with warnings.catch_warnings():  # its "fallback heuristic" UserWarning: TokenAnalysis.words shows the words
        warnings.simplefilter("ignore", UserWarning)
        return _grouping(ck).gather_pre_entities(text, ids, scores, offsets, special_mask, _strategy("first"))


def _group(ck: Checkpoint, pre: list[dict], strategy: str) -> tuple[Entity, ...]:
    """The rest of TokenClassificationPipeline.postprocess for one chunk: its aggregate (word votes and B-/I-
    grouping) and its ignore_labels filter. postprocess itself is not called so that the gather above is
    shared by the five strategies and the words; test_token_head checks the result against pipeline()."""
    found = _grouping(ck).aggregate(pre, _strategy(strategy))
    grouped = strategy != "none"
    key = "entity_group" if grouped else "entity"
    return tuple(Entity(label=str(e[key]), word=str(e["word"]), start=_int(e["start"]), end=_int(e["end"]),
                        score=float(e["score"]), index=None if grouped else int(e["index"]), grouped=grouped)
                 for e in found if e[key] not in IGNORED)


def _int(v) -> int | None:
    return None if v is None else int(v)


def _words(text: str, pre: list[dict], n: int) -> tuple[tuple[TokenWord, ...], tuple[int | None, ...]]:
    """pipeline()'s words (a token and the subwords after it, as aggregate_words groups them) and each token's word."""
    groups: list[list[dict]] = []
    for p in pre:
        if groups and p["is_subword"]:
            groups[-1].append(p)
        else:
            groups.append([p])
    words, token_word = [], [None] * n
    for w, g in enumerate(groups):
        start, end = _int(g[0]["start"]), _int(g[-1]["end"])
        best = max(g, key=lambda p: p["scores"].max())  # the pipeline's "max" vote
        words.append(TokenWord(text=text[start:end] if start is not None else "".join(p["word"] for p in g),
                               start=start, end=end, tokens=tuple(p["index"] for p in g), first=g[0]["index"],
                               max=best["index"]))
        for p in g:
            token_word[p["index"]] = w
    return tuple(words), tuple(token_word)


def _strategies(fast: bool) -> tuple[str, ...]:
    return AGGREGATIONS if fast else ("none", "simple")


def token_pipeline_scores(logits: np.ndarray) -> np.ndarray:  # (seq, labels) -> (seq, labels)
    """The softmax as TokenClassificationPipeline.postprocess computes it, in the logits' own dtype."""
    shifted = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def check_token_model(ck: Checkpoint, head: Head | None = None) -> None:
    """One line unless `ck` is a token classifier (and `head`, when given, gives a row per token)."""
    if ck.task != TOKEN_CLASSIFICATION or (head is not None and not is_per_token(head)):
        raise AnalysisError("analysis_not_token_model", name=ck.name, task=ck.task)


def analyze_tokens(ck: Checkpoint, head: Head, text: str, aggregation: str = DEFAULT_AGGREGATION,
                   strategies: tuple[str, ...] = ()) -> TokenAnalysis:
    """Run the encoder once and the head on every token of `text` (truncated to the model's maximum, as
    Analysis is). Entities are grouped for `aggregation` and for each of `strategies` (AGGREGATIONS: all five,
    as a page that switches between them wants); `entities(ck, a, s)` groups any other later, without the
    model. Read-only on the model."""
    check_token_model(ck, head)
    fast = bool(getattr(ck.tokenizer, "is_fast", False))
    wanted = dict.fromkeys((aggregation, *strategies))
    for s in wanted:
        _check_strategy(s)
        if s not in _strategies(fast):
            raise AnalysisError("analysis_aggregation_slow_tokenizer", strategy=s)
    enc, dropped = encode(ck, text, return_offsets_mapping=fast, return_special_tokens_mask=True)
    with torch.inference_mode():
        out = ck.model.base_model(**encoder_inputs(enc, ck), output_hidden_states=True)
        # The head at every depth in one batched call, as analysis.analyze does: row l is layer l's states.
        states = torch.cat([*out.hidden_states[:-1], out.last_hidden_state])  # (layers+1, seq, hidden)
        rows = states.shape[0]
        logits_t = run_head(head, states, enc["attention_mask"].expand(rows, -1),
                            input_ids=enc["input_ids"].expand(rows, -1))[-1][1]  # (layers+1, seq, labels)
    layer_logits = to_numpy(logits_t).astype(np.float64)
    ids, special, word_ids = token_info(ck, enc)
    special_mask = tuple(bool(m) for m in enc["special_tokens_mask"][0].tolist())
    offsets = tuple(tuple(o) for o in enc["offset_mapping"][0].tolist()) if fast else (None,) * len(ids)
    # pipeline()'s scores: its softmax in the model's float dtype (float32 for half-precision models, as it casts)
    scores = token_pipeline_scores(to_numpy(logits_t[-1]))
    pre = _pre_entities(ck, text, ids, scores, offsets if fast else None, special_mask)
    words, token_word = _words(text, pre, len(ids))
    tokens = tuple(ck.tokenizer.convert_ids_to_tokens(ids))
    return TokenAnalysis(
        checkpoint=ck.name, head_kind=head.kind, text=text, tokens=tokens, token_ids=tuple(ids),
        special=tuple(special), word_ids=word_ids, offsets=offsets, token_word=token_word, words=words,
        truncated_tokens=dropped, max_length=max_length(ck), labels=ck.labels, logits=layer_logits[-1],
        softmax=scores, special_mask=special_mask, layer_logits=layer_logits, aggregation=aggregation,
        entities={s: _group(ck, pre, s) for s in wanted}, new_weights=used_new_weights(ck, head),
        unused_weights=ck.unused_weights, **readable(ck, tokens, special, word_ids, (0,) * len(ids)),
    )


@dataclass(frozen=True, eq=False)
class TokenEncoder:
    """A token classifier's encoder on one text: what its attention views (explain.encoder reads `attentions`,
    `shown`, `special`, `segments`, as of an Analysis) and its vectors' views read."""
    shown: tuple[str, ...]
    special: tuple[bool, ...]
    segments: tuple[int, ...]
    attentions: np.ndarray  # (layers, heads, seq, seq), each row sums to 1
    hidden_states: np.ndarray  # (layers+1, seq, hidden): the embeddings, then each layer; the last is what the head reads


def token_encoder(ck: Checkpoint, text: str) -> TokenEncoder:
    """Run a token classifier's encoder once with its attention weights (eager, as analysis.analyze does).
    Read-only on the model."""
    check_token_model(ck)
    enc, _ = encode(ck, text)
    with torch.inference_mode(), attention_kernel(ck, "eager"):
        out = ck.model.base_model(**encoder_inputs(enc, ck), output_attentions=True, output_hidden_states=True)
    if not out.attentions:
        raise AnalysisError("analysis_no_attention")
    ids, special, word_ids = token_info(ck, enc)
    tokens = tuple(ck.tokenizer.convert_ids_to_tokens(ids))
    states = torch.cat([*out.hidden_states[:-1], out.last_hidden_state])  # (layers+1, seq, hidden)
    return TokenEncoder(shown=readable(ck, tokens, special, word_ids, (0,) * len(ids))["shown"], special=tuple(special),
                        segments=(0,) * len(ids), attentions=to_numpy(torch.stack(out.attentions)[:, 0]),
                        hidden_states=to_numpy(states).astype(np.float32))
