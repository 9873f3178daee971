"""A checkpoint's own classification head, derived from the model itself: no table per architecture.

The head is everything the model computes after its base model's `last_hidden_state`. To run it
on given hidden states (of any layer), we call the model's real forward on a private shallow copy
whose base model is a stub that returns those hidden states. The shared, cached model is never
touched: the copy has its own module dicts and config, and shares only read-only parameters.

Some base models compute part of the head themselves (BERT's pooler runs inside BertModel). A
trace of one real forward finds the module whose output is `last_hidden_state` (the encoder stack,
or a final norm) and whatever the base model runs after it; when something does, only that module
is stubbed, so the pooler still runs for real (on cheap embeddings of placeholder ids).

The steps are read off the run by a TorchFunctionMode (thread-local, so concurrent sessions never
see each other's runs): every torch function that reads a tensor derived from the hidden states
is an event. Linear layers, norms, dropout and elementwise activations (functional ones such as
RoBERTa's torch.tanh included) are steps; the first event that drops the sequence axis is pooling.
Dropout can be sampled functionally from a generator, so no module is ever put in train mode.

Later runs make only the recorded calls again (a replay.Program: no HF wrapper code, no mode), where
a second real run at build time, of another shape and padding and with dropout sampled, gives the
same values bit for bit. Where it does not, or where the head reads tensor values into Python
(`if x.sum() > 0`), the real code runs every time.
"""
from __future__ import annotations

import copy
import threading
import weakref
from dataclasses import dataclass

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from explorer.model.pooling import last_token, pad_id
from explorer.model.replay import DROPOUTS, Program, dropout_call
from explorer.model.replay import tensors as _tensors

LINEAR = {torch._C._nn.linear, nn.functional.linear}
NORMS = {nn.functional.layer_norm, nn.functional.rms_norm, nn.functional.group_norm, torch.layer_norm}
# What a head may read off its tensors without its values steering the Python around them.
METADATA = {"shape", "size", "dim", "ndim", "device", "dtype", "is_floating_point"}
TOLERANCE = 1e-4  # derived logits vs the model's own, at build time


class Unsupported(Exception):
    """The model is not an encoder plus a head on its hidden states; args[0] is the i18n error key."""


@dataclass(frozen=True)
class OwnStep:
    name: str
    op: str  # first | last | token | mean | pool | linear | norm | dropout | activation | output
    slot: str = ""  # module path for linear and norm steps


class _Record(TorchFunctionMode):
    """Follows the data flow from `hidden` through the head's code, recording each call on it."""

    def __init__(self, hidden: torch.Tensor, dropout_p: float | None, generator: torch.Generator | None):
        super().__init__()
        self.path = {id(hidden)}
        self.alive = [hidden]  # keeps ids unique while recording
        self.events: list[tuple] = []  # (func, args, kwargs, output, the input on the path)
        self.reads: set[str] = set()  # what calls on the path gave other than tensors (shape, item, ...)
        self.dropout_p, self.generator = dropout_p, generator

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and id(first) in self.path:  # the common case, checked first
            x = first
        else:
            x = next((t for t in _tensors((args, kwargs)) if id(t) in self.path), None)
        if x is None:
            return func(*args, **kwargs)
        out = dropout_call(func, args, kwargs, self.dropout_p, self.generator)
        outs = _tensors(out)
        if outs:
            self.path.update(id(t) for t in outs)
            self.alive.extend(outs)
            self.events.append((func, args, kwargs, out, x))
        else:  # a descriptor's __get__ (x.shape) is named by its descriptor
            name = getattr(func, "__name__", "")
            self.reads.add(getattr(getattr(func, "__self__", None), "__name__", name) if name == "__get__" else name)
        return out


class _Given(nn.Module):
    """Stands in for a module: returns the given hidden states in the shape of its real output. The
    states are per thread (`given.hidden`), so one stub serves concurrent sessions."""

    def __init__(self, given: threading.local, like):
        super().__init__()
        self.given, self.like = given, like

    def forward(self, *args, **kwargs):
        return _substitute(self.like, self.given.hidden)


