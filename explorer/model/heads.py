"""Classification heads: the checkpoint's own (derived from the model), or a named kind from a table.

Each head is a sequence of named steps applied to the encoder's last hidden state. "own" runs the
checkpoint's real classification code (see own_head), for any architecture whose classifier reads
the base model's hidden states. The named kinds are what a teacher picks; any encoder takes any of
them. A named kind whose steps are those of the checkpoint's own head reuses its modules (and so its
pretrained or fine-tuned weights); otherwise its linear layers are new, initialised from a seed so a
whole class sees the same numbers. On a causal (decoder-only) encoder, where token 0 sees only
itself, a named kind's first-token step reads the last non-pad token, as the model's own head does.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
import weakref
from dataclasses import dataclass, field

import torch
from torch import nn

from explorer.model import own_head
from explorer.model.checkpoints import TOKEN_CLASSIFICATION, Checkpoint, forward_inputs, init_seeded, max_length
from explorer.model import pooling
from explorer.model.sampling import sample_dropout
from explorer.model.steps import DROPOUT, EVERY_TOKEN, FIRST, LAST, MEAN, Op, Step
from explorer.runtime import precision
from explorer.text.errors import ExplorerError


TANH = Step("tanh", Op.TANH)
CLASSIFIER = Step("classifier", Op.LINEAR, "classifier", "labels")
# Every head's first step pools the tokens into one vector (own heads too: own_head names them alike).
POOLING = {s.name: s.op for s in (FIRST, LAST, MEAN)}  # step name -> first | last | mean

HEAD_KINDS: dict[str, tuple[Step, ...]] = {
    "bert": (FIRST, Step("pooler.dense", Op.LINEAR, "pooler", "hidden"), TANH, DROPOUT, CLASSIFIER),
    "distilbert": (
        FIRST, Step("pre_classifier", Op.LINEAR, "pre_classifier", "hidden"), Step("relu", Op.RELU), DROPOUT, CLASSIFIER,
    ),
    "roberta": (
        FIRST, DROPOUT, Step("dense", Op.LINEAR, "dense", "hidden"), TANH, DROPOUT,
        Step("out_proj", Op.LINEAR, "out_proj", "labels"),
    ),
    "cls-linear": (FIRST, DROPOUT, CLASSIFIER),
    "mean-linear": (MEAN, DROPOUT, CLASSIFIER),
}
KINDS = ("own",) + tuple(HEAD_KINDS)
# A token classifier's head reads every token: no pooling step, logits (batch, seq, labels). A named kind for it
# must keep the sequence axis, so only per-token layers make sense; HEAD_KINDS all pool (a pooler reads one
# token, mean-linear averages them all) and give one row for the whole text, not one per token.
TOKEN_HEAD_KINDS: dict[str, tuple[Step, ...]] = {
    "linear-per-token": (EVERY_TOKEN, DROPOUT, CLASSIFIER),
}
ALL_KINDS = KINDS + tuple(TOKEN_HEAD_KINDS)  # what build_head and the CLI accept; each fits one task
POOLING[EVERY_TOKEN.name] = EVERY_TOKEN.op

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
    own: own_head.OwnHead | None = None  # set for "own": the derived head that runs the model's code
    pad_id: int = -1  # last-token pooling: the pad id that ends a row (-1: none, the row's last token)

    def parameters_table(self) -> list[dict]:
        """One row per linear layer: shape, parameter count, and whether it is pretrained."""
        rows = []
        for step in self.steps:
            if step.op != Op.LINEAR:
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
        return tuple(f"{s.name}.{p}" for s in self.steps if s.op == Op.LINEAR and s.slot not in self.pretrained
                     for p in ("weight", "bias"))


def dropout_prob(config) -> float:
    """The head's dropout as each architecture's config names it."""
    for attr in ("classifier_dropout", "seq_classif_dropout", "hidden_dropout_prob", "dropout"):
        value = getattr(config, attr, None)
        if value is not None:
            return float(value)
    return 0.1


def _new_linear(n_in: int, n_out: int, config, gen: torch.Generator) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    init_seeded(layer.weight, layer.bias, config, gen)
    layer.requires_grad_(False)
    return layer.eval()


_DERIVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> OwnHead
_LOCK = threading.Lock()
PROBE_TEXT = "Head Explorer reads the head of this classifier."


def derive(ck: Checkpoint) -> own_head.OwnHead:
    """The checkpoint's own head, derived once per model; HeadError where it is not an encoder plus a head."""
    with _LOCK:
        if ck.model in _DERIVED:
            return _DERIVED[ck.model]
    max_length(ck)  # a model without a length limit is refused first
    enc = ck.tokenizer(PROBE_TEXT, return_tensors="pt")
    names = forward_inputs(ck.model)
    try:
        own = own_head.OwnHead(ck.model, {k: v.to(ck.model.device) for k, v in enc.items() if k in names})
    except own_head.Unsupported as err:
        raise HeadError(err.args[0], model_type=ck.model_type) from None
    with _LOCK:
        _DERIVED[ck.model] = own
    return own


