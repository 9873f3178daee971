"""One step of a classification head, the one type every head's steps share (the named kinds' tables in
heads.py and the steps an own head reads off the model's run in own_head.py), and the one vocabulary of
what a step does (`Op`)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Op(StrEnum):
    """What a step does. A StrEnum (like HF's `ExplicitEnum` choices) so JSON, the CLI and old string
    comparisons read the same values."""
    FIRST = "first"  # pooling: the first token
    LAST = "last"  # pooling: the last non-pad token (HF's rule, pooling.last_index)
    MEAN = "mean"  # pooling: the attention-masked mean
    TOKEN = "token"  # no pooling: every token goes on (a token classifier)
    LINEAR = "linear"  # `slot`: the parameters' module path
    NORM = "norm"  # `slot`: the parameters' module path
    DROPOUT = "dropout"
    TANH = "tanh"  # a named kind's activations, dispatched by op
    RELU = "relu"
    ACTIVATION = "activation"  # an own head's, run by the model's own function; `name` says which


POOLING_OPS = (Op.FIRST, Op.LAST, Op.MEAN, Op.TOKEN)  # a head's first step is one of these


@dataclass(frozen=True)
class Step:
    """`out` is a named kind's linear width: "hidden" or "labels"."""
    name: str  # what the user sees
    op: Op
    slot: str = ""
    out: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", Op(self.op))  # a typo in a step's op fails where the step is made


# The steps both the named kinds (heads.py) and an own head's reading (own_head.py) name alike.
FIRST = Step("first token", Op.FIRST)
LAST = Step("last non-pad token", Op.LAST)
MEAN = Step("mean pool", Op.MEAN)
EVERY_TOKEN = Step("every token", Op.TOKEN)
DROPOUT = Step("dropout", Op.DROPOUT)
