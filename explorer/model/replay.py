"""Record the torch calls a head's code makes on some hidden states, and make them again without the code.

The own head (own_head.py) runs the model's real classification code on a private copy of the model.
On small models that code's Python (decorators, config reads, output dataclasses, the recording
mode itself) costs more than the head's arithmetic, so later runs replay the recorded calls instead.

The contract:

- **What is recorded.** `Recorder` is a `torch.overrides.TorchFunctionMode` (thread-local, so
  concurrent sessions never see each other's runs). Every torch function call that reads a tensor
  on the *path* (the given hidden states, or any tensor a recorded call returned) becomes one
  `Call`, in call order. Calls that return no tensor (`x.shape`, `x.item()`) are not calls on the
  path but *reads*: their names are kept, since a value read into Python may steer the code.
- **What a Program holds.** `Program` turns the calls into `RecordedOp`s whose arguments are named
  references: `Input` (the hidden states), `Output` (a tensor an earlier op returned), `Param` (one
  of the model's parameters or buffers, the tensor object itself, so a fine-tuning step that
  changes it in place is seen by the next replay), `Index` (the index a last-token pooling reads,
  given to each replay) and `Const` (any other value, kept as it was). It raises `NotReplayable`
  when a call takes a tensor that is none of these (one the code made from the ids, the mask or the
  weights: a replay would reuse a stale copy), writes into a weight, hides a tensor in another kind
  of container, or when the result is not one of the calls' outputs.
- **When a replay is allowed.** own_head builds a Program only where the code read nothing but
  metadata (`METADATA` in own_head) and where a second real run at build time (another batch size,
  length and padding, with and without dropout sampled) makes the same calls with the same outputs
  as the replay, bit for bit; and it replays only while the model is in eval mode, as recorded.
- **When the real code runs.** Everywhere else: no Program (values read into Python, a call that
  cannot be replayed, a check that failed), a model in train mode, or a model that is gone.
- **Why bit for bit.** A replay calls the same torch functions, in the same order, on the same
  arguments: the same weight tensors, the same constants, tensors computed the same way. Dropout is
  drawn from the caller's generator in the same order as the real run draws it (`dropout_call`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

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


def argument(args: tuple, kwargs: dict, pos: int, name: str, default=None):
    """A torch function's argument by its name, given by keyword or at position `pos`."""
    if name in kwargs:
        return kwargs[name]
    return args[pos] if len(args) > pos else default


def dropout_call(func: Callable, args: tuple, kwargs: dict, dropout_p: float | None,
                 generator: torch.Generator | None):
    """One call of the head's code, its dropout sampled from `generator` when there is one, at
    `dropout_p` when given, else at the p the code asked for."""
    if func in DROPOUTS and generator is not None:
        p = argument(args, kwargs, 1, "p", 0.5)
        return sample_dropout(args[0], p if dropout_p is None else dropout_p, generator)
    return func(*args, **kwargs)


# ---- what a run is made of --------------------------------------------------------------------

@dataclass(frozen=True, eq=False, slots=True)
class Call:
    """One torch call on the path, as it ran (recorded, or made again by a replay)."""
    func: Callable
    args: tuple
    kwargs: dict
    result: object  # what the function returned: a tensor, or a tuple of them
    outputs: tuple[torch.Tensor, ...]  # the tensors in `result`, in order
    read: torch.Tensor  # the (first) tensor on the path among its arguments

    def argument(self, pos: int, name: str, default=None):
        return argument(self.args, self.kwargs, pos, name, default)


@dataclass(frozen=True, eq=False, slots=True)
class Run:
    """The calls one run of the head made on the path, the run's logits, and what it read into Python."""
    calls: tuple[Call, ...]
    logits: torch.Tensor
    reads: frozenset[str] = frozenset()


class Recorder(TorchFunctionMode):
    """Follows the data flow from `hidden` through the code run inside it, recording each call on it
    (see the module docstring). Dropout on the path is sampled as `dropout_call` says."""

    def __init__(self, hidden: torch.Tensor, dropout_p: float | None, generator: torch.Generator | None):
        super().__init__()
        # The path, keyed by id: `==` on tensors compares values. Holding each tensor as the value
        # keeps it alive, so no later tensor can take its id while recording.
        self.path: dict[int, torch.Tensor] = {id(hidden): hidden}
        self.calls: list[Call] = []
        self.reads: set[str] = set()  # what calls on the path gave other than tensors (shape, item, ...)
        self.dropout_p, self.generator = dropout_p, generator

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and id(first) in self.path:  # the common case, checked first
            read = first
        else:
            read = next((t for t in tensors((args, kwargs)) if id(t) in self.path), None)
        if read is None:
            return func(*args, **kwargs)
        result = dropout_call(func, args, kwargs, self.dropout_p, self.generator)
        outputs = tensors(result)
        if outputs:
            self.path.update((id(t), t) for t in outputs)
            self.calls.append(Call(func, args, kwargs, result, tuple(outputs), read))
        else:  # a descriptor's __get__ (x.shape) is named by its descriptor
            name = getattr(func, "__name__", "")
            self.reads.add(getattr(getattr(func, "__self__", None), "__name__", name) if name == "__get__" else name)
        return result

    def run(self, logits: torch.Tensor) -> Run:
        return Run(tuple(self.calls), logits, frozenset(self.reads))


# ---- the references a RecordedOp's arguments are made of ---------------------------------------

@dataclass(frozen=True, slots=True)
class _Replaying:
    """What the references resolve against during one replay."""
    hidden: torch.Tensor
    outputs: list[tuple[torch.Tensor, ...]]  # each op's outputs so far, in op order
    index: object


