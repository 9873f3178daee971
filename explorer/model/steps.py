"""One step of a classification head, the one type every head's steps share (the named kinds' tables in
heads.py and the steps an own head reads off the model's run in own_head.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """`op` is one of: first | last | mean | token | pool (pooling: the first, last non-pad or every token, the mean,
    or a pooler the model runs); linear | norm (`slot`: the parameters' module path); dropout; tanh | relu (a named
    kind's activations, dispatched by op); activation (an own head's, by the model's own function, `name` saying
    which); output. `out` is a named kind's linear width: "hidden" or "labels"."""
    name: str  # what the user sees
    op: str
    slot: str = ""
    out: str = ""
