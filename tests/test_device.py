"""The device the user has (explorer/runtime/device.py): auto order, every tensor on the model's device,
and out-of-memory retried once with half the batch, then one line.

No accelerator here, so tests pin cpu. A placement tracker stands in for a second device: the model's
weights, and whatever is moved with `.to(device)` or made with `device=`, are "placed"; results of
placed tensors are placed, `.cpu()` is not. Mixing a placed and an unplaced tensor (other than a
0-dim one, which CUDA accepts), or `.numpy()` of a placed one, is what a GPU would refuse."""
from __future__ import annotations

import weakref

import numpy as np
import pandas as pd
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from explorer.runtime import device as dev

FACTORIES = {torch.tensor, torch.zeros, torch.ones, torch.full, torch.empty, torch.arange, torch.rand,
             torch.randn, torch.randperm, torch.as_tensor, torch.linspace}


class Placement(TorchFunctionMode):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.placed: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id -> tensor
        for t in (*model.parameters(), *model.buffers()):
            self.placed[id(t)] = t
        self.mixed: list[str] = []
        self.numpy: list[str] = []

    def _is(self, t) -> bool:
        return isinstance(t, torch.Tensor) and self.placed.get(id(t)) is t

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        flat = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        placed = [a for a in flat if self._is(a)]
        if name == "numpy" and placed:
            self.numpy.append(name)
        if placed and name not in ("cpu", "to", "__get__", "__set__") \
                and any(a.dim() > 0 and not self._is(a) for a in flat):
            self.mixed.append(name)
        out = func(*args, **kwargs)
        if name == "cpu" and out is (args[0] if args else None):
            out = out.view_as(out)  # on a real device .cpu() is a new tensor; here it would be the same one
        moves = name == "to" and any(isinstance(a, (torch.device, str)) for a in (*args[1:], kwargs.get("device")))
        makes = func in FACTORIES and kwargs.get("device") is not None
        keep = name not in ("cpu", "to") and bool(placed)
        if moves or makes or keep or (name == "to" and placed):
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor):
                    self.placed[id(t)] = t
        return out

    def check(self) -> None:
        assert not self.mixed, f"placed and unplaced tensors mixed in: {sorted(set(self.mixed))}"
        assert not self.numpy, "numpy() of a tensor still on the model's device"


def test_auto_picks_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.setattr(dev, "_available", lambda kind, index: kind in ("mps", "cpu"))
    assert dev.resolve_device("auto").type == "mps"
    monkeypatch.setattr(dev, "_available", lambda kind, index: True)
    assert dev.resolve_device(None).type == "cuda"
    monkeypatch.setattr(dev, "_available", lambda kind, index: kind == "cpu")
    assert dev.resolve_device("").type == "cpu"
    assert dev.resolve_device(" CPU ") == torch.device("cpu")


def test_unknown_or_missing_device_is_one_line(monkeypatch):
    with pytest.raises(dev.DeviceError, match="Unknown device 'tpu'"):
        dev.resolve_device("tpu")
    monkeypatch.setattr(dev, "_available", lambda kind, index: kind == "cpu")
    with pytest.raises(dev.DeviceError, match="'cuda:1' is not available"):
        dev.resolve_device("cuda:1")


def test_app_device_reads_the_env(monkeypatch):
    monkeypatch.setenv(dev.DEVICE_ENV, "cpu")
    assert dev.app_device() == torch.device("cpu")
    monkeypatch.setenv(dev.DEVICE_ENV, "quantum")
    with pytest.raises(dev.DeviceError):
        dev.app_device()


def test_load_puts_the_model_on_the_device(tiny_root):
    from explorer.model.checkpoints import load_checkpoint

    ck = load_checkpoint(str(tiny_root / "tiny-bert"), device="cpu")
    assert ck.device == torch.device("cpu") and dev.on(ck.model) == ck.device
    with pytest.raises(dev.DeviceError):
        load_checkpoint(str(tiny_root / "tiny-bert"), device="gpu")


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_analysis_and_attribution_stay_on_the_model_device(tiny, arch):
    from explorer.explain.attribution import attribute
    from explorer.model.analysis import analyze
    from explorer.model.heads import build_head

    ck = tiny[arch]
    with Placement(ck.model) as mode:
        heads = [build_head(ck, "own"), build_head(ck, "bert", seed=1)]  # inside: a new layer's move is seen
        for head in heads:
            analyze(ck, head, "a placed text", text_pair="and a pair")
        for method in ("lig", "occlusion", "saliency"):
            attribute(ck, heads[0], text="a placed text", method=method, n_steps=4 if method == "lig" else None)
    mode.check()


