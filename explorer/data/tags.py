"""Token data in: a tokens/tags CSV or a CoNLL file read into TagData (words and their tags per sentence).

Token classification labels words; everything here reads words and their tags. Where they meet the
tokenizer's subwords is explorer/data/subwords.py; the tag checks are explorer/data/tag_report.py.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from dataclasses import dataclass

import numpy as np

from explorer.data.dataset import (LABEL_NAMES, MAX_BYTES, MAX_CELL_WORDS, MAX_ROWS, TEXT_NAMES, DataError,
                                   decode_text, read_bytes, read_csv, sorted_names)
from explorer.text.errors import Message

TOKEN_NAMES = ("tokens", "words", "token", "word")
TAG_NAMES = ("tags", "ner_tags", "labels", "tag", "ner", "label", "pos_tags", "chunk_tags")
MAX_WORDS = MAX_CELL_WORDS  # words in one sentence; beyond it is a broken file, not a sentence


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
    data, shown = read_bytes(source, max_bytes)
    text, _, _ = decode_text(data, name or shown)
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
    data, shown = read_bytes(source, MAX_BYTES)
    name = name or shown
    kind = "tags_csv" if tokens_column or tags_column else layout(data, name)
    notes: tuple = ()
    tok_col = tag_col = None
    if kind == "tags_csv":
        words, tags, tok_col, tag_col, notes = _read_tag_csv(data, name, tokens_column, tags_column, max_rows)
    elif kind == "conll":
        text, _, notes = decode_text(data, name)
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
    text, _, _ = decode_text(data, name)
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
