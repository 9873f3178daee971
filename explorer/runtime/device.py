"""The device the user has: which one to run on, moving inputs there, and out-of-memory retries.

A model lives on one device (`load_checkpoint(..., device=...)` puts it there); every tensor built
from inputs follows `on(model)`, and results come back with `.cpu()` before `.numpy()`. An
out-of-memory error is retried once with half the batch (`halving_on_oom`) and then becomes one
line that suggests a smaller batch.
"""
from __future__ import annotations

import re
from typing import Callable, TypeVar

import torch

from explorer.runtime.config import Config, env_config, env_name
from explorer.text.errors import ExplorerError

DEVICE_ENV = env_name("device")  # the app's device (the CLI has --device)
DEFAULT_DEVICE = Config.device
AUTO_ORDER = ("cuda", "mps", "cpu")  # what "auto" tries, first available wins
_NAME = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
T = TypeVar("T")


class DeviceError(ExplorerError):
    """A device that cannot be used, or memory that ran out; one line, meant for the user."""


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _available(kind: str, index: int | None) -> bool:
    if kind == "cpu":
        return True
    if kind == "mps":
        return _mps_available()
    return torch.cuda.is_available() and (index is None or index < torch.cuda.device_count())


def resolve_device(name: str | torch.device | None = DEFAULT_DEVICE) -> torch.device:
    """"auto" (or None, or "") -> cuda, then mps, then cpu; a named device must exist here."""
    if isinstance(name, torch.device):
        name = str(name)
    text = (name or DEFAULT_DEVICE).strip().lower()
    if text == "auto":
        return torch.device(next(kind for kind in AUTO_ORDER if _available(kind, None)))
    if not _NAME.match(text):
        raise DeviceError("device_unknown", device=name)
    device = torch.device(text)
    if not _available(device.type, device.index):
        raise DeviceError("device_unavailable", device=text)
    return device


def app_device() -> torch.device:
    """The app's device, from HEAD_EXPLORER_DEVICE (default auto)."""
    return resolve_device(env_config().device)


def on(model: torch.nn.Module) -> torch.device:
    """The device a model's weights are on: where its inputs must go."""
    param = next(model.parameters(), None)
    return param.device if param is not None else torch.device("cpu")


def to(batch, device: torch.device):
    """A tokenizer's encoding (BatchEncoding or dict of tensors) on `device`; other values as they are."""
    if hasattr(batch, "to") and not isinstance(batch, torch.Tensor) and hasattr(batch, "encodings"):
        return batch.to(device)  # a BatchEncoding keeps its word ids and sequence ids
    if isinstance(batch, dict):
        return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
    return batch.to(device) if isinstance(batch, torch.Tensor) else batch


def is_oom(err: BaseException) -> bool:
    """CUDA's OutOfMemoryError, or the RuntimeError MPS (and older CUDA builds) raise for it."""
    if isinstance(err, torch.OutOfMemoryError):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def _free(device: torch.device | str | None) -> None:
    kind = torch.device(device).type if device is not None else "cpu"
    if kind == "cuda" and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif kind == "mps" and _mps_available():
        torch.mps.empty_cache()


def halving_on_oom(run: Callable[[int], T], batch: int, device: torch.device | str | None = None) -> T:
    """`run(batch)`; on out-of-memory, once more with half the batch; a second one is a DeviceError
    that names the batch it tried and suggests a smaller one. `run` must start from scratch each call."""
    try:
        return run(batch)
    except Exception as err:  # noqa: BLE001 - only memory errors are handled; the rest go on as they were
        if not is_oom(err):
            raise
    _free(device)
    half = max(1, batch // 2)
    try:
        return run(half)
    except Exception as err:  # noqa: BLE001
        if not is_oom(err):
            raise
        _free(device)
        raise DeviceError("device_out_of_memory", device=str(device or "cpu"), batch=half) from None