@dataclass(frozen=True, slots=True)
class Input:
    """The hidden states the replay is given."""

    def resolve(self, run: _Replaying) -> torch.Tensor:
        return run.hidden


@dataclass(frozen=True, slots=True)
class Output:
    """The `pos`-th tensor that op number `op` returned."""
    op: int
    pos: int

    def resolve(self, run: _Replaying) -> torch.Tensor:
        return run.outputs[self.op][self.pos]


@dataclass(frozen=True, eq=False, slots=True)
class Param:
    """One of the model's parameters or buffers, read as it is at each replay."""
    tensor: torch.Tensor

    def resolve(self, run: _Replaying) -> torch.Tensor:
        return self.tensor


@dataclass(frozen=True, slots=True)
class Index:
    """The index argument given to each replay (the rows' last non-pad tokens)."""

    def resolve(self, run: _Replaying):
        return run.index


@dataclass(frozen=True, eq=False, slots=True)
class Const:
    """Any other argument (an int, a slice, a dtype, None), as the recorded call had it."""
    value: object

    def resolve(self, run: _Replaying):
        return self.value


Ref = Input | Output | Param | Index | Const


@dataclass(frozen=True, eq=False, slots=True)
class RecordedOp:
    """One recorded call as a Program makes it again: `args` and `kwargs` hold Refs where the
    recorded call had values (in the same tuples, lists and dicts); `read` names its tensor on the path."""
    func: Callable
    args: tuple
    kwargs: dict
    read: Input | Output


def _fill(arg, run: _Replaying):
    kind = type(arg)
    if kind is tuple or kind is list:
        return kind(_fill(a, run) for a in arg)
    if kind is dict:
        return {k: _fill(v, run) for k, v in arg.items()}
    return arg.resolve(run)


class _Refs:
    """Turns a recorded call's arguments into Refs, knowing which tensors are on the path and which
    are the model's own."""

    def __init__(self, hidden: torch.Tensor, weights: Iterable[torch.Tensor]):
        # Keyed by id (`==` on tensors compares values); the recorded calls keep every tensor alive.
        self.path: dict[int, Input | Output] = {id(hidden): Input()}
        self.weights = {id(t) for t in weights}

    def of(self, obj, params: list[torch.Tensor]):
        """`obj` with each value replaced by its Ref; the weights it takes are added to `params`."""
        if isinstance(obj, torch.Tensor):
            if id(obj) in self.path:
                return self.path[id(obj)]
            if id(obj) not in self.weights:
                raise NotReplayable  # a tensor made by the run (from the ids, the mask, the weights)
            params.append(obj)
            return Param(obj)
        if type(obj) in (tuple, list):
            return type(obj)(self.of(o, params) for o in obj)
        if type(obj) is dict:
            return {k: self.of(v, params) for k, v in obj.items()}
        if tensors(obj):  # a tensor inside another container: not worth following
            raise NotReplayable
        return Const(obj)


class Program:
    """The calls of one recorded run, made again on new hidden states. Immutable; replays share
    nothing but the model's weights, which they only read."""

    def __init__(self, run: Run, hidden: torch.Tensor, weights: Iterable[torch.Tensor],
                 indexed: int | None = None):
        """`run`: recorded by a Recorder from `hidden`; `weights`: the model's parameters and buffers,
        the only tensors a replay may take as they are; `indexed`: the call whose index argument
        (the second) each replay supplies, or None."""
        refs = _Refs(hidden, weights)
        ops = []
        for k, call in enumerate(run.calls):
            params: list[torch.Tensor] = []
            if k == indexed:  # x[index]: the index is the replay's own, not the recorded one
                args = (refs.of(call.args[0], params), Index(), *refs.of(call.args[2:], params))
            else:
                args = refs.of(call.args, params)
            op = RecordedOp(call.func, args, refs.of(call.kwargs, params), refs.path[id(call.read)])
            if any(o is p for o in call.outputs for p in params):
                raise NotReplayable  # written in place into a weight: replays would share it
            for pos, t in enumerate(call.outputs):  # a call may hand back its input (eval dropout): the latest wins
                refs.path[id(t)] = Output(k, pos)
            ops.append(op)
        if id(run.logits) not in refs.path:
            raise NotReplayable  # the result is not one of the recorded calls' outputs
        self.ops: tuple[RecordedOp, ...] = tuple(ops)
        self.result: Input | Output = refs.path[id(run.logits)]

    def replay(self, hidden: torch.Tensor, index=None, dropout_p: float | None = None,
               generator: torch.Generator | None = None) -> Run:
        """The ops made on `hidden`, as the Run the real code would give; `index` fills `Index`."""
        run = _Replaying(hidden, [], index)
        calls = []
        for op in self.ops:
            args, kwargs = _fill(op.args, run), _fill(op.kwargs, run)
            result = dropout_call(op.func, args, kwargs, dropout_p, generator)
            outputs = tuple(tensors(result))
            calls.append(Call(op.func, args, kwargs, result, outputs, op.read.resolve(run)))
            run.outputs.append(outputs)
        return Run(tuple(calls), self.result.resolve(run))


def same_calls(a: Sequence[Call], b: Sequence[Call]) -> bool:
    """The same functions in the same order, with the same outputs, bit for bit."""
    return len(a) == len(b) and all(
        x.func is y.func and len(x.outputs) == len(y.outputs)
        and all(u.shape == v.shape and u.dtype == v.dtype and torch.equal(u, v) for u, v in zip(x.outputs, y.outputs))
        for x, y in zip(a, b))
