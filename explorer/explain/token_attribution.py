"""Attributions at one token of a token classifier: every label at that token, as a small grid.

Each row is attribution.attribute with `target_token` set (lig by default: completeness within its
tolerance per label), so every cell has the same definition, baseline and check as a single attribution.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.explain.attribution import Attribution, attribute
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head
from explorer.model.token_analysis import WORD_AGGREGATIONS, Entity, TokenAnalysis
from explorer.results import JsonResult, html_table, rounded
from explorer.runtime.jobs import span


@dataclass(frozen=True, eq=False)
class LabelGrid(JsonResult):
    """Attributions of every label's quantity at token `token` to every token of the text."""
    token: int  # the explained token's position (special tokens counted, as Analysis.tokens lists them)
    labels: tuple[str, ...]
    rows: tuple[Attribution, ...]  # one per label, in id2label order

    @property
    def scores(self) -> np.ndarray:  # (labels, seq)
        return np.stack([r.scores for r in self.rows])

    @property
    def shown(self) -> tuple[str, ...]:
        return self.rows[0].shown

    @property
    def errors(self) -> tuple[float | None, ...]:  # per label: lig's completeness error (None for other methods)
        return tuple(r.error for r in self.rows)

    def to_dict(self) -> dict:
        return {"token": self.token, "labels": list(self.labels), "tokens": list(self.rows[0].tokens),
                "method": self.rows[0].method, "quantity": self.rows[0].quantity, "scores": rounded(self.scores),
                "errors": [None if e is None else round(e, 6) for e in self.errors]}

    def _repr_html_(self) -> str:
        rows = [{"label": lab, **{f"{i}:{tok}": float(s) for i, (tok, s) in enumerate(zip(self.shown, r.scores))}}
                for lab, r in zip(self.labels, self.rows)]
        return html_table(rows)


def every_label(ck: Checkpoint, head: Head, *, text: str, token: int, method: str = "lig", progress=None,
                **options) -> LabelGrid:
    """The grid labels × tokens: for each label, the attribution of its logit (or `quantity` in options) at
    `token` to the tokens of `text`. `options` go to attribution.attribute (quantity, baseline, ...);
    `progress(fraction, message)` hears the whole grid, one label after another."""
    n = len(ck.labels)
    rows = tuple(attribute(ck, head, text=text, method=method, target=k, target_token=token,
                           progress=span(progress, k / n, (k + 1) / n), **options)  # label k: the k-th n-th of the bar
                 for k in range(n))
    return LabelGrid(token=token, labels=ck.labels, rows=rows)


def entity_token(a: TokenAnalysis, entity: Entity, *, strategy: str) -> int:
    """The token that stands for `entity` when its attribution is asked for: the token pipeline() reports
    ("none"), or, for grouped entities, the entity's first word's carrier under a word strategy (the first
    subword for first and average, the highest-scoring one for max) and else its first token."""
    if entity.index is not None:
        return entity.index
    for w in a.words:
        if entity.start is not None and w.start == entity.start:
            return w.carriers(strategy)[0] if strategy in WORD_AGGREGATIONS else w.first
    at = entity.start or 0  # a group starting inside a word (simple): the token holding its first character
    inside = [i for i, o in enumerate(a.offsets)
              if o is not None and not a.special[i] and o[0] <= at < max(o[1], o[0] + 1)]
    return inside[0] if inside else next(i for i, sp in enumerate(a.special) if not sp)
