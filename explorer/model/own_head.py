"""A checkpoint's own classification head, derived from the model itself: no table per architecture.

The head is everything the model computes after its base model's `last_hidden_state`. To run it
on given hidden states (of any layer), we call the model's real forward on a private shallow copy
whose base model is a stub that returns those hidden states. The shared, cached model is never
touched: the copy has its own module dicts and config, and shares only read-only parameters.

Some base models compute part of the head themselves (BERT's pooler runs inside BertModel). A
trace of one real forward finds the module whose output is `last_hidden_state` (the encoder stack,
or a final norm) and whatever the base model runs after it; when something does, only that module
is stubbed, so the pooler still runs for real (on cheap embeddings of placeholder ids).

The steps are read off the run's calls, as a replay.Recorder records them: every torch function
that reads a tensor derived from the hidden states is a Call. Linear layers, norms, dropout and
elementwise activations (functional ones such as RoBERTa's torch.tanh included) are steps; the first
call that drops the sequence axis is pooling. Dropout can be sampled functionally from a generator,
so no module is ever put in train mode.

Later runs make only the recorded calls again (a replay.Program: no HF wrapper code, no mode), where
a second real run at build time, of another shape and padding and with dropout sampled, gives the
same values bit for bit. Where it does not, or where the head reads tensor values into Python
(`if x.sum() > 0`), the real code runs every time. replay's docstring has the full contract.
"""
from __future__ import annotations

import copy
import threading
import weakref
from dataclasses import dataclass

import torch
from torch import nn

from explorer.model.replay import DROPOUTS, Call, Program, Recorder, Run, same_calls
from explorer.model.kernel import attention_kernel
from explorer.model.pooling import last_token, pad_id
from explorer.model.replay import tensors as _tensors
from explorer.model.steps import DROPOUT, EVERY_TOKEN, FIRST, LAST, MEAN, Op, Step

LINEAR = {nn.functional.linear}
NORMS = {nn.functional.layer_norm, nn.functional.rms_norm, nn.functional.group_norm, torch.layer_norm}
# What a head may read off its tensors without its values steering the Python around them.
METADATA = {"shape", "size", "dim", "ndim", "device", "dtype", "is_floating_point"}
TOLERANCE = 1e-4  # derived logits vs the model's own, at build time


class Unsupported(Exception):
    """The model is not an encoder plus a head on its hidden states; args[0] is the i18n error key."""


@dataclass(frozen=True)
class _Form:
    """How a stubbed module hands back the given hidden states, in the form of its real output: a
    ModelOutput class (only last_hidden_state set), a 1-tuple, or the tensor itself. Other entries
    of the real output (other layers, attention maps) are dropped."""
    output_class: type | None = None
    in_tuple: bool = False

    @classmethod
    def like(cls, out) -> _Form:
        """The form of `out`, a module's output recorded in the trace."""
        if isinstance(out, torch.Tensor):
            return cls()
        if isinstance(out, tuple):
            return cls(in_tuple=True)
        return cls(output_class=type(out))

    def wrap(self, hidden: torch.Tensor):
        if self.output_class is not None:
            return self.output_class(last_hidden_state=hidden)
        return (hidden,) if self.in_tuple else hidden


class _Given(nn.Module):
    """Stands in for a module: returns the given hidden states in the form of its real output. The
    states are per thread (`given.hidden`), so one stub serves concurrent sessions."""

    def __init__(self, given: threading.local, form: _Form):
        super().__init__()
        self.given, self.form = given, form

    def forward(self, *args, **kwargs):
        return self.form.wrap(self.given.hidden)


def _with_module(root: nn.Module, path: str, new: nn.Module) -> nn.Module:
    """A shallow copy of `root` whose submodule at `path` is `new`; `root` itself is untouched."""
    clone = copy.copy(root)
    clone._modules = dict(root._modules)
    first, _, rest = path.partition(".")
    clone._modules[first] = new if not rest else _with_module(root._modules[first], rest, new)
    return clone


