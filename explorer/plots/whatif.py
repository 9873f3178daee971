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
    """Text B written over text A: removed words struck through (red), added words marked (green)."""
    out = []
    for r in rows:
        word = (r.a or r.b).text
        if out and any(c.isalnum() for c in word):  # no space before punctuation
            out.append(" ")
        if r.op == "equal":
            out.append(escape_html(r.b.text))
            continue
        if r.a:
            out.append(f"<span style='{_DEL}'>{escape_html(r.a.text)}</span>")
        if r.b:
            out.append(f"<span style='{_INS}'>{escape_html(r.b.text)}</span>")
    body = "".join(out)
    note = f"<div style='font-size:small;color:gray'>{escape_html(legend)}</div>" if legend else ""
    return f"<div style='font-family:sans-serif;line-height:1.9'>{body}{note}</div>"


def row_label(k: int, r: Row) -> str:
    if r.op == "equal":
        return f"{k}: {r.a.text}"
    return f"{k}: {r.a.text if r.a else '∅'} → {r.b.text if r.b else '∅'}"


def word_comparison(rows: tuple[Row, ...], names: tuple[str, str, str], title: str, x_title: str,
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
    return figure(bars, title, x_title, y_title, barmode="group", height=380)
