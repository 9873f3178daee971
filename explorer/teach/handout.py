"""A one-page standalone HTML handout of the current analysis, for students."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from explorer.explain import attribution
from explorer.model.analysis import Analysis
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head
from explorer.model.problem import ProblemType, prediction_text
from explorer.plots.attribution import sorted_bars


def handout_html(a: Analysis, figures: list[go.Figure], strings: dict[str, str]) -> str:
    """Text, prediction, head diagram and figures in one HTML file that works offline
    (plotly.js is inlined once)."""
    s = {k: html.escape(v) for k, v in strings.items()}
    rows = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{logit:.4f}</td><td>{p:.4f}</td></tr>"
        for label, logit, p in zip(a.labels, a.logits, a.scores))
    own = ProblemType(a.problem_type).output  # the function the model's loss reads: softmax, sigmoid or none
    steps = " → ".join(html.escape(f"{name} ({values.shape[-1]})") for name, values in a.steps)
    figs = "".join(fig.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figures))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{s['title']}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:1em auto}}td,th{{padding:.2em .8em;border-bottom:1px solid #ddd}}</style>
</head><body>
<h1>{s['title']}</h1>
<p><b>{s['text']}:</b> {html.escape(a.text)}</p>
<p><b>{s['checkpoint']}:</b> {html.escape(a.checkpoint)} · <b>{s['head']}:</b> {html.escape(a.head_kind)} ·
<b>{s['prediction']}:</b> {html.escape(prediction_text(a.predicted, strings.get("none", "none")))}</p>
<p><b>{s['tokens']}:</b> {' '.join('<code>' + html.escape(t) + '</code>' for t in a.shown)}</p>
<p><b>{s['head']}:</b> {steps}</p>
<table><tr><th>{s['label']}</th><th>logit</th><th>{"value" if own == "none" else own}</th></tr>{rows}</table>
{figs}
</body></html>
"""


def handout_with_attributions(ck: Checkpoint, head: Head, a: Analysis, figures: list[go.Figure],
                              strings: dict[str, str]) -> str:
    """The handout plus a word-level Integrated Gradients chart for the predicted label
    (the slow part, so callers run it only when a student asks for the file)."""
    att = attribution.attribute(ck, head, a.text)
    words, scores = att.words()
    fig = sorted_bars(words, scores, strings["attr_title"].format(label=att.target_label),
                      strings["attr_axis"], strings["word_axis"])
    return handout_html(a, [*figures, fig], strings)
