"""A one-page standalone HTML handout of the current analysis, for students."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from explorer.explain import attribution
from explorer.model.analysis import Analysis
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import POOLING, Head
from explorer.model.problem import ProblemType, prediction_text
from explorer.plots.attribution import sorted_bars
from explorer.plots.common import wrap_title
from explorer.text.plain import html as escape_html


def handout_strings(catalog: dict[str, str]) -> dict[str, str]:
    """The handout's words from one language's strings: its own (lesson.handout_doc.*) and the
    names of the pooling steps (app.step_*), so no head step stays in English."""
    doc = {k.rsplit(".", 1)[1]: v for k, v in catalog.items() if k.startswith("lesson.handout_doc.")}
    return doc | {f"step_{op}": catalog[f"app.step_{op}"] for op in set(POOLING.values())}


def handout_html(a: Analysis, figures: list[go.Figure], strings: dict[str, str]) -> str:
    """Text, prediction, head diagram and figures in one HTML file that works offline
    (plotly.js is inlined once)."""
    s = {k: escape_html(v) for k, v in strings.items()}
    rows = "".join(
        f"<tr><td>{escape_html(label)}</td><td>{logit:.4f}</td><td>{p:.4f}</td></tr>"
        for label, logit, p in zip(a.labels, a.logits, a.scores))
    own = ProblemType(a.problem_type).output  # the function the model's loss reads: softmax, sigmoid or none
    # the selected head's own steps (its pooling and its real modules), not the architecture's name
    steps = " → ".join(escape_html(f"{strings.get('step_' + POOLING.get(name, ''), name)} ({values.shape[-1]})")
                       for name, values in a.steps)
    figs = "".join(fig.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figures))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{s['title']}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:1em auto}}td,th{{padding:.2em .8em;border-bottom:1px solid #ddd}}</style>
</head><body>
<h1>{s['title']}</h1>
<p><b>{s['text']}:</b> {escape_html(a.text)}</p>
<p><b>{s['checkpoint']}:</b> {escape_html(a.checkpoint)} · <b>{s['prediction']}:</b> {escape_html(prediction_text(a.predicted, strings.get("none", "none")))}</p>
<p><b>{s['tokens']}:</b> {' '.join('<code>' + escape_html(t) + '</code>' for t in a.shown)}</p>
<p><b>{s['head']}:</b> {steps}</p>
<table><tr><th>{s['label']}</th><th>logit</th><th>{s.get("value", "value") if own == "none" else own}</th></tr>{rows}</table>
{figs}
</body></html>
"""


def handout_with_attributions(ck: Checkpoint, head: Head, a: Analysis, figures: list[go.Figure],
                              strings: dict[str, str]) -> str:
    """The handout plus a word-level Integrated Gradients chart for the predicted label
    (the slow part, so callers run it only when a student asks for the file)."""
    return handout_html(a, [*figures, attribution_figure(attribution.attribute(ck, head, a.text), strings)], strings)


def attribution_figure(att: attribution.Attribution, strings: dict[str, str]) -> go.Figure:
    """The handout's word chart: a page wide figure whose title wraps and whose word labels and
    axis title get the room they need."""
    words, scores = _words(att)
    fig = sorted_bars(words, scores, strings["attr_title"].format(label=att.target_label),
                      strings["attr_axis"], strings["word_axis"])
    fig.update_layout(title=dict(text="<br>".join(wrap_title(fig.layout.title.text, 70))), margin=dict(l=20, r=20, t=80))
    fig.update_yaxes(automargin=True, title=dict(standoff=12))
    return fig


def _words(att: attribution.Attribution) -> tuple[tuple[str, ...], np.ndarray]:
    """The words and their summed scores, without [CLS], [SEP] and the other special tokens: the chart
    is titled "words". Word ids are kept per text, so text A's last word never merges with B's first."""
    keep = [i for i, special in enumerate(att.special) if not special]
    seg = att.segments or (0,) * len(att.tokens)
    ids = [None if att.word_ids[i] is None else (seg[i], att.word_ids[i]) for i in keep]
    return attribution.merge_words([att.tokens[i] for i in keep], ids, att.scores[keep],
                                   [att.pieces[i] for i in keep] if att.pieces else ())

