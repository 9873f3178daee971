"""Classification heads, from a table.

Each head kind is a sequence of named steps applied to the encoder's last hidden state.
Any encoder takes any head. When the kind is the checkpoint's own architecture, the head
reuses the checkpoint's modules (and so its pretrained or fine-tuned weights); otherwise
its linear layers are new, initialised from a seed so a whole class sees the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from .checkpoints import Checkpoint
from .errors import ExplorerError


@dataclass(frozen=True)
class Step:
    name: str  # what the user sees
    op: str  # first | mean | linear | tanh | relu | dropout
    slot: str = ""  # for linear: which parameter slot
    out: str = ""  # for linear: "hidden" or "labels"


FIRST = Step("first token", "first")
MEAN = Step("mean pool", "mean")
DROPOUT = Step("dropout", "dropout")
TANH = Step("tanh", "tanh")
CLASSIFIER = Step("classifier", "linear", "classifier", "labels")

HEAD_KINDS: dict[str, tuple[Step, ...]] = {
    "bert": (FIRST, Step("pooler.dense", "linear", "pooler", "hidden"), TANH, DROPOUT, CLASSIFIER),
    "distilbert": (
        FIRST, Step("pre_classifier", "linear", "pre_classifier", "hidden"), Step("relu", "relu"), DROPOUT, CLASSIFIER,
    ),
    "roberta": (
        FIRST, DROPOUT, Step("dense", "linear", "dense", "hidden"), TANH, DROPOUT,
        Step("out_proj", "linear", "out_proj", "labels"),
    ),
    "cls-linear": (FIRST, DROPOUT, CLASSIFIER),
    "mean-linear": (MEAN, DROPOUT, CLASSIFIER),
}
KINDS = ("own",) + tuple(HEAD_KINDS)

_ROBERTA = ("roberta", {"dense": "classifier.dense", "out_proj": "classifier.out_proj"})
# model_type -> (its own head kind, slot -> module path inside XxxForSequenceClassification)
NATIVE: dict[str, tuple[str, dict[str, str]]] = {
    "bert": ("bert", {"pooler": "bert.pooler.dense", "classifier": "classifier"}),
    "distilbert": ("distilbert", {"pre_classifier": "pre_classifier", "classifier": "classifier"}),
    "roberta": _ROBERTA,
    "xlm-roberta": _ROBERTA,
    "camembert": _ROBERTA,
}


class HeadError(ExplorerError):
    """A head cannot be built; the message is one line, meant for the user."""


@dataclass(frozen=True, eq=False)
class Head:
    kind: str  # resolved kind; "own" resolves to the architecture's kind
    requested: str
    steps: tuple[Step, ...]
    layers: dict[str, nn.Linear]  # slot -> layer; shared with the checkpoint when reused
    pretrained: frozenset[str]  # slots whose weights the checkpoint supplied
    dropout_p: float
    labels: tuple[str, ...]
    seed: int = 0
    hidden_size: int = field(default=0)

    def parameters_table(self) -> list[dict]:
        """One row per linear layer: shape, parameter count, and whether it is pretrained."""
        rows = []
        for step in self.steps:
            if step.op != "linear":
                continue
            layer = self.layers[step.slot]
            rows.append({
                "name": step.name,
                "shape": f"{layer.in_features}×{layer.out_features}+{layer.out_features}",
                "params": layer.in_features * layer.out_features + layer.out_features,
                "pretrained": step.slot in self.pretrained,
            })
        return rows

    @property
    def new_parameters(self) -> tuple[str, ...]:
        return tuple(f"{s.name}.{p}" for s in self.steps if s.op == "linear" and s.slot not in self.pretrained
                     for p in ("weight", "bias"))


def dropout_prob(config) -> float:
    """The head's dropout as each architecture's config names it."""
    for attr in ("classifier_dropout", "seq_classif_dropout", "hidden_dropout_prob", "dropout"):
        value = getattr(config, attr, None)
        if value is not None:
            return float(value)
    return 0.1


def _new_linear(n_in: int, n_out: int, std: float, gen: torch.Generator) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(n_out, n_in, generator=gen) * std)
        layer.bias.zero_()
    layer.requires_grad_(False)
    return layer.eval()


def build_head(ck: Checkpoint, kind: str = "own", seed: int = 0) -> Head:
    """Make a head of `kind` for checkpoint `ck`. Never modifies the checkpoint."""
    cfg = ck.model.config
    native_kind, paths = NATIVE.get(cfg.model_type, (None, {}))
    if kind == "own":
        if native_kind is None:
            raise HeadError("head_no_entry", model_type=cfg.model_type)
        resolved = native_kind
    elif kind in HEAD_KINDS:
        resolved = kind
    else:
        raise HeadError("head_unknown_kind", kind=kind, choices=", ".join(KINDS))
    reuse = resolved == native_kind
    hidden = cfg.hidden_size if hasattr(cfg, "hidden_size") else cfg.dim
    sizes = {"hidden": hidden, "labels": cfg.num_labels}
    gen = torch.Generator().manual_seed(seed)
    std = getattr(cfg, "initializer_range", 0.02)
    layers: dict[str, nn.Linear] = {}
    pretrained = set()
    for step in HEAD_KINDS[resolved]:
        if step.op != "linear":
            continue
        if reuse:
            layer = ck.model.get_submodule(paths[step.slot])
            layers[step.slot] = layer
            prefix = paths[step.slot] + "."
            if not any(n.startswith(prefix) for n in ck.new_weights):
                pretrained.add(step.slot)
        else:
            layers[step.slot] = _new_linear(hidden, sizes[step.out], std, gen)
    return Head(
        kind=resolved, requested=kind, steps=HEAD_KINDS[resolved], layers=layers,
        pretrained=frozenset(pretrained), dropout_p=dropout_prob(cfg), labels=ck.labels, seed=seed,
        hidden_size=hidden,
    )


def run_head(
    head: Head,
    hidden: torch.Tensor,  # (batch, seq, hidden)
    mask: torch.Tensor,  # (batch, seq) 1 for real tokens
    dropout_p: float | None = None,
    generator: torch.Generator | None = None,
) -> list[tuple[str, torch.Tensor]]:
    """Apply the head step by step; returns [(step name, (batch, features))].

    With `generator`, dropout is sampled functionally (mask * 1/(1-p)) so no module is
    ever put in train mode; without it, dropout is the identity, as in eval mode.
    """
    p = head.dropout_p if dropout_p is None else dropout_p
    x = hidden
    out = []
    for step in head.steps:
        if step.op == "first":
            x = x[:, 0]
        elif step.op == "mean":
            m = mask.unsqueeze(-1).to(x.dtype)
            x = (x * m).sum(1) / m.sum(1).clamp(min=1)
        elif step.op == "linear":
            layer = head.layers[step.slot]
            x = torch.nn.functional.linear(x, layer.weight, layer.bias)
        elif step.op == "tanh":
            x = torch.tanh(x)
        elif step.op == "relu":
            x = torch.relu(x)
        elif step.op == "dropout" and generator is not None and p > 0:
            keep = torch.rand(x.shape, generator=generator) >= p
            x = x * keep / (1.0 - p) if p < 1 else torch.zeros_like(x)
        out.append((step.name, x))
    return out