def test_features_stay_on_the_model_device(tiny):
    from explorer.model.features import encoder_features

    ck = tiny["roberta"]
    with Placement(ck.model) as mode:
        encoder_features(ck, ["one text", "a second, longer text here"], batch_size=2)
    mode.check()


def test_the_tracker_sees_an_unplaced_input(tiny):
    """The tracker is what makes the tests above able to fail: a CPU-made mask beside placed states."""
    ck = tiny["bert"]
    with Placement(ck.model) as mode:
        x = ck.model.get_input_embeddings().weight[:3]
        _ = x * torch.ones(3, 1)
    assert mode.mixed
    with Placement(ck.model) as mode:
        x = ck.model.get_input_embeddings().weight[:3]
        _ = x * torch.ones(3, 1, device=x.device)
        _ = x.cpu().numpy()
    mode.check()


def _oom_once(monkeypatch, module, attr, seen: list[int], size_of, times: int = 1):
    real = getattr(module, attr)

    def flaky(*args, **kwargs):
        seen.append(size_of(args, kwargs))
        if len(seen) <= times:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, attr, flaky)


def test_features_retry_once_with_half_the_batch(tiny, monkeypatch):
    from explorer.model import features

    ck = tiny["bert"]
    texts = [f"text number {i} " * (1 + i % 3) for i in range(8)]
    want = features.encoder_features(ck, texts, batch_size=4)
    seen: list[int] = []
    _oom_once(monkeypatch, features, "_encode", seen, lambda a, k: len(a[1]["input_ids"]))  # rows in the batch
    got = features.encoder_features(ck, texts, batch_size=4)
    assert seen[:2] == [4, 2]  # the failing batch, then half of it
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_a_second_oom_is_one_line(tiny, monkeypatch):
    from explorer.model import features

    seen: list[int] = []
    _oom_once(monkeypatch, features, "_encode", seen, lambda a, k: len(a[1]["input_ids"]), times=2)
    with pytest.raises(dev.DeviceError) as err:
        features.encoder_features(tiny["bert"], ["a", "b", "c", "d"], batch_size=4)
    assert seen == [4, 2]
    assert "\n" not in str(err.value) and "smaller batch" in str(err.value) and "batch of 2" in str(err.value)