def _substitute(like, hidden):
    """`like` (a tensor, tuple or ModelOutput recorded in the trace) with its hidden-state entries set
    to `hidden`; other entries (other layers, attention maps) are dropped."""
    if isinstance(like, type):  # an output class: only last_hidden_state
        return like(last_hidden_state=hidden)
    if isinstance(like, tuple):
        return (hidden,)
    return hidden


def _with_module(root: nn.Module, path: str, new: nn.Module) -> nn.Module:
    """A shallow copy of `root` whose submodule at `path` is `new`; `root` itself is untouched."""
    clone = copy.copy(root)
    clone._modules = dict(root._modules)
    first, _, rest = path.partition(".")
    clone._modules[first] = new if not rest else _with_module(root._modules[first], rest, new)
    return clone


def _trace(model: nn.Module, enc: dict):
    """One real forward with thread-filtered global hooks on the base model's modules.

    Returns (model output, base output, [(event, module path, output)] in call order)."""
    base = model.base_model
    names = {m: n for n, m in base.named_modules()}
    me = threading.get_ident()
    events: list[tuple[str, str, object]] = []

    def pre(mod, args):
        if threading.get_ident() == me and mod in names:
            events.append(("pre", names[mod], None))

    def post(mod, args, out):
        if threading.get_ident() == me and mod in names:
            events.append(("post", names[mod], out))

    handles = [nn.modules.module.register_module_forward_pre_hook(pre),
               nn.modules.module.register_module_forward_hook(post)]
    try:
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
    finally:
        for h in handles:
            h.remove()
    base_out = next(o for kind, name, o in reversed(events) if kind == "post" and name == "")
    return out, base_out, events


def _same(a, b: torch.Tensor) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