@dataclass(frozen=True, eq=False)
class _Hook:
    """A module of the base model starting ("pre") or returning ("post", with its output)."""
    kind: str  # pre | post
    module: str  # its path in the base model ("" for the base model itself)
    out: object = None


def _trace(model: nn.Module, enc: dict) -> tuple[object, object, list[_Hook]]:
    """One real forward with thread-filtered global hooks on the base model's modules.

    Returns (model output, base output, the hooks in call order)."""
    base = model.base_model
    names = {m: n for n, m in base.named_modules()}
    me = threading.get_ident()
    hooks: list[_Hook] = []

    def pre(mod, args):
        if threading.get_ident() == me and mod in names:
            hooks.append(_Hook("pre", names[mod]))

    def post(mod, args, out):
        if threading.get_ident() == me and mod in names:
            hooks.append(_Hook("post", names[mod], out))

    handles = [nn.modules.module.register_module_forward_pre_hook(pre),
               nn.modules.module.register_module_forward_hook(post)]
    try:
        with torch.no_grad(), attention_kernel(model, "eager"):  # its attentions are checked below
            out = model(**enc, output_attentions=True)
    finally:
        for h in handles:
            h.remove()
    base_out = next(h.out for h in reversed(hooks) if h.kind == "post" and h.module == "")
    return out, base_out, hooks


def _same(a, b: torch.Tensor) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


def _split_base(hooks: list[_Hook], last: torch.Tensor) -> tuple[str | None, _Form | None, bool]:
    """(path of the module that produces last_hidden_state, the form of its output, whether the base
    model runs more modules after it: a pooler)."""
    found = [i for i, h in enumerate(hooks)
             if h.kind == "post" and h.module and any(_same(t, last) for t in _tensors(h.out))]
    if not found:
        return None, None, False
    producer = hooks[found[-1]]
    tail = any(h.kind == "pre" and h.module for h in hooks[found[-1] + 1:])
    return producer.module, _Form.like(producer.out), tail