def test_mps_style_oom_is_recognised():
    assert dev.is_oom(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    assert not dev.is_oom(RuntimeError("shape mismatch"))
    calls = []
    assert dev.halving_on_oom(lambda b: calls.append(b) or b, 8) == 8 and calls == [8]
    with pytest.raises(ValueError):  # other errors pass through, not retried
        dev.halving_on_oom(lambda b: (_ for _ in ()).throw(ValueError("bad")), 8)


def test_lig_retries_with_half_the_internal_batch(tiny, monkeypatch):
    from explorer.explain import attribution
    from explorer.model.heads import build_head

    ck = tiny["bert"]
    head = build_head(ck, "own")
    want = attribution.attribute(ck, head, text="a retried text", n_steps=8)
    seen: list[int] = []
    real = attribution.IntegratedGradients.attribute

    def flaky(self, *args, **kwargs):
        seen.append(kwargs["internal_batch_size"])
        if len(seen) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(attribution.IntegratedGradients, "attribute", flaky)
    monkeypatch.setattr(attribution.budget, "batch_rows", lambda *a, **k: 6)
    got = attribution.attribute(ck, head, text="a retried text", n_steps=8)
    assert seen[:2] == [6, 3]
    np.testing.assert_allclose(got.scores, want.scores, atol=1e-6)


def test_cli_second_oom_exits_2_with_one_line(tiny_root, monkeypatch, capsys, tmp_path):
    from explorer import cli
    from explorer.model import features

    csv = tmp_path / "d.csv"
    pd.DataFrame({"text": [f"row {i}" for i in range(12)], "label": ["a", "b"] * 6}).to_csv(csv, index=False)
    seen: list[int] = []
    _oom_once(monkeypatch, features, "_encode", seen, lambda a, k: len(a[1]["input_ids"]), times=2)
    code = cli.main(["inspect-data", "--csv", str(csv), "--label-issues", "--checkpoint", str(tiny_root / "tiny-bert"), "--device", "cpu"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "smaller batch" in err


# ---- batch budgets from the device (explorer/runtime/budget.py) ----

def _free_gib(monkeypatch, gib: float, calls: list | None = None):
    def mem_get_info(device=None):
        if calls is not None:
            calls.append(device)
        return int(gib * 2**30), 80 * 2**30
    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)


def test_cuda_batch_budget_is_a_share_of_free_memory(monkeypatch):
    from explorer.runtime import budget

    monkeypatch.delenv("HEAD_EXPLORER_BATCH_MB", raising=False)
    calls: list = []
    _free_gib(monkeypatch, 8, calls)
    assert budget.batch_mb("cuda:0") == int(8 * 1024 * budget.CUDA_BATCH_SHARE) == 2048
    assert calls == [torch.device("cuda:0")]  # the device asked about, read now
    _free_gib(monkeypatch, 2)  # memory taken since: the next batch is sized smaller
    assert budget.batch_mb(torch.device("cuda")) == 512
    _free_gib(monkeypatch, 0)
    assert budget.batch_mb("cuda") == 1  # a full card: one row at a time, not none


def test_on_cpu_nothing_changes_and_the_variable_wins_on_cuda(monkeypatch):
    from explorer.runtime import budget
    from explorer.runtime.config import ConfigError

    calls: list = []
    _free_gib(monkeypatch, 8, calls)
    monkeypatch.delenv("HEAD_EXPLORER_BATCH_MB", raising=False)
    assert budget.batch_mb() == budget.batch_mb("cpu") == budget.batch_mb("mps") == 256
    assert calls == []  # never asks CUDA about a CPU batch
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", "64")
    assert budget.batch_mb("cuda") == 64 and calls == []
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", "lots")
    with pytest.raises(ConfigError, match="HEAD_EXPLORER_BATCH_MB"):
        budget.batch_mb("cuda")


def test_rows_follow_the_device_budget(monkeypatch, tiny):
    from explorer.runtime import budget

    monkeypatch.delenv("HEAD_EXPLORER_BATCH_MB", raising=False)
    _free_gib(monkeypatch, 64)
    cfg = tiny["bert"].model.config
    cpu, cuda = budget.batch_rows(cfg, 512, grad=True), budget.batch_rows(cfg, 512, grad=True, device="cuda")
    per_row = budget.row_bytes(cfg, 512, grad=True)
    assert (cpu, cuda) == (256 * 2**20 // per_row, 16 * 1024 * 2**20 // per_row)  # 64 GiB free: 16 GiB a batch
    rows = int(256 * 2**20 // per_row) + 1  # just past one CPU batch, well within one CUDA batch
    assert budget.beyond_one_batch(cfg, 512, 0, rows) and not budget.beyond_one_batch(cfg, 512, 0, rows, device="cuda")


def test_attribution_sizes_its_batches_on_the_model_device(monkeypatch, tiny):
    """lig asks the budget about the device its inputs are on (here cpu: 256 MB, CUDA never asked)."""
    from explorer.explain.attribution import attribute
    from explorer.model.heads import build_head
    from explorer.runtime import budget

    asked: list = []
    real = budget.batch_mb
    monkeypatch.setattr(budget, "batch_mb", lambda device=None: asked.append(device) or real(device))
    ck = tiny["bert"]
    attribute(ck, build_head(ck), text="a fine day", method="lig", n_steps=4)
    assert asked and all(torch.device(d) == ck.model.device for d in asked)
