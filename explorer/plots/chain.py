"""The chain from text to label drawn as a diagram: one box per step (its name, its value for this text),
arrows between them, as HTML."""
from __future__ import annotations

from explorer.text.plain import html as escape_html

# Each word is one unbreakable span: a box grows to its longest word and the row wraps between boxes, so no
# word is ever split ("positiv / e", "-2.89 / ,": a browser may also break after a hyphen or before a comma).
# Colours come from the theme (currentColor, transparent fills), so the diagram reads in light and dark.
_STYLE = """<style>
.he-chain {display: flex; flex-wrap: wrap; align-items: stretch; gap: 0.35rem 0.25rem; margin: 0.4rem 0 0.8rem;}
.he-chain .he-step {display: flex; flex-direction: column; gap: 0.25rem; flex: 0 1 auto; min-width: min-content;
  padding: 0.45rem 0.6rem; border: 1px solid rgba(128, 128, 128, 0.55); border-radius: 0.5rem;
  background: rgba(128, 128, 128, 0.08);}
.he-chain .he-step-title {font-weight: 600;}
.he-chain .he-step-value {font-family: "Source Code Pro", monospace; font-size: 0.85em;}
.he-chain .he-word {white-space: nowrap;}
.he-chain .he-link {display: flex; align-items: stretch; gap: 0.25rem;}
.he-chain .he-arrow {align-self: center; opacity: 0.7; font-size: 1.2em; padding: 0 0.1rem;}
.he-chain.he-last > :last-child .he-step, .he-chain.he-last > .he-step:last-child {border-width: 2px;}
</style>"""


def _words(text: str) -> str:
    return " ".join(f'<span class="he-word">{escape_html(w)}</span>' for w in str(text).split())


def chain_html(steps: list[tuple[str, str]]) -> str:
    """`steps` (name, value) as boxes joined by arrows, left to right, wrapping between boxes only (an arrow
    stays with the box it points to, so a row never ends in one); the last box (the label) drawn with a
    heavier border. Every string is plain text."""
    boxes = []
    for i, (name, value) in enumerate(steps):
        box = (f'<div class="he-step" data-step="{i}"><span class="he-step-title">{_words(name)}</span>'
               f'<span class="he-step-value">{_words(value)}</span></div>')
        boxes.append(f'<div class="he-link"><span class="he-arrow" aria-hidden="true">→</span>{box}</div>' if i else box)
    return f'{_STYLE}<div class="he-chain he-last">{"".join(boxes)}</div>'
