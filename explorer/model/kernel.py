"""The attention kernel per call, on one shared model: eager where attention weights are read, sdpa elsewhere.

Eager attention materialises every (heads, seq, seq) score matrix, which analyses, flow, rollout and the
head view read; sdpa (torch's scaled_dot_product_attention, transformers' default where a model supports it)
computes the same outputs without returning those weights, faster and with less memory. Attributions,
features (hence the audit and head fine-tuning) and full fine-tuning never read the weights.

A loaded model is shared by every session's thread, so the kernel cannot be switched by writing its config
(`model.set_attn_implementation` per call): another thread's forward in between would run, or return no
weights, under the wrong kernel. Instead, at load and before the model is shared, its implementation is set
once (through `set_attn_implementation`, the public way) to `SWITCH`: one attention function and one mask
function registered with transformers' AttentionInterface and AttentionMaskInterface (its extension point
for custom attention). Each call they dispatch, by a ContextVar, to transformers' own sdpa functions or to
the model's own eager function and eager mask. A ContextVar is per thread (a new thread starts from the
default, eager) and per asyncio task, so concurrent sessions with different kernels never see each
other's choice and nothing is locked.

Which models switch is a tested list (SWITCHABLE, by `config.model_type`), not read off library source: each
listed architecture's logits under SWITCH equal HF's own eager and sdpa models bit for bit
(tests/test_kernel.py, every tiny architecture), and its modeling file has the hook the eager side calls
(`eager_attention_forward`; tests/test_kernel.py fails when a listed file loses it). Anything else keeps
eager and ignores the switch: a class without sdpa (DeBERTa, MPNet), one whose modeling file decides
something by the implementation's name (GPT-2's upcast path asks for "eager" by name; under SWITCH it would
not take it), and an architecture nobody has tested yet (add it to the list with its tiny model).

Trade-offs: the choice holds for every switched model the thread runs inside the block, not only the one
named; a thread started inside a block (torch's DataParallel replicas) runs eager, correct but slower; and
`output_attentions=True` inside an sdpa block returns no weights, as an sdpa model does (readers set eager).
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from explorer.text.errors import ExplorerError

KERNELS = ("eager", "sdpa")
# "sdpa" in the name: set_attn_implementation then runs transformers' own sdpa support check on the model
# (and refuses a class without it); no "/" or ":", which would read as a hub kernel.
SWITCH = "explorer_sdpa_or_eager"
# Float32 logits under the two kernels agree to this: the same sums in another order (measured ≤ 2.1e-6 on
# minilm-sentiment at 16-512 tokens, ≤ 5e-8 on the tiny architectures). Half precision differs by more, as
# HF's own eager and sdpa models do (README, "Precision by dtype").
TOLERANCE = 1e-5

_KERNEL: ContextVar[str] = ContextVar("explorer_attention_kernel", default="eager")
_EAGER: dict[type, Callable] = {}  # attention module class -> its modeling file's eager function
# config.model_type of the architectures whose modeling files run under SWITCH exactly as under HF's eager and
# sdpa (tests/test_kernel.py proves each on a tiny model). Left out, tested: deberta, deberta-v2, mpnet (no
# sdpa), gpt2 (decides by the implementation's name).
SWITCHABLE = frozenset({"bert", "distilbert", "roberta", "xlm-roberta", "camembert", "electra", "albert", "ernie",
                        "mobilebert", "modernbert", "llama", "qwen2", "mistral"})
EAGER_HOOK = "eager_attention_forward"  # what each listed modeling file must define: the eager side of the switch


def _eager_of(module: torch.nn.Module) -> Callable:
    """The eager function the module's own forward falls back to (get_interface's default)."""
    cls = type(module)
    if cls not in _EAGER:
        _EAGER[cls] = getattr(sys.modules[cls.__module__], EAGER_HOOK)
    return _EAGER[cls]


def _attention(module, query, key, value, attention_mask, **kwargs):
    if _KERNEL.get() == "sdpa":
        return ALL_ATTENTION_FUNCTIONS["sdpa"](module, query, key, value, attention_mask, **kwargs)
    return _eager_of(module)(module, query, key, value, attention_mask, **kwargs)


def _mask(*args, **kwargs):
    # Built once per forward, before the layers, under the same ContextVar as their attention: an additive
    # float mask for eager, a boolean one (or none without padding) for sdpa.
    return ALL_MASK_ATTENTION_FUNCTIONS[_KERNEL.get()](*args, **kwargs)


AttentionInterface.register(SWITCH, _attention)
AttentionMaskInterface.register(SWITCH, _mask)


def install(model: PreTrainedModel) -> str:
    """Give a freshly loaded eager model the switch, where it can run both kernels; returns the model's
    implementation (SWITCH, or "eager" as loaded). Call before the model is shared: it writes the config."""
    if model.config._attn_implementation != "eager" or model.config.model_type not in SWITCHABLE:
        return model.config._attn_implementation
    if not callable(getattr(sys.modules[type(model).__module__], EAGER_HOOK, None)):  # a later file without it
        return "eager"
    try:  # set_attn_implementation runs transformers' own sdpa check and leaves eager where it cannot switch
        model.set_attn_implementation(SWITCH)
    except (ValueError, ImportError):  # transformers' own sdpa check refused it
        model.set_attn_implementation("eager")
    return model.config._attn_implementation


def switchable(model: PreTrainedModel) -> bool:
    return model.config._attn_implementation == SWITCH


def kernel_of(model: PreTrainedModel) -> str:
    """The kernel the model's forward uses here and now."""
    impl = model.config._attn_implementation
    return _KERNEL.get() if impl == SWITCH else impl


class KernelError(ExplorerError, ValueError):
    """An attention kernel other than eager or sdpa was asked for (a caller's mistake, one line)."""


@contextmanager
def attention_kernel(ck, kernel: str) -> Iterator[str]:
    """Within this block (this thread or task only), switched models run attention with `kernel`
    ("eager": weights returned; "sdpa": none, faster). Yields the kernel `ck`'s model actually uses:
    a model without the switch keeps its own (eager as loaded). `ck`: a Checkpoint or a model."""
    if kernel not in KERNELS:
        raise KernelError("kernel_unknown", kernel=str(kernel)[:40], choices=", ".join(KERNELS))
    token = _KERNEL.set(kernel)
    try:
        yield kernel_of(getattr(ck, "model", ck))
    finally:
        _KERNEL.reset(token)
