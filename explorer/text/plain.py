"""User text kept plain text on every surface, one escaping rule per surface, all of them here.

User text is anything a visitor or a checkpoint supplies: texts, tokens and words (a byte-level
vocabulary can hold any string), label names, column, file and checkpoint names. Each surface reads
some characters as markup, so each gets the one rule that makes those characters literal:

- Markdown (st.markdown, captions, st.info/warning/error, metric labels and values, headings and their
  anchors): `markdown` backslash-escapes Markdown's characters and breaks GFM's autolinks; `markdown_code`
  makes a code span.
- plotly text (titles, tick labels, hover, annotations, legend names): plotly.js reads a subset of HTML
  there (<a href>, <span style>, <b>, <br>...) and shows the entities &lt; &gt; &amp; as the characters,
  so `plotly` turns < > & into those entities. `figure_spec` applies it to every string of a figure
  except its templates, which the code writes (user text interpolated into one goes through `plotly`).
- HTML (reports, the handout, the head view page): `html` is html.escape.
- CSV downloads: comma-separated, every cell quoted (`csv_bytes`); `csv_frame`/`csv_bytes` put a ' before a string cell that a spreadsheet would read as
  a formula (OWASP's rule: a leading = + - @ tab or carriage return). Only strings, and not a string that
  is a number written out ("-0.5"): a number is data, and a spreadsheet reads it as the number it is.
"""
from __future__ import annotations

import csv
import html as _html
import re

import numpy as np
import pandas as pd

# Characters that start Markdown (and Streamlit's :color[...] / :emoji:) anywhere in a line, and the
# list or heading markers that only count at its start.
# `_` inside a word and `:` before anything but a letter are literal already (CommonMark, Streamlit's
# :color[...] and :emoji: forms), so LABEL_0 and "error: x" stay as typed. `&` is escaped too, or &lt;
# would show as <.
_MARKDOWN = re.compile(r"([\\`*\[\]<>!~|$#&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=[A-Za-z]))")
_LINE_START = re.compile(r"^(\s*|\s*\d+)((?<=\d)[.)]|(?<!\d)[-+=])", re.M)
# GFM links a bare http://…, www.… or x@y.z found in the text after escapes are resolved (remark-gfm's
# autolink literals), so no backslash stops it: an invisible WORD JOINER inside "://", "www." and before
# "@" does (measured in Chromium: tests/test_browser_plain.py). It stays in text copied from the page.
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def markdown(text: object) -> str:
    """`text` as literal text inside Markdown: `![x](http://…)` shows as typed and fetches nothing,
    no link, image, heading, list or emphasis is made from it. Line breaks stay line breaks."""
    out = _AUTOLINK.sub(WORD_JOINER, str(text))
    out = _LINE_START.sub(lambda m: m[1] + "\\" + m[2], _MARKDOWN.sub(r"\\\1", out))
    return out.replace("\n", "  \n")


def markdown_code(text: object) -> str:
    """`text` as a Markdown code span: fenced by more backticks than it holds in a row, so nothing in
    it is read as Markdown (CommonMark strips the one space each side)."""
    s = str(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in re.findall("`+", s)), default=0) + 1)
    return f"{fence} {s} {fence}"


def plotly(text: object) -> str:
    """`text` as literal text in a plotly title, tick label, hover, annotation or legend name."""
    return _html.escape(str(text), quote=False)


def html(text: object) -> str:
    """`text` as literal text in an HTML page or attribute."""
    return _html.escape(str(text), quote=True)


def _plotly_array(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "U":
        return np.char.replace(np.char.replace(np.char.replace(a, "&", "&amp;"), "<", "&lt;"), ">", "&gt;")
    if a.dtype.kind == "O":
        out = np.empty_like(a)
        out.ravel()[:] = [figure_spec(v) for v in a.ravel()]  # ravel of empty_like is a view: C-contiguous
        return out
    return a  # numbers: nothing to escape


def figure_spec(spec, key: str = ""):
    """A copy of a plotly figure or trace spec (dicts, lists, arrays, plotly objects) with every string
    escaped by `plotly`, except the values of template keys (hovertemplate, texttemplate...): those are
    code, whose placeholders plotly fills with the escaped data. Numbers and numeric arrays pass as they are."""
    if isinstance(spec, str):
        return spec if key.endswith("template") else plotly(spec)
    if isinstance(spec, dict):
        return {k: figure_spec(v, k) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        if key.endswith("template"):  # a per-point template array
            return spec
        return type(spec)(figure_spec(v, key) for v in spec)
    if isinstance(spec, np.ndarray):
        return _plotly_array(spec)
    if hasattr(spec, "to_plotly_json"):  # a plotly object (go.Bar, ...): its spec, as plotly would send it
        return figure_spec(spec.to_plotly_json(), key)
    return spec


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# A cell that is a number written out (-0.5, +3, -1e-05) is data: spreadsheets read it as that number,
# and the app reads every CSV as strings, so a regression label "-0.5" must survive a round trip.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value):
    """A CSV cell that no spreadsheet reads as a formula: a string starting with = + - @ tab or CR
    gets a leading ' (OWASP's rule), unless it is a number written out. Anything else (numbers, other
    strings, missing values) is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with `csv_cell` applied to its string cells and its column names (a copy)."""
    out = df.copy()
    for i in range(out.shape[1]):  # by position: column names may repeat
        col = out.iloc[:, i]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            out.isetitem(i, col.map(csv_cell, na_action="ignore"))
    out.columns = [csv_cell(c) for c in df.columns]
    return out


def csv_bytes(df: pd.DataFrame, raw: bool = False, **to_csv) -> bytes:
    """`df` as UTF-8 CSV bytes (`to_csv` passed to DataFrame.to_csv, index off unless given), every
    string cell guarded by `csv_cell` unless `raw` (the CLI's --raw-csv). Always comma-separated with
    every cell quoted, whatever the upload's delimiter: a `;` file's cell `nice film,=cmd|…` written
    unquoted with `;` is the formula cell `=cmd|…` to a spreadsheet that splits on commas, while a
    quoted cell stays one cell whichever delimiter a spreadsheet splits on."""
    to_csv.setdefault("index", False)
    to_csv.update(sep=",", quoting=csv.QUOTE_ALL)
    return (df if raw else csv_frame(df)).to_csv(**to_csv).encode("utf-8")
