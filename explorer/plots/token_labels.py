"""Renderers for a token classifier's analysis (explorer.model.token_analysis.TokenAnalysis): the token × label
heatmap of probabilities and the text with its entity spans highlighted, one colour per entity type."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from explorer.plots.common import DIVERGING, SEQUENTIAL, colorbar, figure
from explorer.text.plain import html as escape_html

# Light enough for black text on top; one per entity type, in the order the labels name the types.
PALETTE = tuple(qualitative.Pastel)


def entity_type(label: str) -> str:
    """The type a BIO/BIOES tag names (B-PER -> PER), as pipeline()'s grouping reads it; others as they are."""
    return label[2:] if label[:2] in ("B-", "I-", "E-", "S-") else label


def type_colours(labels) -> dict[str, str]:
    """A colour per entity type among `labels` (the checkpoint's, so colours stay put from text to text)."""
    types = list(dict.fromkeys(entity_type(lab) for lab in labels if lab != "O"))
    return {ty: PALETTE[i % len(PALETTE)] for i, ty in enumerate(types)}


def label_heatmap(shown, labels, *, probs: np.ndarray, title: str, token_axis: str, label_axis: str,
                  bar_title: str) -> go.Figure:
    """Labels × tokens, each cell the token's probability of that label (`probs` (seq, labels)); darker is
    more. Tokens are shown as the model sees them, special tokens included, in order (x = position)."""
    probs = np.asarray(probs, dtype=np.float64)
    seq = probs.shape[0]
    cells = go.Heatmap(z=probs.T, x=list(range(seq)), y=list(labels), zmin=0.0, zmax=1.0, colorscale=SEQUENTIAL,
                       colorbar=colorbar(bar_title), customdata=[list(shown)] * len(labels),
                       hovertemplate="%{customdata} (#%{x}), %{y}: %{z:.3f}<extra></extra>")
    return figure([cells], title, x_title=token_axis, y_title=label_axis, height=max(260, 26 * len(labels) + 140),
                  xaxis=dict(tickmode="array", tickvals=list(range(seq)), ticktext=list(shown), tickangle=-45),
                  yaxis=dict(type="category", autorange="reversed"))


def entity_html(text: str, entities, *, labels, legend_title: str, none_text: str) -> str:
    """`text` with each entity's characters (Entity.start:end) in a <mark> coloured by its type (data-entity
    holds the type, the title the label and score), then a legend of the types. Entities without offsets (a
    slow tokenizer) are listed after the text."""
    colours = type_colours(labels)
    parts, at = [], 0
    spans = sorted((e for e in entities if e.start is not None), key=lambda e: e.start)
    for e in spans:
        if e.start < at:  # overlapping spans cannot happen in one chunk; keep the text whole if they do
            continue
        ty = entity_type(e.label)
        parts.append(escape_html(text[at:e.start]))
        parts.append(f'<mark data-entity="{escape_html(ty)}" title="{escape_html(e.label)} {e.score:.3f}" '
                     f'style="background:{colours.get(ty, "#ddd")};padding:1px 3px;border-radius:3px">'
                     f'{escape_html(text[e.start:e.end])}<sub style="font-size:0.7em;margin-left:2px">'
                     f'{escape_html(ty)}</sub></mark>')
        at = e.end
    parts.append(escape_html(text[at:]))
    loose = [e for e in entities if e.start is None]
    if loose:
        parts.append("<br>" + ", ".join(f"{escape_html(e.word)} ({escape_html(e.label)})" for e in loose))
    legend = " ".join(f'<span data-legend="{escape_html(ty)}" style="background:{c};padding:1px 6px;'
                      f'border-radius:3px;margin-right:4px">{escape_html(ty)}</span>' for ty, c in colours.items())
    note = "" if entities else f"<p><i>{escape_html(none_text)}</i></p>"
    return (f"<div class='he-entities' style='line-height:2;font-family:sans-serif'>{''.join(parts)}{note}"
            f"<p style='font-size:small'>{escape_html(legend_title)}: {legend}</p></div>")


def layer_tag_heatmap(shown, labels, *, layer_logits: np.ndarray, title: str, token_axis: str, layer_axis: str,
                  bar_title: str) -> go.Figure:
    """Layers × tokens: the head applied to each layer's hidden states (`layer_logits` (layers+1, seq, labels),
    row 0 the embeddings), each cell the probability it gives the tag the last layer settles on, the tag it
    would give at that depth in the hover. Where a row turns dark, the token's tag has formed."""
    z = np.asarray(layer_logits, dtype=np.float64)
    probs = np.exp(z - z.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    final = probs[-1].argmax(-1)  # (seq,)
    cells = probs[:, np.arange(probs.shape[1]), final]  # (layers+1, seq)
    tags = [[labels[k] for k in row] for row in probs.argmax(-1)]
    seq = cells.shape[1]
    heat = go.Heatmap(z=cells, x=list(range(seq)), y=list(range(cells.shape[0])), zmin=0.0, zmax=1.0,
                      colorscale=SEQUENTIAL, colorbar=colorbar(bar_title), customdata=tags,
                      hovertemplate="#%{x}, %{y}: %{customdata} (%{z:.3f})<extra></extra>")
    return figure([heat], title, x_title=token_axis, y_title=layer_axis, height=max(260, 24 * cells.shape[0] + 160),
                  xaxis=dict(tickmode="array", tickvals=list(range(seq)), ticktext=list(shown), tickangle=-45),
                  yaxis=dict(tickmode="linear", dtick=1))


def label_grid(shown, labels, *, scores: np.ndarray, token: int, title: str, token_axis: str, label_axis: str,
               bar_title: str) -> go.Figure:
    """Labels × tokens: each row one label's attribution at token `token` (LabelGrid.scores (labels, seq)),
    each cell what that input token adds to the label's quantity (blue) or takes from it (red), on one
    colour scale centred on 0 for the whole grid, so rows compare. The explained token is marked on the axis."""
    z = np.asarray(scores, dtype=np.float64)
    seq = z.shape[1]
    top = float(np.abs(z).max()) or 1.0
    ticks = [f"▶{tok}" if i == token else tok for i, tok in enumerate(shown)]
    cells = go.Heatmap(z=z, x=list(range(seq)), y=list(labels), zmin=-top, zmax=top, zmid=0.0, colorscale=DIVERGING,
                       colorbar=colorbar(bar_title), customdata=[list(shown)] * len(labels),
                       hovertemplate="%{customdata} (#%{x}), %{y}: %{z:+.4f}<extra></extra>")
    return figure([cells], title, x_title=token_axis, y_title=label_axis, height=max(260, 26 * len(labels) + 140),
                  xaxis=dict(tickmode="array", tickvals=list(range(seq)), ticktext=ticks, tickangle=-45),
                  yaxis=dict(type="category", autorange="reversed"))