class OwnHead:
    """The derived head of one model. Immutable after build; safe to share between threads."""

    @property
    def model(self) -> nn.Module:
        return self._model()

    def __init__(self, model: nn.Module, enc: dict):
        if model.config.is_encoder_decoder:
            raise Unsupported("unsupported_seq2seq")
        # Weakly: heads.derive caches this per model in a WeakKeyDictionary, and a strong reference
        # from the value to its key would keep every model (each fine-tuned copy) alive forever.
        self._model = weakref.ref(model)
        self.prefix = model.base_model_prefix
        out, base_out, hooks = _trace(model, enc)
        seq = enc["input_ids"].shape[1]
        if not out.attentions or any(a.shape[-2:] != (seq, seq) for a in out.attentions):
            raise Unsupported("unsupported_attention")  # e.g. sliding windows with global tokens
        last = base_out[0]
        self.producer, self.form, self.tail = _split_base(hooks, last)
        if self.producer is None:
            raise Unsupported("unsupported_head")
        if not self.tail:  # the stub replaces the whole base model
            self.form = _Form.like(base_out)
        self.config = copy.copy(model.config)
        self.pad_id = pad_id(model.config)
        self.config.pad_token_id = self.pad_id
        self.fill_id = 1 if self.pad_id == 0 else 0
        self.names = {id(p): n.rsplit(".", 1)[0] for n, p in model.named_parameters()}
        self.given = threading.local()
        self.clone = self._clone(model)  # built once: it shares the model's submodules, not the model
        ids, mask = enc["input_ids"], enc["attention_mask"]
        run = self._run(last, mask, ids, None, None)
        self.steps, self.named_funcs = self._derive(run, last)
        self.values(run, last, check=True)
        if not torch.allclose(run.logits, out.logits, atol=TOLERANCE, rtol=TOLERANCE):
            raise Unsupported("unsupported_head")
        self.program = self._program(run, last)

    # ---- running -------------------------------------------------------------------------

    def _clone(self, model: nn.Module) -> nn.Module:
        """The private copy of `model` whose base model (or, with a tail, its encoder) is the stub."""
        stub = _Given(self.given, self.form)
        base = _with_module(model.base_model, self.producer, stub) if self.tail else stub
        clone = _with_module(model, self.prefix, base)
        clone.config = self.config
        return clone

    def placeholder_ids(self, mask: torch.Tensor) -> torch.Tensor:  # (batch, seq)
        fill = torch.full(mask.shape, self.fill_id, dtype=torch.long, device=mask.device)
        pad = self.pad_id if (self.pad_id >= 0 or not self.tail) else self.fill_id
        return torch.where(mask.bool(), fill, torch.full_like(fill, pad))

    def _run(self, hidden: torch.Tensor, mask: torch.Tensor, ids: torch.Tensor | None,
             dropout_p: float | None, generator: torch.Generator | None) -> Run:
        """The model's real head code on `hidden` (batch, seq, hidden), its calls recorded."""
        if ids is None:
            ids = self.placeholder_ids(mask)
        recorder = Recorder(hidden, dropout_p, generator)
        self.given.hidden = hidden
        try:
            with recorder:
                logits = self.clone(input_ids=ids, attention_mask=mask.long()).logits
        finally:
            self.given.hidden = None  # hold no tensors between runs
        return recorder.run(logits)

    def run(self, hidden: torch.Tensor, mask: torch.Tensor, ids: torch.Tensor | None = None,
            dropout_p: float | None = None, generator: torch.Generator | None = None) -> list[torch.Tensor]:
        """Step values, each (batch, features), in the order of self.steps."""
        model = self._model()  # None once the model is gone: the clone still holds its modules
        if self.program is not None and model is not None and not model.training:  # recorded in eval mode
            run = self.program.replay(hidden, self._index(mask, ids), dropout_p, generator)
        else:
            run = self._run(hidden, mask, ids, dropout_p, generator)
        return self.values(run, hidden)

    # ---- the same calls without the code around them (see replay) ------------------------

    def _index(self, mask: torch.Tensor, ids: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The index a last-token pooling reads: (rows, each row's last non-pad token), by HF's rule."""
        if self.steps[0].op != Op.LAST:
            return None
        ids = self.placeholder_ids(mask) if ids is None else ids
        return torch.arange(ids.shape[0], device=ids.device), last_token(ids, self.pad_id)

    def _program(self, recorded: Run, hidden: torch.Tensor) -> Program | None:
        """The head's calls as a Program, where a second real run proves the replay the same in every
        value; None where it does not (the real code then runs every time)."""
        if not recorded.reads <= METADATA:
            return None  # values read into Python may steer the code: only the real code knows how
        gen = torch.Generator().manual_seed(0)
        b, s = 2, hidden.shape[1] + 3  # another batch size and length, the second row padded
        other = torch.randn((b, s, *hidden.shape[2:]), generator=gen, dtype=hidden.dtype).to(hidden.device)
        mask = torch.ones(b, s, dtype=torch.long, device=hidden.device)
        mask[1, -3:] = 0
        ids = self.placeholder_ids(mask)
        if self.pad_id >= 0:
            ids[0, 1] = self.pad_id  # a pad id inside a row: only the last one counts
        indexed = self._pooling(recorded.calls) if self.steps[0].op == Op.LAST else None
        try:
            model = self.model
            program = Program(recorded, hidden, (*model.parameters(), *model.buffers()), indexed)
            for p in (None, 0.5):
                gens = [torch.Generator().manual_seed(1) if p else None for _ in range(2)]
                real = self._run(other, mask, ids, p, gens[0])
                replayed = program.replay(other, self._index(mask, ids), p, gens[1])
                if not real.reads <= METADATA or not same_calls(real.calls, replayed.calls) \
                        or not torch.equal(replayed.logits, real.logits):
                    return None
        except Exception:  # noqa: BLE001  (whatever the replay trips on, the real code still runs)
            return None
        return program

    # ---- reading the steps off a run -----------------------------------------------------

    @staticmethod
    def _pooling(calls: tuple[Call, ...], logits: torch.Tensor | None = None) -> int | None:
        """Which call pools: the first that reads (batch, seq, hidden) and gives (batch, features). None
        for a token classifier's head, which keeps the sequence axis to the end (`logits` (batch, seq,
        labels)) and so has no pooling call."""
        for k, call in enumerate(calls):
            if call.read.dim() == 3 and call.outputs[0].dim() == 2:
                return k
        if logits is not None and logits.dim() == 3:
            return None
        raise Unsupported("unsupported_head")

    def _derive(self, run: Run, hidden: torch.Tensor) -> tuple[tuple[Step, ...], frozenset]:
        """(the steps, the functions whose calls are steps after the pooling one)."""
        k = self._pooling(run.calls, run.logits)
        named, funcs = [], set()
        for i, call in enumerate(run.calls):
            step = self._classify(call)
            if step is not None:
                if k is not None and i < k and run.calls[k].func is not torch.Tensor.__getitem__:
                    raise Unsupported("unsupported_head")  # per-token steps before a non-index pooling
                named.append(step)
                funcs.add(call.func)
        # k None: a token classifier's head, no pooling
        pool = EVERY_TOKEN if k is None else self._pool_step(run.calls[k], hidden)
        return (pool, *named), frozenset(funcs)

    def _classify(self, call: Call) -> Step | None:
        if call.func in LINEAR:
            slot = self.names.get(id(call.argument(1, "weight")), "")
            return Step(slot or "linear", Op.LINEAR, slot)
        if call.func in NORMS:
            name = self.names.get(id(call.argument(2, "weight")), call.func.__name__)
            return Step(name, Op.NORM, name)
        if call.func in DROPOUTS:
            return DROPOUT
        ins = _tensors((call.args, call.kwargs))
        o = call.outputs
        if len(ins) == 1 and len(o) == 1 and o[0].shape == ins[0].shape and o[0].dim() >= 2 \
                and not torch.equal(o[0], ins[0]) and getattr(call.func, "__name__", "").isidentifier():
            name = call.func.__name__.strip("_")
            if name not in ("add", "sub", "mul", "truediv", "div", "neg", "pow"):
                return Step(name, Op.ACTIVATION)
        return None

    @staticmethod
    def _pool_step(call: Call, hidden: torch.Tensor) -> Step:
        if call.func is torch.Tensor.__getitem__:
            pos = _positions(hidden, call.argument(1, "indices"))
            if bool((pos == 0).all()):
                return FIRST
            return LAST
        return MEAN

    def values(self, run: Run, hidden: torch.Tensor, check: bool = False) -> list[torch.Tensor]:
        """The steps' values in `run` (the real code's, or a replay's), each (batch, features); for a
        token head each (batch, seq, features), its first the hidden states themselves."""
        k = self._pooling(run.calls, run.logits)
        pooling = run.calls[k] if k is not None else None
        index = pooling.argument(1, "indices") if pooling is not None and pooling.func is torch.Tensor.__getitem__ \
            else None
        vals = []
        if index is not None or k is None:
            vals.append(hidden if k is None else hidden[index])
        for i, call in enumerate(run.calls):
            if call.func in self.named_funcs:
                v = call.outputs[0]
                vals.append(v[index] if k is not None and i < k else v)
        if index is None and k is not None:  # the pooled vector is what the first step after pooling reads
            first = next(c for i, c in enumerate(run.calls) if i > k and c.func in self.named_funcs)
            vals.insert(0, first.read)
        if len(vals) != len(self.steps):
            raise Unsupported("unsupported_head")  # this run took another path through the head's code
        if check and not torch.allclose(vals[-1], run.logits, atol=TOLERANCE, rtol=TOLERANCE):
            raise Unsupported("unsupported_head")  # something after the last step changes the logits
        vals[-1] = run.logits  # the model's own output, to the last bit
        return vals




def _positions(hidden: torch.Tensor, index) -> torch.Tensor:  # (batch,): which token each row reads
    b, s = hidden.shape[:2]
    pos = torch.arange(s, device=hidden.device).view(1, s, 1).expand(b, s, 1)
    return pos[index].reshape(b)
