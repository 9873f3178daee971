"""CLI: the JSON contract, parity with transformers, truncation, and one-line errors (exit 2)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from explorer.cli import main
from explorer.model.analysis import encode, encoder_inputs
from tests.conftest import ROOT

TEXT = "What a wonderful, surprising little film."
KEYS = {"tokens", "labels", "logits", "layer_logits", "softmax", "sigmoid", "problem_type", "predicted", "new_weights",
        "pipeline", "head", "attention", "truncated_tokens"}


def _run_json(capsys, *args) -> dict:
    assert main(["analyze", *args, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def _check_contract(d: dict, ck, flow: bool) -> None:
    assert KEYS <= d.keys()
    n = len(d["tokens"])
    layers, heads = ck.model.config.num_hidden_layers, ck.model.config.num_attention_heads
    assert d["labels"] == list(ck.labels)
    assert set(d["head"]) >= {"kind", "steps"}
    assert all(set(s) == {"name", "values"} for s in d["head"]["steps"])
    np.testing.assert_allclose(d["head"]["steps"][-1]["values"], d["logits"], atol=1e-6)
    assert np.asarray(d["layer_logits"]).shape == (layers + 1, len(d["labels"]))
    assert d["layer_logits"][-1] == d["logits"]
    assert np.asarray(d["attention"]["cls_raw"]).shape == (layers, heads, n)
    assert np.asarray(d["attention"]["rollout"]).shape == (layers, n)
    if flow:
        assert np.asarray(d["attention"]["flow"]).shape == (layers, n)
    else:
        assert d["attention"]["flow"] is None
    np.testing.assert_allclose(sum(d["softmax"]), 1.0, atol=1e-5)
    assert d["predicted"] in d["labels"]
    enc, _ = encode(ck, TEXT)
    with torch.inference_mode():
        ref = ck.model(**encoder_inputs(enc)).logits[0].numpy()
    np.testing.assert_allclose(d["logits"], ref, atol=1e-5)
    assert d["tokens"] == ck.tokenizer.convert_ids_to_tokens(enc["input_ids"][0])


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_contract_on_tiny_folders(capsys, tiny, tiny_root, arch):
    d = _run_json(capsys, "--checkpoint", str(tiny_root / f"tiny-{arch}"), "--text", TEXT, "--flow")
    _check_contract(d, tiny[arch], flow=True)
    assert d["head"]["kind"] == arch and d["new_weights"] == [] and d["truncated_tokens"] == 0


def test_contract_on_sentiment_and_minilm(capsys, sentiment, minilm):
    d = _run_json(capsys, "--text", TEXT)
    _check_contract(d, sentiment, flow=False)
    assert d["predicted"] == "positive" and d["problem_type"] == "single_label_classification"
    d = _run_json(capsys, "--checkpoint", "minilm", "--text", TEXT, "--head", "mean-linear", "--seed", "2")
    _check_contract_head_only(d)
    assert d["new_weights"] == ["classifier.weight", "classifier.bias"]


def _check_contract_head_only(d):
    assert KEYS <= d.keys()
    assert d["head"]["kind"] == "mean-linear"
    assert [s["name"] for s in d["head"]["steps"]] == ["mean pool", "dropout", "classifier"]
    np.testing.assert_allclose(d["head"]["steps"][-1]["values"], d["logits"], atol=1e-6)


def test_long_text_reports_truncation(capsys):
    d = _run_json(capsys, "--text", " ".join(["wonderful"] * 1000 + ["dull"] * 1000))
    assert d["truncated_tokens"] > 0
    assert len(d["tokens"]) == 512


@pytest.mark.parametrize("args, needle", [
    (["--text", "   "], "empty"),
    (["--text", TEXT, "--head", "lstm"], "invalid choice"),
    (["--text", TEXT, "--checkpoint", "/definitely/not/here"], "not an allowed checkpoint folder"),
    (["--text", TEXT, "--checkpoint", "someone/some-model"], "offline"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    with pytest.raises(SystemExit) as ex:
        code = main(["analyze", *args])
        raise SystemExit(code)
    assert ex.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_folder_outside_roots_is_one_line_exit_2(capsys, tiny_root, tmp_path, monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tmp_path))
    assert main(["analyze", "--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an allowed checkpoint folder" in err


def _subprocess(*args, **env):
    return subprocess.run([sys.executable, "-m", "explorer", "analyze", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, HF_HUB_OFFLINE="1", **env))


@pytest.mark.server
def test_subprocess_json_on_tiny_folder(tiny, tiny_root):
    p = _subprocess("--checkpoint", str(tiny_root / "tiny-roberta"), "--text", TEXT, "--json", "--flow",
                    HEAD_EXPLORER_ROOTS=str(tiny_root))
    assert p.returncode == 0, p.stderr
    _check_contract(json.loads(p.stdout), tiny["roberta"], flow=True)


@pytest.mark.server
def test_subprocess_errors_are_one_line(tiny_root, tmp_path):
    p = _subprocess("--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT,
                    HEAD_EXPLORER_ROOTS=str(tmp_path))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "not an allowed checkpoint folder" in p.stderr and "Traceback" not in p.stderr
    p = _subprocess("--checkpoint", "someone/some-model", "--text", "")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
