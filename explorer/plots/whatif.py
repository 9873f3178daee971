"""What-if renderers: the word-level diff as marked-up text, and both texts' word attributions with
their difference."""
from __future__ import annotations


import plotly.graph_objects as go

from explorer.text.plain import html as escape_html, plotly as esc

from explorer.explain.whatif import Row
from .common import figure

_DEL = "background:#fde0dd;color:#99000d;text-decoration:line-through"  # in A only
_INS = "background:#e5f5e0;color:#00441b"  # in B only


def diff_html(rows: tuple[Row, ...], legend: str = "") -> str:
    """Text B written over text A: each changed run's removed words struck through (red), then its
    added words (green). Words are separated by spaces, also across a change ("love hate", never
    "lovehate" when the page's text is read or copied), but not before punctuation."""
    out: list[tuple[str, str]] = []  # (first word, its markup)
    k = 0
    while k < len(rows):
        if rows[k].op == "equal":
            out.append((rows[k].b.text, escape_html(rows[k].b.text)))
            k += 1
            continue
        run = []
        while k < len(rows) and rows[k].op != "equal":
            run.append(rows[k])
            k += 1
        for side, style in (("a", _DEL), ("b", _INS)):
            texts = [getattr(r, side).text for r in run if getattr(r, side)]
            if texts:
                out.append((texts[0], f"<span style='{style}'>{_joined(texts)}</span>"))
    body = _joined([w for w, _ in out], [m for _, m in out])
    note = f"<div style='font-size:small;color:gray'>{escape_html(legend)}</div>" if legend else ""
    return f"<div style='font-family:sans-serif;line-height:1.9'>{body}{note}</div>"


def _joined(words: list[str], markup: list[str] | None = None) -> str:
    """`markup` (escaped `words` by default) joined by spaces, with none before punctuation."""
    markup = markup if markup is not None else [escape_html(w) for w in words]
    return "".join((" " if k and any(c.isalnum() for c in w) else "") + m
                   for k, (w, m) in enumerate(zip(words, markup)))


def row_label(k: int, r: Row) -> str:
    if r.op == "equal":
        return f"{k}: {r.a.text}"
    return f"{k}: {r.a.text if r.a else '∅'} → {r.b.text if r.b else '∅'}"


def word_comparison(rows: tuple[Row, ...], names: tuple[str, str, str], *, title: str, x_title: str,
                    y_title: str) -> go.Figure:
    """Grouped bars per aligned word: A's score, B's score, and B − A (a missing word counts 0)."""
    x = [row_label(k, r) for k, r in enumerate(rows)]
    series = (
        [r.a.score if r.a else None for r in rows],
        [r.b.score if r.b else None for r in rows],
        [r.difference for r in rows],
    )
    bars = [go.Bar(x=x, y=ys, name=name, hovertemplate=f"{esc(name)}<br>%{{x}}: %{{y:+.4f}}<extra></extra>")
            for name, ys in zip(names, series)]
    return figure(bars, title, x_title=x_title, y_title=y_title, barmode="group", height=380)