def _signature(steps) -> tuple[str, ...]:
    return tuple(s.name if s.op == Op.ACTIVATION else s.op for s in steps)


def kinds_for(ck: Checkpoint) -> tuple[str, ...]:
    """The head kinds that fit the checkpoint's task: "own", then the pooling kinds for a sentence
    classifier or the per-token kinds for a token classifier."""
    return ("own",) + tuple(TOKEN_HEAD_KINDS if ck.task == TOKEN_CLASSIFICATION else HEAD_KINDS)


def is_per_token(head: Head) -> bool:
    """The head gives logits for every token (batch, seq, labels), not one row for the text."""
    return head.steps[0].op == Op.TOKEN


def native_kind(ck: Checkpoint) -> str | None:
    """The named kind whose steps are the checkpoint's own head's, if any (bert for BERT, ...)."""
    own = derive(ck)
    for kind, steps in {**HEAD_KINDS, **TOKEN_HEAD_KINDS}.items():
        if _signature(own.steps) == _signature(steps):
            return kind
    return None


def output_layer(ck: Checkpoint) -> str:
    """Module path of the own head's last linear layer, the one that outputs the labels."""
    return [s.slot for s in derive(ck).steps if s.op == Op.LINEAR][-1]


def build_head(ck: Checkpoint, kind: str = "own", seed: int = 0) -> Head:
    """Make a head of `kind` for checkpoint `ck`. Never modifies the checkpoint."""
    cfg = ck.model.config
    table = {**HEAD_KINDS, **TOKEN_HEAD_KINDS}
    if kind != "own" and kind not in table:
        raise HeadError("head_unknown_kind", kind=kind, choices=", ".join(ALL_KINDS))
    if kind != "own" and kind not in kinds_for(ck):
        token = ck.task == TOKEN_CLASSIFICATION
        raise HeadError("head_pools_for_token_model" if token else "head_per_token_for_text_model", kind=kind,
                        name=ck.name, choices=", ".join(kinds_for(ck)))
    own = derive(ck)
    native = native_kind(ck)
    hidden = int(getattr(cfg, "hidden_size", None) or cfg.dim)
    own_linear = [s.slot for s in own.steps if s.op == Op.LINEAR]
    modules = dict(ck.model.named_modules())
    pretrained = set()
    layers: dict[str, nn.Linear] = {}
    if kind == "own" or kind == native:
        slots = own_linear
        steps = tuple(Step(s.name, s.op, s.slot, "labels" if s.slot == own_linear[-1] else "hidden")
                      for s in own.steps) if kind == "own" else table[kind]
        if kind != "own":
            slots = [s.slot for s in steps if s.op == Op.LINEAR]
        for slot, path in zip(slots, own_linear):
            layers[slot] = modules[path]
            if not any(n.startswith(path + ".") for n in ck.new_weights):
                pretrained.add(slot)
    else:
        steps = table[kind]
        if own.steps[0].op == Op.LAST:  # causal encoder: token 0 has seen nothing else
            steps = tuple(LAST if s.op == Op.FIRST else s for s in steps)
        sizes = {"hidden": hidden, "labels": cfg.num_labels}
        gen = torch.Generator().manual_seed(seed)
        for step in steps:
            if step.op == Op.LINEAR:
                # Drawn on the CPU from the seed, then moved: every device starts from the same numbers.
                # Drawn in float32, then cast: a bfloat16 head starts from the float32 head's numbers, rounded.
                layers[step.slot] = _new_linear(hidden, sizes[step.out], cfg, gen).to(
                    ck.model.device, dtype=precision.model_dtype(ck.model))
    return Head(
        kind=(native or ck.model_type) if kind == "own" else kind, requested=kind, steps=steps, layers=layers,
        pretrained=frozenset(pretrained), dropout_p=dropout_prob(cfg), labels=ck.labels, seed=seed,
        hidden_size=hidden, own=own if kind == "own" else None, pad_id=own.pad_id,
    )


