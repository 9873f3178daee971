"""What every public result shares: `to_dict()` (JSON-safe), `to_json()`, and a notebook display.

A result class defines `to_dict()` and `_repr_html_()`; this mixin adds `to_json()`. `HTML` is the
one type for views that are pages rather than plotly figures (the head view, highlighted text):
it displays itself in a notebook and `save(path)` writes it as one standalone file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.text.plain import html as escape_html


def json_safe(value):
    """numpy arrays and scalars as lists and numbers, tuples as lists, recursively; the rest as is."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class JsonResult:
    """Mixin for result dataclasses: `to_json()` is `to_dict()` as one JSON object."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def to_json(self, **dumps) -> str:
        """`to_dict()` as JSON text; `dumps` goes to json.dumps (e.g. indent=2)."""
        return json.dumps(json_safe(self.to_dict()), **dumps)


def rounded(x):
    """An array (or None) as nested lists of floats rounded to 6 digits: what JSON output carries."""
    return None if x is None else np.round(np.asarray(x, dtype=np.float64), 6).tolist()


def html_table(rows: list[dict], caption: str = "") -> str:
    """An HTML table of `rows` (one dict per row, keys as columns), every cell escaped."""
    cols = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{escape_html(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape_html(_cell(row.get(c, '')))}</td>" for c in cols) + "</tr>"
                   for row in rows)
    cap = f"<caption style='text-align:left'>{escape_html(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value) -> str:
    return f"{value:.4f}" if isinstance(value, (float, np.floating)) else str(value)


@dataclass(frozen=True)
class HTML(JsonResult):
    """A standalone HTML page (its scripts inlined, nothing fetched from the network)."""
    page: str
    title: str = ""
    height: int = 600  # pixels the notebook display gives it

    def save(self, path) -> Path:
        """Write the page to `path` (UTF-8); returns the path."""
        path = Path(path)
        path.write_text(self.page, encoding="utf-8")
        return path

    def to_dict(self) -> dict:
        return {"title": self.title, "html": self.page}

    def _repr_html_(self) -> str:
        # An iframe keeps the page's own <html>, styles and scripts apart from the notebook's.
        return (f'<iframe srcdoc="{escape_html(self.page)}" style="width:100%;border:0" '
                f'height="{self.height}" title="{escape_html(self.title)}"></iframe>')
