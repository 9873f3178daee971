"""A standalone HTML handout of the current analysis, for students: the guided lesson on paper."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.explain import whatif
from explorer.model.analysis import Analysis
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import POOLING, Head
from explorer.model.problem import prediction_text
from explorer.plots.attention import scale_caption
from explorer.plots.common import wrap_title
from explorer.teach import figures, lesson
from explorer.text.plain import html as escape_html

# The words a student meets in the lesson, in the order they come: handout.term.<key> and handout.means.<key>.
GLOSSARY = ("token", "special", "encoder", "attention", "cls", "pooling", "head", "logit", "softmax", "sigmoid",
            "dropout", "finetuning")
LETTERS = "ABCD"

# On screen the text sits beside its chart; on paper too, each step kept on one page where it fits, the
# review questions starting a page, their answers on the last; plotly's mode bar is not printed.
STYLE = """
body{font-family:sans-serif;max-width:72em;margin:1em auto;padding:0 1em;line-height:1.45}
td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:left}
.step{display:grid;grid-template-columns:minmax(16em,2fr) 3fr;gap:1.5em;align-items:start;
  border-top:1px solid #ccc;padding:1em 0}
.step h2{margin-top:0;font-size:1.25em}
.panel{min-width:0}
.caption{color:#555;font-size:.9em}
dl.glossary dt{font-weight:bold;margin-top:.5em}
dl.glossary dd{margin-left:1.5em}
ol.review li{margin-bottom:.8em}
ol.options{list-style:upper-alpha}
@media print{
  body{max-width:none;margin:0;font-size:10.5pt}
  .step{break-inside:avoid;page-break-inside:avoid;grid-template-columns:2fr 3fr}
  .review-section{break-before:page;page-break-before:always}
  .answers-section{break-before:page;page-break-before:always}
  .modebar,.modebar-container{display:none!important}
  a{color:inherit;text-decoration:none}
}
"""


def handout_strings(catalog: dict[str, str]) -> dict[str, str]:
    """The handout's words from one language's strings: its own (lesson.handout_doc.*) by their last part,
    the names of the pooling steps (step_*), and every other string under its key (the lesson's steps,
    the quiz, the glossary), so nothing in the handout stays in English."""
    doc = {k.rsplit(".", 1)[1]: v for k, v in catalog.items() if k.startswith("lesson.handout_doc.")}
    return dict(catalog) | doc | {f"step_{op}": catalog[f"app.step_{op}"] for op in set(POOLING.values())}


def _t(strings: dict[str, str]):
    """t(key, **fmt) over `strings`; a key it lacks reads as itself (a caller may hand only a few strings)."""
    def t(key: str, **fmt) -> str:
        text = strings.get(key, key)
        return text.format(**fmt) if fmt else text
    return t


def _table(header: list[str], rows) -> str:
    head = "".join(f"<th>{escape_html(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape_html(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def step_panels(a: Analysis, strings: dict[str, str], *, seed: int = 0, counts: dict[str, int] | None = None,
                drops: tuple[tuple[str, ...], np.ndarray] | None = None,
                head_rows: list[dict] | None = None) -> dict[str, list]:
    """Each lesson step's panel for `a`: {step: [figure or HTML string, ...]}. The charts are the lesson's own
    (teach.figures.step_figures, with the same `seed`, `counts` and `drops`); the tables are the lesson's in
    HTML, step "new_head"'s from `head_rows` (the head's Head.parameters_table) where given."""
    t, p = _t(strings), "lesson.panel."
    steps = " → ".join(f"{strings.get('step_' + POOLING.get(name, ''), name)} ({values.shape[-1]})"
                       for name, values in a.steps)
    out: dict[str, list] = {
        "tokenizer": [_table([t(p + "token"), t(p + "id"), t(p + "special")],
                             [(s, i, "✓" if sp else "") for s, i, sp in zip(a.shown, a.token_ids, a.special)])],
        "head": [f"<p><b>{escape_html(strings.get('head', 'head'))}:</b> {escape_html(steps)}</p>"],
        "new_head": [f"<p>{escape_html(t(p + 'has_new', names=', '.join(a.new_weights)))}</p>" if a.new_weights
                     else f"<p>{escape_html(t(p + 'all_pretrained'))}</p>"],
    }
    if head_rows:
        table = figures.new_head_table(head_rows, t)
        out["new_head"].insert(0, _table(list(table[0]), [list(row.values()) for row in table]))
    for step in lesson.STEPS:
        out.setdefault(step, []).extend(
            fig for _, fig in figures.step_figures(step, a, t, seed=seed, counts=counts, drops=drops))
    out["encoder"].append(f'<p class="caption">{escape_html(scale_caption(True, t))}</p>')
    return out


def for_paper(fig: go.Figure) -> go.Figure:
    """A copy of a lesson chart laid out for the handout's narrower panel: the title wrapped (plotly never wraps
    one) and the axes making room for their labels. Its data, title words and colours stay the lesson's."""
    out = go.Figure(fig)
    out.update_layout(title=dict(text="<br>".join(wrap_title(out.layout.title.text or "", 60))))
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    return out