def _split_base(events, last: torch.Tensor):
    """(path of the module that produces last_hidden_state, its output, whether the base model runs
    more modules after it: a pooler)."""
    posts = [(i, name, o) for i, (kind, name, o) in enumerate(events) if kind == "post" and name]
    found = [(i, name, o) for i, name, o in posts if any(_same(t, last) for t in _tensors(o))]
    if not found:
        return None, None, False
    i, name, out = found[-1]
    tail = any(kind == "pre" and n for kind, n, _ in events[i + 1:])
    like = type(out) if not isinstance(out, (torch.Tensor, tuple)) else out
    return name, like, tail


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
        out, base_out, events = _trace(model, enc)
        seq = enc["input_ids"].shape[1]
        if not out.attentions or any(a.shape[-2:] != (seq, seq) for a in out.attentions):
            raise Unsupported("unsupported_attention")  # e.g. sliding windows with global tokens
        last = base_out[0]
        self.producer, self.like, self.tail = _split_base(events, last)
        if self.producer is None:
            raise Unsupported("unsupported_head")
        if not self.tail:  # the stub replaces the whole base model
            self.like = type(base_out) if not isinstance(base_out, tuple) else (None,)
        self.config = copy.copy(model.config)
        self.pad_id = pad_id(model.config)
        self.config.pad_token_id = self.pad_id
        self.fill_id = 1 if self.pad_id == 0 else 0
        self.names = {id(p): n.rsplit(".", 1)[0] for n, p in model.named_parameters()}
        self.given = threading.local()
        self.clone = self._clone(model)  # built once: it shares the model's submodules, not the model
        ids, mask = enc["input_ids"], enc["attention_mask"]
        rec, logits = self._run(last, mask, ids, None, None)
        self.steps, self.named_funcs = self._derive(rec, last, mask, logits)
        self.values(rec.events, last, logits, check=True)
        if not torch.allclose(logits, out.logits, atol=TOLERANCE, rtol=TOLERANCE):
            raise Unsupported("unsupported_head")
        self.program = self._program(rec, last, logits)

    # ---- running -------------------------------------------------------------------------

    def _clone(self, model: nn.Module) -> nn.Module:
        """The private copy of `model` whose base model (or, with a tail, its encoder) is the stub."""
        stub = _Given(self.given, self.like)
        base = _with_module(model.base_model, self.producer, stub) if self.tail else stub
        clone = _with_module(model, self.prefix, base)
        clone.config = self.config
        return clone

    def placeholder_ids(self, mask: torch.Tensor) -> torch.Tensor:  # (batch, seq)
        fill = torch.full(mask.shape, self.fill_id, dtype=torch.long)
        pad = self.pad_id if (self.pad_id >= 0 or not self.tail) else self.fill_id
        return torch.where(mask.bool(), fill, torch.full_like(fill, pad))

    def _run(self, hidden, mask, ids, dropout_p, generator):
        if ids is None:
            ids = self.placeholder_ids(mask)
        rec = _Record(hidden, dropout_p, generator)
        self.given.hidden = hidden
        try:
            with rec:
                logits = self.clone(input_ids=ids, attention_mask=mask.long()).logits
        finally:
            self.given.hidden = None  # hold no tensors between runs
        return rec, logits

    def run(self, hidden, mask, ids=None, dropout_p=None, generator=None) -> list[torch.Tensor]:
        """Step values, each (batch, features), in the order of self.steps."""
        model = self._model()  # None once the model is gone: the clone still holds its modules
        if self.program is not None and model is not None and not model.training:  # recorded in eval mode
            events, logits = self.program.replay(hidden, self._index(mask, ids), dropout_p, generator)
        else:
            rec, logits = self._run(hidden, mask, ids, dropout_p, generator)
            events = rec.events
        return self.values(events, hidden, logits)

    # ---- the same calls without the code around them (see replay) ------------------------

    def _index(self, mask, ids):
        """The index a last-token pooling reads: each row's last non-pad token, by HF's rule."""
        if self.steps[0].op != "last":
            return None
        ids = self.placeholder_ids(mask) if ids is None else ids
        return torch.arange(ids.shape[0]), last_token(ids, self.pad_id)

    def _program(self, rec: _Record, hidden, logits) -> Program | None:
        """The head's calls as a Program, where a second real run proves the replay the same in every
        value; None where it does not (the real code then runs every time)."""
        if not rec.reads <= METADATA:
            return None  # values read into Python may steer the code: only the real code knows how
        gen = torch.Generator().manual_seed(0)
        b, s = 2, hidden.shape[1] + 3  # another batch size and length, the second row padded
        other = torch.randn((b, s, *hidden.shape[2:]), generator=gen, dtype=hidden.dtype)
        mask = torch.ones(b, s, dtype=torch.long)
        mask[1, -3:] = 0
        ids = self.placeholder_ids(mask)
        if self.pad_id >= 0:
            ids[0, 1] = self.pad_id  # a pad id inside a row: only the last one counts
        indexed = self._pooling(rec.events) if self.steps[0].op == "last" else None
        try:
            model = self.model
            weights = frozenset(id(t) for t in (*model.parameters(), *model.buffers()))
            program = Program(rec.events, hidden, logits, weights, indexed)
            for p in (None, 0.5):
                gens = [torch.Generator().manual_seed(1) if p else None for _ in range(2)]
                real, want = self._run(other, mask, ids, p, gens[0])
                events, got = program.replay(other, self._index(mask, ids), p, gens[1])
                if not (rec.reads | real.reads) <= METADATA or not _same_run(real.events, events) \
                        or not torch.equal(got, want):
                    return None
        except Exception:  # noqa: BLE001  (whatever the replay trips on, the real code still runs)
            return None
        return program

    # ---- reading the steps off a run -----------------------------------------------------

    @staticmethod
    def _pooling(events) -> int:
        for k, (func, args, kwargs, out, x) in enumerate(events):
            if x.dim() == 3 and _tensors(out)[0].dim() == 2:
                return k
        raise Unsupported("unsupported_head")

    def _derive(self, rec: _Record, hidden, mask, logits):
        events = rec.events
        k = self._pooling(events)
        named, funcs = [], set()
        for i, (func, args, kwargs, out, _) in enumerate(events):
            step = self._classify(func, args, kwargs, out)
            if step is not None:
                if i < k and events[k][0] is not torch.Tensor.__getitem__:
                    raise Unsupported("unsupported_head")  # per-token steps before a non-index pooling
                named.append(step)
                funcs.add(func)
        pool = self._pool_step(events[k], hidden, mask)
        steps = [pool] + named
        return tuple(steps), frozenset(funcs)

    def _classify(self, func, args, kwargs, out) -> OwnStep | None:
        if func in LINEAR:
            return OwnStep(self.names.get(id(args[1]), "linear"), "linear", self.names.get(id(args[1]), ""))
        if func in NORMS:
            w = kwargs.get("weight", args[2] if len(args) > 2 else None)
            name = self.names.get(id(w), func.__name__)
            return OwnStep(name, "norm", name)
        if func in DROPOUTS:
            return OwnStep("dropout", "dropout")
        ins = _tensors((args, kwargs))
        o = _tensors(out)
        if len(ins) == 1 and len(o) == 1 and o[0].shape == ins[0].shape and o[0].dim() >= 2 \
                and not torch.equal(o[0], ins[0]) and getattr(func, "__name__", "").isidentifier():
            name = func.__name__.strip("_")
            if name not in ("add", "sub", "mul", "truediv", "div", "neg", "pow"):
                return OwnStep(name, "activation")
        return None

    @staticmethod
    def _pool_step(event, hidden, mask) -> OwnStep:
        func, args, kwargs, out, _ = event
        if func is torch.Tensor.__getitem__:
            pos = _positions(hidden, args[1])
            if bool((pos == 0).all()):
                return OwnStep("first token", "first")
            return OwnStep("last non-pad token", "last")
        return OwnStep("mean pool", "mean")

    def values(self, events, hidden, logits, check: bool = False) -> list[torch.Tensor]:
        k = self._pooling(events)
        func, args, kwargs, out, _ = events[k]
        index = args[1] if func is torch.Tensor.__getitem__ else None
        vals = []
        if index is not None:
            vals.append(hidden[index])
        for i, (f, a, kw, o, _) in enumerate(events):
            if f in self.named_funcs:
                v = _tensors(o)[0]
                vals.append(v[index] if i < k else v)
        if index is None:  # the pooled vector is what the first step after pooling reads
            first = next(e for i, e in enumerate(events)
                         if i > k and e[0] in self.named_funcs)
            vals.insert(0, first[4])
        if len(vals) != len(self.steps):
            raise Unsupported("unsupported_head")  # this run took another path through the head's code
        if check and not torch.allclose(vals[-1], logits, atol=TOLERANCE, rtol=TOLERANCE):
            raise Unsupported("unsupported_head")  # something after the last step changes the logits
        vals[-1] = logits  # the model's own output, to the last bit
        return vals


def _same_run(a, b) -> bool:
    """The same calls with the same outputs, bit for bit."""
    return len(a) == len(b) and all(
        fa is fb and len(oa := _tensors(xa)) == len(ob := _tensors(xb))
        and all(u.shape == v.shape and u.dtype == v.dtype and torch.equal(u, v) for u, v in zip(oa, ob))
        for (fa, *_, xa, _), (fb, *_, xb, _) in zip(a, b))


def _positions(hidden: torch.Tensor, index) -> torch.Tensor:  # (batch,): which token each row reads
    b, s = hidden.shape[:2]
    pos = torch.arange(s).view(1, s, 1).expand(b, s, 1)
    return pos[index].reshape(b)
