"""The precision a forward runs in: parsing a dtype name, and a cached cast copy of a model per dtype.

float32 is the default and the reference; bfloat16 and float16 halve the weights' and activations' memory and,
on a GPU, run on its tensor cores. How far each lands from float32 is measured and stated in the README
("Precision"), and tests/test_precision.py holds each within its stated bound.

Model casting, not torch.autocast: autocast keeps the weights in float32 and picks per op which run in half
precision (matmuls do, softmax and layer norms do not), so the same `dtype` would mean one set of numbers on
CUDA and another on CPU (where autocast's op lists differ), and it saves no weight memory. A cast copy runs
every op in the dtype, the same on every device, at half the memory; its numbers are what the README states.
Sums that decide something (lig's completeness rule) are read back in float32 or wider by their callers.

A loaded model is shared by every session (st.cache_resource), so it is never cast in place: each dtype gets a
copy of its own, made once per model and kept while the model lives (a weak-keyed cache), so every session
asking for bfloat16 shares one bfloat16 copy.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
import weakref

import torch

from explorer.text.errors import ExplorerError

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
DEFAULT_DTYPE = "float32"

_COPIES: "weakref.WeakKeyDictionary[torch.nn.Module, dict[torch.dtype, torch.nn.Module]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


class PrecisionError(ExplorerError):
    """A dtype that is not one of DTYPES; one line, meant for the user."""


def parse_dtype(value: str | torch.dtype | None) -> torch.dtype:
    """"float32" (also None or ""), "bfloat16" or "float16" (or fp32, bf16, fp16, half; or the torch.dtype)."""
    if isinstance(value, torch.dtype):
        if value in DTYPES.values():
            return value
        raise PrecisionError("dtype_unknown", dtype=str(value).removeprefix("torch."), choices=", ".join(DTYPES))
    text = (value or DEFAULT_DTYPE).strip().lower() if isinstance(value, str) or value is None else str(value)
    text = ALIASES.get(text, text)
    if text not in DTYPES:
        raise PrecisionError("dtype_unknown", dtype=str(value)[:40], choices=", ".join(DTYPES))
    return DTYPES[text]


def dtype_name(dtype: torch.dtype) -> str:
    """"bfloat16" for torch.bfloat16: the name results and the CLI state."""
    return str(dtype).removeprefix("torch.")


def model_dtype(model: torch.nn.Module) -> torch.dtype:
    """The dtype of a model's floating-point weights (float32 for a model without any)."""
    param = next((p for p in model.parameters() if p.is_floating_point()), None)
    return param.dtype if param is not None else torch.float32


def cast_model(model: torch.nn.Module, dtype: str | torch.dtype | None) -> torch.nn.Module:
    """`model` itself when its weights are already `dtype`, else its cached copy in `dtype` (made on first use,
    on the model's device). The model is never changed."""
    dtype = parse_dtype(dtype)
    if model_dtype(model) == dtype:
        return model
    with _LOCK:  # two sessions asking at once make one copy
        copies = _COPIES.setdefault(model, {})
        if dtype not in copies:
            # deepcopy, then cast: the copy keeps the original's config, eval mode and attention kernel.
            copies[dtype] = copy.deepcopy(model).to(dtype=dtype).eval()
        return copies[dtype]


def at_precision(ck, dtype: str | torch.dtype | None):
    """A checkpoint (any frozen dataclass with a `model` field) whose model runs in `dtype`: `ck` itself when it
    already does, else a copy of the record holding the cached cast model (cast_model)."""
    model = cast_model(ck.model, dtype)
    return ck if model is ck.model else dataclasses.replace(ck, model=model)