def head_at_precision(ck: Checkpoint, head: Head, dtype) -> tuple[Checkpoint, Head]:
    """(checkpoint, head) running in `dtype` (explorer/runtime/precision.py): themselves when the model already
    does, else the checkpoint with its cached cast model and the head on it: layers the checkpoint supplied are
    the cast model's own modules, new ones cast copies of the head's (same numbers, rounded)."""
    cast = precision.at_precision(ck, dtype)
    if cast is ck:
        return ck, head
    old = {id(m): path for path, m in ck.model.named_modules()}
    new = dict(cast.model.named_modules())
    layers = {slot: new[old[id(layer)]] if id(layer) in old else copy.deepcopy(layer).to(dtype=cast.model.dtype)
              for slot, layer in head.layers.items()}
    return cast, dataclasses.replace(head, layers=layers, own=derive(cast) if head.own is not None else None)


def pooling_op(step_names) -> str:
    """How a head with these steps (names, in order) makes one vector of the tokens: first | last | mean."""
    return POOLING[step_names[0]]


def head_device(head: Head) -> torch.device:
    """Where the head's layers are (its checkpoint's device): where inputs to run_head go."""
    return next(iter(head.layers.values())).weight.device


def run_head(
    head: Head,
    hidden: torch.Tensor,  # (batch, seq, hidden)
    mask: torch.Tensor,  # (batch, seq) 1 for real tokens
    dropout_p: float | None = None,
    generator: torch.Generator | None = None,
    input_ids: torch.Tensor | None = None,  # (batch, seq) the real ids, where last-token pooling needs them
) -> list[tuple[str, torch.Tensor]]:
    """Apply the head step by step; returns [(step name, (batch, features))], or for a per-token head
    (is_per_token) [(step name, (batch, seq, features))].

    With `generator`, dropout is sampled functionally (mask * 1/(1-p)) so no module is
    ever put in train mode; without it, dropout is the identity, as in eval mode.
    Without `input_ids`, padding is read from `mask`.
    """
    if head.own is not None:
        try:
            values = head.own.run(hidden, mask, input_ids, dropout_p, generator)
        except own_head.Unsupported as err:
            raise HeadError(err.args[0], model_type=head.kind) from None
        return [(s.name, v) for s, v in zip(head.steps, values)]
    p = head.dropout_p if dropout_p is None else dropout_p
    x = hidden
    out = []
    for step in head.steps:
        if step.op == Op.FIRST:
            x = pooling.first(x)
        elif step.op == Op.LAST:
            x = pooling.last(x, mask, head.pad_id, input_ids)
        elif step.op == Op.MEAN:
            x = pooling.mean(x, mask)
        elif step.op == Op.TOKEN:  # every token's state goes on as it is: (batch, seq, hidden)
            pass
        elif step.op == Op.LINEAR:
            layer = head.layers[step.slot]
            x = torch.nn.functional.linear(x, layer.weight, layer.bias)
        elif step.op == Op.TANH:
            x = torch.tanh(x)
        elif step.op == Op.RELU:
            x = torch.relu(x)
        elif step.op == Op.DROPOUT and generator is not None:
            x = sample_dropout(x, p, generator)
        out.append((step.name, x))
    return out


def used_new_weights(ck: Checkpoint, head: Head) -> tuple[str, ...]:
    """Every newly initialised (random) parameter an analysis with `head` uses, by HF's full name:
    the encoder's missing weights, plus the head's (the checkpoint's own, or the new layers of a
    named kind)."""
    own_paths = tuple(s.slot + "." for s in derive(ck).steps if s.slot)
    encoder = tuple(n for n in ck.new_weights if not n.startswith(own_paths))
    if head.own is not None or head.requested == native_kind(ck):
        return encoder + tuple(n for n in ck.new_weights if n.startswith(own_paths))
    return encoder + head.new_parameters
