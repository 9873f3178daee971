"""CPU against CUDA on the same machine: every number a page shows, computed on both, agrees within float32
rounding (CUDA's float32 matmuls, not TF32: torch's default). Marked `cuda`: skipped where no CUDA device is
(HEAD_EXPLORER_REQUIRE_CUDA=1 makes its absence a failure, as bench/device_run.sh sets it).

On the GPU machine MiniLM arrives in float16 and is widened to float32 (/work/shared/device/README.md), so both
sides here load those same weights; nothing is compared with numbers from another machine."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import pipeline

from explorer.cli import main
from explorer.data.dataset import demo_frame, prepare, read_csv
from explorer.explain.attribution import METHODS, attribute
from explorer.explain.batched import attribute_many
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.features import encoder_features
from explorer.model.heads import build_head
from explorer.model.token_analysis import AGGREGATIONS, analyze_tokens
from explorer.runtime import budget
from explorer.train.finetune import Settings, finetune
from tests.test_precision import BOUNDS

pytestmark = pytest.mark.cuda

TEXTS = ("The plot was thin, but the actors carried it with warmth and surprising wit.",
         "I hated every minute of this film.")
NER_TEXTS = ("Maria Kowalczyk visited Hanoi last week.", "Yesterday Linh met Sarah Brightwater.")
ATOL = 1e-4  # logits and probabilities, CPU against CUDA
REL = 1e-3  # gradient methods' scores, against the largest score


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-12))


@pytest.fixture(scope="module")
def both():
    """{device: (checkpoint, head)} for the sentiment model on cpu and on cuda."""
    out = {}
    for device in ("cpu", "cuda"):
        ck = load_checkpoint("minilm-sentiment", device=device)
        out[device] = (ck, build_head(ck))
    assert out["cuda"][0].model.device.type == "cuda"
    return out


def test_analyze_agrees(both):
    for text in TEXTS:
        a, b = (analyze(*both[d], text) for d in ("cpu", "cuda"))
        assert a.predicted == b.predicted
        assert np.allclose(a.logits, b.logits, atol=ATOL) and np.allclose(a.softmax, b.softmax, atol=ATOL)
        assert np.allclose(a.layer_logits, b.layer_logits, atol=ATOL)
        assert np.allclose(a.attentions, b.attentions, atol=ATOL)
        assert np.allclose(a.hidden_states, b.hidden_states, atol=1e-3)


@pytest.mark.parametrize("method", METHODS)
def test_every_attribution_method_agrees(both, method):
    options = {"n_steps": 16} if method == "lig" else {}
    a, b = (attribute(*both[d], text=TEXTS[0], method=method, target=2, **options) for d in ("cpu", "cuda"))
    sampled = a.sampling is not None
    assert _rel(a.scores, b.scores) <= (1e-2 if sampled else REL), method  # the same samples, other rounding
    if a.delta is not None and not sampled:
        assert abs(a.error - b.error) <= 1e-3


def test_lig_converges_on_cuda(both):
    r = attribute(*both["cuda"], text=TEXTS[0], method="lig")
    assert r.converged and r.error <= 0.01


def test_attribute_many_on_cuda_agrees_with_cpu_text_by_text(both):
    many = attribute_many(*both["cuda"], texts=list(TEXTS), n_steps=16, target=0)
    for text, m in zip(TEXTS, many):
        one = attribute(*both["cpu"], text=text, method="lig", target=0, n_steps=16)
        assert _rel(one.scores, m.scores) <= REL


def test_features_agree(both):
    a, b = (encoder_features(both[d][0], list(TEXTS)) for d in ("cpu", "cuda"))
    assert np.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize("dtype", list(BOUNDS))
def test_each_dtype_on_cuda_within_its_stated_distance(both, dtype):
    ck, head = both["cuda"]
    a, b = analyze(ck, head, TEXTS[0]), analyze(ck, head, TEXTS[0], dtype=dtype)
    assert b.dtype == dtype and np.abs(a.logits - b.logits).max() <= BOUNDS[dtype][0]


def test_the_batch_budget_is_a_share_of_free_cuda_memory(monkeypatch):
    monkeypatch.delenv("HEAD_EXPLORER_BATCH_MB", raising=False)
    free, total = torch.cuda.mem_get_info()
    mb = budget.batch_mb("cuda")
    assert 0 < mb <= total * budget.CUDA_BATCH_SHARE / 2**20
    assert mb >= 0.5 * free * budget.CUDA_BATCH_SHARE / 2**20  # read now, not a stale figure


@pytest.fixture(scope="module")
def ner(token_checkpoint):
    return {d: load_checkpoint(str(token_checkpoint), device=d) for d in ("cpu", "cuda")}


def test_token_analysis_and_entities_agree_with_cpu_and_pipeline_on_the_device(ner, token_checkpoint):
    pipe = pipeline("token-classification", model=str(token_checkpoint), device=0)
    heads = {d: build_head(ck) for d, ck in ner.items()}
    for text in NER_TEXTS:
        cpu = analyze_tokens(ner["cpu"], heads["cpu"], text, strategies=AGGREGATIONS)
        cuda = analyze_tokens(ner["cuda"], heads["cuda"], text, strategies=AGGREGATIONS)
        assert cpu.tags == cuda.tags and np.allclose(cpu.logits, cuda.logits, atol=ATOL)
        for strategy in AGGREGATIONS:
            got = [e.to_dict() for e in cuda.entities[strategy]]
            want = pipe(text, aggregation_strategy=strategy)
            assert len(got) == len(want), (strategy, got, want)
            for g, w in zip(got, want):
                assert {k: v for k, v in g.items() if k != "score"} == {k: v for k, v in w.items() if k != "score"}
                assert abs(g["score"] - float(w["score"])) <= 1e-4


def test_cli_device_cuda(capsys):
    out = {}
    for device in ("cpu", "cuda"):
        assert main(["analyze", "--text", TEXTS[0], "--device", device, "--json"]) == 0
        out[device] = json.loads(capsys.readouterr().out)
    assert out["cpu"]["predicted"] == out["cuda"]["predicted"]
    assert np.allclose(out["cpu"]["logits"], out["cuda"]["logits"], atol=ATOL)
    assert main(["analyze", "--text", TEXTS[0], "--device", "cuda", "--dtype", "bfloat16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dtype"] == "bfloat16"


@pytest.fixture(scope="module")
def demo():
    return prepare(read_csv(demo_frame(per_class=20, seed=1).to_csv(index=False).encode()))


def test_head_mode_fine_tune_agrees(demo):
    runs = {d: finetune(load_checkpoint("minilm", device=d), demo, settings=Settings(epochs=5))
            for d in ("cpu", "cuda")}
    assert runs["cuda"].checkpoint.model.device.type == "cuda"
    for a, b in zip(runs["cpu"].history, runs["cuda"].history):  # the same features, seed and order
        assert a["val_loss"] == pytest.approx(b["val_loss"], abs=1e-3)
    assert runs["cpu"].best_epoch == runs["cuda"].best_epoch


def test_full_fine_tune_runs_on_cuda_as_on_cpu(tiny_root, demo):
    s = Settings(mode="full", epochs=1, learning_rate=5e-4, batch_size=16)
    runs = {d: finetune(load_checkpoint(str(tiny_root / "tiny-bert"), device=d), demo, settings=s)
            for d in ("cpu", "cuda")}
    ck = runs["cuda"].checkpoint
    assert ck.model.device.type == "cuda" and not ck.model.training
    # Dropout draws on each device's own generator: the runs differ by their masks, not by their scale.
    a, b = runs["cpu"].history[0], runs["cuda"].history[0]
    assert np.isfinite(b["loss"]) and b["loss"] == pytest.approx(a["loss"], rel=0.2)
    analyze(ck, build_head(ck), TEXTS[0])  # the kept model still analyses where it lives