def _glossary(t) -> str:
    items = "".join(f"<dt>{escape_html(t('handout.term.' + k))}</dt><dd>{escape_html(t('handout.means.' + k))}</dd>"
                    for k in GLOSSARY)
    return f'<section class="glossary-section"><h2>{escape_html(t("handout.glossary"))}</h2><dl class="glossary">{items}</dl></section>'


def _review(t, seed: int = 0) -> str:
    """The quiz's questions, their options in one fixed shuffled order (lesson.option_order: the right
    answer's place tells nothing), then the answers with why."""
    questions, answers = [], []
    for n, q in enumerate(lesson.QUIZ):
        order = lesson.option_order(n, seed)
        opts = "".join(f"<li>{escape_html(t(f'quiz.{q.key}.o{o}'))}</li>" for o in order)
        questions.append(f"<li><p>{escape_html(t(f'quiz.{q.key}.question'))}</p><ol class=\"options\">{opts}</ol></li>")
        answers.append(f"<li><b>{LETTERS[order.index(q.correct)]}</b>: {escape_html(t(f'quiz.{q.key}.why'))}</li>")
    return (f'<section class="review-section"><h2>{escape_html(t("handout.review"))}</h2>'
            f'<ol class="review">{"".join(questions)}</ol></section>'
            f'<section class="answers-section"><h2>{escape_html(t("handout.answers"))}</h2>'
            f'<ol class="answers">{"".join(answers)}</ol></section>')


def handout_html(a: Analysis, more_figures: list[go.Figure], strings: dict[str, str], **panels) -> str:
    """The lesson on paper, in one HTML file that works offline (plotly.js is inlined once): the text and its
    prediction, then each step's text beside its panel (step_panels, given `panels`: seed, counts, drops, head_rows),
    `more_figures` after them, a glossary, the review questions and their answers, and a print stylesheet."""
    s = {k: escape_html(v) for k, v in strings.items() if isinstance(v, str)}
    t = _t(strings)
    plotted = [0]

    def block(item) -> str:
        if isinstance(item, str):
            return item
        plotted[0] += 1
        return for_paper(item).to_html(full_html=False, include_plotlyjs=plotted[0] == 1, config={"responsive": True})

    panels = step_panels(a, strings, **panels)
    sections = "".join(
        f'<section class="step" id="step-{i + 1}"><div class="words"><h2>{escape_html(t(f"lesson.{step}.title"))}</h2>'
        f'<p>{escape_html(t(f"lesson.{step}.body"))}</p></div>'
        f'<div class="panel">{"".join(block(x) for x in panels.get(step, []))}</div></section>'
        for i, step in enumerate(lesson.STEPS))
    more = "".join(block(fig) for fig in more_figures)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{s.get('title', 'title')}</title>
<style>{STYLE}</style>
</head><body>
<h1>{s.get('title', 'title')}</h1>
<p><b>{s.get('text', 'text')}:</b> {escape_html(a.text)}</p>
<p><b>{s.get('checkpoint', 'checkpoint')}:</b> {escape_html(a.checkpoint)} · <b>{s.get('prediction', 'prediction')}:</b> {escape_html(prediction_text(a.predicted, strings.get("none", "none")))}</p>
<p><b>{s.get('tokens', 'tokens')}:</b> {' '.join('<code>' + escape_html(tok) + '</code>' for tok in a.shown)}</p>
{sections}
{more}
{_glossary(t)}
{_review(t)}
</body></html>
"""


def handout_with_model(ck: Checkpoint, head: Head, a: Analysis, more_figures: list[go.Figure],
                       strings: dict[str, str], *, seed: int = 0,
                       drops: tuple[tuple[str, ...], np.ndarray] | None = None) -> str:
    """The handout with the steps that need the model: the head's layers (step 6), fine-tuning's parameter counts,
    and step 10's leave-one-out chart from `drops` (the lesson's own result) or, without it, leave-one-out run here
    as the lesson runs it by default (its first whatif.LOO_MAX_WORDS words on a long text): the slow part, so
    callers run it only when a student asks for the file."""
    if drops is None:
        capped = whatif.loo_is_costly(a) and whatif.loo_words(a) > whatif.LOO_MAX_WORDS
        drops = whatif.leave_one_out(ck, head, a=a, limit=whatif.LOO_MAX_WORDS if capped else None)
    return handout_html(a, more_figures, strings, seed=seed, counts=lesson.parameter_counts(ck.model, head),
                        drops=drops, head_rows=head.parameters_table())
