"""Token data in (a tokens/tags CSV or a CoNLL file), label alignment to subwords, and the tag checks.

Token classification labels words, the model labels subword tokens. HF's convention (the token
classification course and run_ner.py): the first subword of each word carries the word's label, every
other subword and every special token gets -100, which CrossEntropyLoss ignores. Everything here reads
words and their tags; `align_labels` is the one place they meet the tokenizer.

The tag checks mirror explorer.data.labels' label report for sentence labels, per word: the scheme
(BIO/IOB2, BIOES) from the tag names, sequences no scheme allows (seqeval's own scheme rules), tags one
side lacks, placeholder names, and a permuted mapping found with labels.agreement_mapping on the
word-level confusion of the data's tags against the checkpoint's predictions.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from dataclasses import dataclass, field

import numpy as np
import torch

from explorer.data.dataset import (LABEL_NAMES, MAX_BYTES, MAX_CELL_WORDS, MAX_ROWS, TEXT_NAMES, DataError, _decode,
                                   _read_bytes, read_csv, sorted_names)
from explorer.model.checkpoints import TOKEN_CLASSIFICATION
from explorer.text.errors import Message

TOKEN_NAMES = ("tokens", "words", "token", "word")
TAG_NAMES = ("tags", "ner_tags", "labels", "tag", "ner", "label", "pos_tags", "chunk_tags")
MAX_WORDS = MAX_CELL_WORDS  # words in one sentence; beyond it is a broken file, not a sentence
IGNORE = -100  # the label id CrossEntropyLoss skips (torch's ignore_index default, HF's convention)
TOKEN_TASK = TOKEN_CLASSIFICATION
_PREFIXED = re.compile(r"^([BIES])-(.+)$")


@dataclass(frozen=True, eq=False)
class TagData:
    """Sentences as words with one tag each."""
    words: tuple[tuple[str, ...], ...]  # (sentences,) each (words,)
    tags: tuple[tuple[str, ...], ...]  # (sentences,) each (words,) tag names
    tag_names: tuple[str, ...]  # id order
    layout: str  # "csv" | "conll"
    tokens_column: str | None = None  # CSV only
    tags_column: str | None = None
    notes: tuple[Message, ...] = ()

    @property
    def ids(self) -> tuple[np.ndarray, ...]:
        """(sentences,) each (words,) int64 tag ids."""
        index = {n: i for i, n in enumerate(self.tag_names)}
        return tuple(np.array([index[t] for t in row], np.int64) for row in self.tags)

    @property
    def n_words(self) -> int:
        return sum(len(w) for w in self.words)


# ---- reading ---------------------------------------------------------------------------------


def is_token_classifier(ck) -> bool:
    """Is `ck` (a Checkpoint) a token classifier? (its task, read off the model's class by the loader)"""
    return ck.task == TOKEN_TASK


def _tag_columns(columns) -> tuple[str, str] | None:
    lower = {str(c).strip().lower(): c for c in columns}
    tok = next((lower[n] for n in TOKEN_NAMES if n in lower), None)
    tag = next((lower[n] for n in TAG_NAMES if n in lower), None)
    return (tok, tag) if tok is not None and tag is not None else None


def _conll_shape(text: str) -> tuple[list[list[str]], int] | None:
    """(whitespace-split fields of each line, the file's field count) when nearly every non-blank line has
    the same count of two or more (token ... tag), as CoNLL files do; prose lines vary, so None."""
    rows = [line.split() for line in text.splitlines()]
    widths = [len(r) for r in rows if r and r[0] != "-DOCSTART-"]
    if not widths:
        return None
    width = max(set(widths), key=widths.count)
    # One odd line in a small file (a token without its tag) is a broken CoNLL file the reader names by line.
    if width < 2 or widths.count(width) < 2 or len(widths) - widths.count(width) > max(1, 0.1 * len(widths)):
        return None
    return rows, width


def layout(source, name: str | None = None, max_bytes: int = MAX_BYTES) -> str:
    """"conll", "tags_csv" (a header naming a tokens and a tags column) or "csv" (anything else: sentence
    data, or a file the tag reader will refuse). Raises DataError for files no reader takes (empty, binary)."""
    data, shown = _read_bytes(source, max_bytes)
    text, _, _ = _decode(data, name or shown)
    header = text.split("\n", 1)[0]
    for delim in (",", "\t", ";", "|"):
        try:
            fields = next(csv.reader(io.StringIO(header), delimiter=delim), [])
        except csv.Error:  # e.g. a cell past the field limit: read_csv words that itself
            continue
        if len(fields) >= 2 and _tag_columns(fields):
            return "tags_csv"
    # A CSV header (text<TAB>label, a delimiter in the first line) is not a CoNLL file's first token and tag.
    named = {f.lower() for f in header.split()} & {*TEXT_NAMES, *LABEL_NAMES}
    if "\n" in text.strip() and not set(header) & {",", ";", "|"} and not named and _conll_shape(text) is not None:
        return "conll"
    return "csv"


def _cell(value, row: int, column: str) -> list[str]:
    """The parts of one tokens or tags cell: a JSON (or Python) list, else whitespace-separated."""
    if not isinstance(value, str) or not value.strip():
        return []
    v = value.strip()
    if v.startswith("[") and v.endswith("]"):
        try:
            parts = json.loads(v)
        except ValueError:  # JSONDecodeError, or a number past Python's 4,300-digit conversion limit
            try:  # a list written by Python (HF datasets' to_csv, pandas) has single quotes
                parts = ast.literal_eval(v)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise DataError("tags_bad_list", row=row, column=column, value=v[:40]) from None
        if not isinstance(parts, (list, tuple)):
            raise DataError("tags_bad_list", row=row, column=column, value=v[:40])
        return [str(p).strip() for p in parts]
    return v.split()


def _read_tag_csv(source, name: str | None, tokens_column: str | None, tags_column: str | None,
                  max_rows: int) -> tuple[list[list[str]], list[list[str]], str, str, tuple]:
    table = read_csv(source, max_rows=max_rows, name=name)
    cols = list(table.frame.columns)
    found = _tag_columns(cols) or (None, None)
    tok, tag = (tokens_column or found[0]), (tags_column or found[1])
    if tok is None or tag is None:
        raise DataError("tags_layout", name=name or "upload", columns=", ".join(cols)[:120])
    for c in (tok, tag):
        if c not in cols:
            raise DataError("data_no_column", column=c, columns=", ".join(cols))
    words, tags = [], []
    for i, (w, t) in enumerate(zip(table.frame[tok], table.frame[tag])):
        words.append(_cell(w, i + 2, tok))
        tags.append(_cell(t, i + 2, tag))
    return words, tags, tok, tag, table.notes


def _read_conll(text: str, name: str) -> tuple[list[list[str]], list[list[str]], list[int]]:
    shape = _conll_shape(text)
    if shape is None:
        raise DataError("tags_layout", name=name, columns="—")
    rows, width = shape
    words, tags, starts, cur_w, cur_t = [], [], [], [], []
    for number, fields in enumerate(rows + [[]], 1):
        if fields and fields[0] != "-DOCSTART-" and len(fields) != width:  # e.g. a token without its tag
            raise DataError("tags_conll_line", line=number, found=len(fields), width=width)
        if not fields or fields[0] == "-DOCSTART-":
            if cur_w:
                words.append(cur_w)
                tags.append(cur_t)
            cur_w, cur_t = [], []
            continue
        if not cur_w:
            starts.append(number)
        cur_w.append(fields[0])
        cur_t.append(fields[-1])  # extra columns (POS, chunk) sit between; the tag is last
    return words, tags, starts


def read_tags(source, tokens_column: str | None = None, tags_column: str | None = None,
              id2label: dict | None = None, name: str | None = None, max_rows: int = MAX_ROWS,
              max_words: int = MAX_WORDS) -> TagData:
    """Words and tags from a tokens/tags CSV or a CoNLL file (path, bytes or upload). `id2label` names
    numeric tags (HF datasets store ner_tags as ids); without it numeric tags are refused. Raises DataError."""
    data, shown = _read_bytes(source, MAX_BYTES)
    name = name or shown
    kind = "tags_csv" if tokens_column or tags_column else layout(data, name)
    notes: tuple = ()
    tok_col = tag_col = None
    if kind == "tags_csv":
        words, tags, tok_col, tag_col, notes = _read_tag_csv(data, name, tokens_column, tags_column, max_rows)
    elif kind == "conll":
        text, _, notes = _decode(data, name)
        words, tags, starts = _read_conll(text, name)
    else:
        raise DataError("tags_layout", name=name, columns=_header(data, name))
    # Where a sentence is, as a line of the file: a CSV row as a spreadsheet numbers it, a CoNLL sentence's first line.
    line = (lambda i: i + 2) if kind == "tags_csv" else (lambda i: starts[i])
    for i, (w, t) in enumerate(zip(words, tags)):
        if not w:
            raise DataError("tags_empty_sentence", line=line(i))
        if len(w) != len(t):
            raise DataError("tags_length", line=line(i), words=len(w), tags=len(t))
        if len(w) > max_words:
            raise DataError("tags_long_sentence", line=line(i), n=f"{len(w):,}", limit=f"{max_words:,}")
    if not words:
        raise DataError("data_no_rows", name=name)
    tags = _name_numbers(tags, id2label)
    names = tuple(sorted_names(t for row in tags for t in row))
    return TagData(words=tuple(map(tuple, words)), tags=tuple(map(tuple, tags)), tag_names=names,
                   layout="csv" if kind == "tags_csv" else "conll", tokens_column=tok_col, tags_column=tag_col,
                   notes=tuple(notes))


def _header(data: bytes, name: str) -> str:
    text, _, _ = _decode(data, name)
    return text.split("\n", 1)[0].strip()[:120] or "—"


def _tag_id(tag: str) -> float:
    """A numeric tag as a number to look up; one too long to be any id is infinity (int() refuses strings
    past 4,300 digits, and a cell of a million digits is bad input, not a bug)."""
    return int(tag) if len(tag) <= 18 else math.inf


def _name_numbers(tags: list[list[str]], id2label: dict | None) -> list[list[str]]:
    """Numeric tags named by `id2label` ({id: name}); without names, one line."""
    flat = {t for row in tags for t in row}
    if not flat or not all(t.lstrip("-").isdigit() for t in flat):
        return tags
    names = {int(k): str(v) for k, v in (id2label or {}).items()}
    if not names or all(re.match(r"^LABEL_\d+$", n) for n in names.values()):
        raise DataError("tags_numbers_no_names", ids=", ".join(t[:20] for t in sorted(flat, key=_tag_id)[:8]))
    unknown = sorted((t for t in flat if _tag_id(t) not in names), key=_tag_id)
    if unknown:
        raise DataError("tags_id_unknown", id=unknown[0][:20], last=max(names))
    return [[names[int(t)] for t in row] for row in tags]


def check_kind(ck, token_data: bool) -> None:
    """A sentence classifier cannot read token data, nor a token classifier sentence data: one line each."""
    token_model = is_token_classifier(ck)
    if token_data and not token_model:
        raise DataError("tags_sequence_checkpoint", name=ck.name)
    if token_model and not token_data:
        raise DataError("tags_token_checkpoint", name=ck.name)


# ---- subwords ----------------------------------------------------------------------------------


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


def _encode(tokenizer, words: list[list[str]], max_length: int, **kw):
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
    enc = _encode(tokenizer, words, max_length)
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
    enc = _encode(tokenizer, list(data.words), max_length)
    tokens = labelled = 0
    for i in range(len(data.words)):
        ids = enc.word_ids(i)
        tokens += len(ids)
        labelled += len(first_subwords(ids))
    return Alignment(words=data.n_words, tokens=tokens, labelled=labelled, ignored=tokens - labelled,
                     truncated=data.n_words - labelled)


def word_logits(model, tokenizer, words: list[list[str]], max_length: int = 128,
                batch_size: int = 32) -> list[np.ndarray]:
    """Per sentence, (words kept, labels) float32 logits of the model's token-classification forward at each
    word's first subword, `batch_size` sentences at a time (padded per batch), read-only. Words cut by
    truncation are left out, so a row may be shorter than its sentence."""
    from explorer.model.checkpoints import forward_inputs

    accepted = forward_inputs(model)  # a tokenizer may return token_type_ids a model does not take
    out = []
    with torch.inference_mode():
        for i in range(0, len(words), batch_size):
            chunk = words[i:i + batch_size]
            enc = _encode(tokenizer, chunk, max_length, padding=True, return_tensors="pt")
            inputs = {k: v.to(model.device) for k, v in enc.items() if k in accepted}
            logits = model(**inputs).logits.float().cpu().numpy()
            for j in range(len(chunk)):  # logits: (batch, seq, labels)
                out.append(logits[j, first_subwords(enc.word_ids(j))])
    return out


# ---- tag checks ----------------------------------------------------------------------------------


def scheme(tag_names) -> str:
    """"BIOES" when an E- or S- tag appears, "IOB2" (BIO) with B-/I- tags, "IO" with I- only, "none" when
    any tag but O has no prefix."""
    prefixes = set()
    for t in tag_names:
        if t == "O":
            continue
        m = _PREFIXED.match(t)
        if not m:
            return "none"
        prefixes.add(m.group(1))
    if prefixes & {"E", "S"}:
        return "BIOES"
    if "B" in prefixes:
        return "IOB2"
    return "IO" if prefixes else "none"


def invalid_sequences(tags, kind: str) -> tuple[int, tuple[dict, ...]]:
    """(count, up to 10 examples {sentence, word, tag, previous}) of tags that neither start nor continue a
    chunk under `kind` (IOB2: I-X after O or after B-Y; BIOES also E-X). seqeval's own scheme classes
    (IOB2, IOBES) decide; its metrics would silently fix such a tag in default mode or drop it in strict."""
    from seqeval.scheme import IOB2, IOBES, Prefix

    rule = {"IOB2": IOB2, "BIOES": IOBES}.get(kind)
    if rule is None:
        return 0, ()
    n, examples = 0, []
    for s, row in enumerate(tags):
        prev = rule("O")
        for w, t in enumerate(row):
            tok = rule(t)
            if tok.prefix in (Prefix.I, Prefix.E) and not tok.is_start(prev) and not tok.is_inside(prev):
                n += 1
                if len(examples) < 10:
                    examples.append({"sentence": s + 1, "word": w + 1, "tag": t, "previous": prev.token})
            prev = tok
    return n, tuple(examples)


@dataclass(frozen=True, eq=False)
class TagReport:
    sentences: int
    words: int
    layout: str
    tokens_column: str | None
    tags_column: str | None
    tags: tuple[tuple[str, int], ...]  # (name, words tagged), most frequent first
    scheme: str
    invalid: int  # tags no scheme rule allows
    invalid_examples: tuple[dict, ...]
    issues: tuple  # labels.Issue
    notes: tuple[Message, ...]
    suggested_mapping: dict[str, str] = field(default_factory=dict)  # data tag -> checkpoint tag
    accuracy_before: float | None = None  # word-level agreement, identity mapping
    accuracy_after: float | None = None  # under the best one-to-one mapping
    confusion: np.ndarray | None = None  # (data tags, checkpoint tags) word counts
    confusion_rows: tuple[str, ...] = ()
    confusion_cols: tuple[str, ...] = ()
    agreement: str = "accuracy"  # what accuracy_before/after measure (as LabelReport's): word accuracy

    @property
    def kinds(self) -> set[str]:
        return {i.kind for i in self.issues}

    def to_json(self) -> dict:
        return {
            "task": TOKEN_TASK, "sentences": self.sentences, "words": self.words, "layout": self.layout,
            "tokens_column": self.tokens_column, "tags_column": self.tags_column,
            "tags": [{"name": n, "count": c} for n, c in self.tags], "scheme": self.scheme,
            "invalid": self.invalid, "invalid_examples": list(self.invalid_examples),
            "issues": [{"kind": i.kind, "message": i.message, **({"detail": i.detail} if i.detail else {})}
                       for i in self.issues],
            "notes": list(self.notes), "suggested_mapping": self.suggested_mapping,
            "accuracy_before": self.accuracy_before, "accuracy_after": self.accuracy_after,
            "confusion": None if self.confusion is None else {
                "rows": list(self.confusion_rows), "cols": list(self.confusion_cols),
                "counts": self.confusion.astype(int).tolist()},
        }


def tag_report(data: TagData, ck=None, max_predict: int = 2000, max_length: int = 128) -> TagReport:
    """Everything worth knowing about token data's tags, alone and (with a token-classifier `ck`) against
    the checkpoint's predictions on up to `max_predict` sentences. Raises DataError for a sentence
    classifier."""
    from explorer.data.labels import PERMUTED_GAIN, Issue, agreement_mapping, checkpoint_issues, name_matches

    counts: dict[str, int] = {}
    for row in data.tags:
        for t in row:
            counts[t] = counts.get(t, 0) + 1
    kind = scheme(data.tag_names)
    n_bad, examples = invalid_sequences(data.tags, kind)
    issues, notes = [], list(data.notes)
    if n_bad:
        e = examples[0]
        issues.append(Issue("invalid_tags", Message("issue_tags_invalid", n=n_bad, scheme=kind, tag=e["tag"],
                                                    previous=e["previous"], sentence=e["sentence"], word=e["word"]),
                            {"examples": list(examples)}))
    report: dict = {}
    if ck is None:
        notes.append(Message("note_tags_first_subword"))
    else:
        check_kind(ck, True)
        notes.append(alignment(ck.tokenizer, data, max_length).note())
        issues += checkpoint_issues(ck)
        generic = any(i.kind == "generic_label_names" for i in issues)
        ck_labels = ck.labels
        renames = {} if generic else name_matches(data.tag_names, ck_labels)
        extra = sorted(set(data.tag_names) - set(ck_labels) - set(renames))
        unused = sorted(set(ck_labels) - set(data.tag_names) - set(renames.values()))
        if not generic and (extra or unused):
            issues.append(Issue("unseen_tags", Message("issue_unseen_labels", csv_only=", ".join(extra) or "—",
                                                       checkpoint_only=", ".join(unused) or "—"),
                                {"csv_only": extra, "checkpoint_only": unused}))
        if not ck.new_weights and len(data.tag_names) >= 2:
            take = list(range(min(max_predict, len(data.words))))
            logits = word_logits(ck.model, ck.tokenizer, [list(data.words[i]) for i in take], max_length)
            truth = [t for i, rows in zip(take, logits) for t in data.tags[i][:len(rows)]]
            pred = np.concatenate([r.argmax(-1) for r in logits]) if logits else np.zeros(0, np.int64)
            check = agreement_mapping(truth, pred, ck_labels, renames)
            moved = {a: b for a, b in check["best"].items() if check["identity"].get(a) != b}
            report.update(accuracy_before=check["before"], accuracy_after=check["after"],
                          confusion=check["confusion"], confusion_rows=check["rows"], confusion_cols=check["cols"])
            if moved and check["after"] >= check["before"] + PERMUTED_GAIN:
                issues.append(Issue("permuted_mapping",
                                    Message("issue_permuted", n=len(moved), name=ck.name,
                                            before=f"{check['before']:.0%}", after=f"{check['after']:.0%}"),
                                    {"moved": moved}))
                report["suggested_mapping"] = check["best"]
    return TagReport(sentences=len(data.words), words=data.n_words, layout=data.layout,
                     tokens_column=data.tokens_column, tags_column=data.tags_column,
                     tags=tuple(sorted(counts.items(), key=lambda kv: -kv[1])), scheme=kind, invalid=n_bad,
                     invalid_examples=examples, issues=tuple(issues), notes=tuple(notes), **report)
