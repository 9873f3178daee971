"""A recorded run of torch calls along a data path, run again on a new input without the code around it.

The own head runs the model's real classification code on a private copy of the model. On small
models that code's Python (decorators, config reads, output dataclasses, the recording
TorchFunctionMode) costs more than the head's arithmetic. A `Program` keeps only the torch calls
that read the hidden states, in order, with every other argument (weights, constant indices) as it
was, and makes those calls again on new hidden states: the same functions on the same arguments,
so the same numbers, bit for bit. own_head builds one only where a second real run (another batch
size, length and padding, dropout sampled) proves the replay equal to the real code in every value.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from explorer.model.sampling import sample_dropout

DROPOUTS = {nn.functional.dropout, torch.dropout, torch.nn.functional.alpha_dropout}


class NotReplayable(Exception):
    """The recorded calls cannot be made again on their own."""


def tensors(obj, out: list | None = None) -> list[torch.Tensor]:
    """The tensors in nested tuples, lists and dicts (ModelOutputs are dicts), in order. Hand-rolled:
    it runs on every torch call the head makes, and pytree's flatten costs several times more."""
    out = [] if out is None else out
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            tensors(o, out)
    return out


def dropout_call(func, args, kwargs, dropout_p: float | None, generator: torch.Generator | None):
    """One call of the head's code, its dropout sampled from `generator` when there is one."""
    if func in DROPOUTS and generator is not None:
        p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        return sample_dropout(args[0], p if dropout_p is None else dropout_p, generator)
    return func(*args, **kwargs)


@dataclass(frozen=True)
class _Ref:
    """A tensor of the run: output `call` (0: the input), its `pos`-th tensor."""
    call: int
    pos: int


INDEX = object()  # stands for an index argument given to each replay (the rows' last non-pad tokens)


def _template(obj, where: dict, constants: list):
    if isinstance(obj, torch.Tensor):
        if id(obj) in where:
            return where[id(obj)]
        constants.append(obj)
        return obj
    if type(obj) in (tuple, list):
        return type(obj)(_template(o, where, constants) for o in obj)
    if type(obj) is dict:
        return {k: _template(v, where, constants) for k, v in obj.items()}
    if tensors(obj):  # a tensor inside another container: not worth following
        raise NotReplayable
    return obj


def _fill(obj, outs: list, index):
    if type(obj) is _Ref:
        return outs[obj.call][obj.pos]
    if obj is INDEX:
        return index
    if type(obj) in (tuple, list):
        return type(obj)(_fill(o, outs, index) for o in obj)
    if type(obj) is dict:
        return {k: _fill(v, outs, index) for k, v in obj.items()}
    return obj


class Program:
    """The calls of one recorded run. Immutable; replays share nothing but read-only constants."""

    def __init__(self, events, root: torch.Tensor, output: torch.Tensor, weights: frozenset[int],
                 indexed: int | None = None):
        """`events`: [(func, args, kwargs, output, the input on the path)] in call order, as
        own_head records them from `root`; `output`: the run's result; `weights`: ids of the model's
        parameters and buffers, the only tensors a replay may take as they are (being the model's own,
        they are current when a fine-tuning step changes them in place); `indexed`: the call whose
        index argument (args[1]) each replay supplies."""
        where = {id(root): _Ref(0, 0)}
        calls = []
        for k, (func, args, kwargs, out, x) in enumerate(events, start=1):
            if k - 1 == indexed:
                args = (args[0], INDEX, *args[2:])
            constants: list[torch.Tensor] = []
            call = (func, _template(args, where, constants), _template(kwargs, where, constants), where[id(x)])
            outs = tensors(out)
            if any(id(c) not in weights for c in constants):
                raise NotReplayable  # a tensor made by the run (from the ids, the mask, the weights)
            if any(o is c for o in outs for c in constants):
                raise NotReplayable  # written in place into a weight: replays would share it
            for p, t in enumerate(outs):  # a call may hand back its input (eval dropout): the latest wins
                where[id(t)] = _Ref(k, p)
            calls.append(call)
        if id(output) not in where:
            raise NotReplayable  # the result is not one of the recorded calls' outputs
        self.calls = tuple(calls)
        self.output = where[id(output)]

    def replay(self, x: torch.Tensor, index=None, dropout_p: float | None = None,
               generator: torch.Generator | None = None) -> tuple[list[tuple], torch.Tensor]:
        """(events as recorded, the result) of the calls made on `x`."""
        outs = [[x]]
        events = []
        for func, args, kwargs, ref in self.calls:
            a, kw = _fill(args, outs, index), _fill(kwargs, outs, index)
            out = dropout_call(func, a, kw, dropout_p, generator)
            outs.append(tensors(out))
            events.append((func, a, kw, out, outs[ref.call][ref.pos]))
        return events, outs[self.output.call][self.output.pos]
