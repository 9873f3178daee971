"""Fine-tuning: head mode learns, the shared model stays untouched, stop keeps the best state,
the export loads in pipeline() with the CSV's names, and the CLI runs (also under accelerate)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from explorer import cli
from explorer.data.dataset import demo_frame, prepare, read_csv
from explorer.train.finetune import FinetuneError, Settings, export, export_zip, finetune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _data(body: str):
    return prepare(read_csv(body.encode()))


@pytest.fixture(scope="module")
def demo():
    return prepare(read_csv(demo_frame(per_class=60, seed=1).to_csv(index=False).encode()))


@pytest.fixture(scope="module")
def trained(minilm, demo):
    before = {k: v.clone() for k, v in minilm.model.state_dict().items()}
    result = finetune(minilm, demo, settings=Settings(epochs=20, seed=0))
    return result, before


@pytest.mark.slow
def test_head_mode_beats_chance(trained):
    result, _ = trained
    assert result.metrics["accuracy"] > 0.5  # chance is 1/3 for three balanced classes
    assert 0 < result.metrics["macro_f1"] <= 1 and len(result.history) == 20
    assert result.confusion.shape == (3, 3) and result.confusion.sum() == 36  # 20% of 180, stratified
    assert (result.confusion.sum(1) == 12).all()
    assert result.checkpoint.labels == ("negative", "neutral", "positive")


def test_shared_model_is_untouched(trained, minilm):
    result, before = trained
    after = minilm.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not minilm.model.training and not any(p.requires_grad for p in minilm.model.parameters())
    assert minilm.model.config.num_labels == 2  # the copy got 3 labels, the original kept its own
    assert result.checkpoint.model is not minilm.model
    trained_cls = result.checkpoint.model.classifier.weight
    assert trained_cls.shape == (3, 384) and not trained_cls.requires_grad


def test_export_loads_in_pipeline_with_csv_names(trained, tmp_path):
    from transformers import pipeline

    result, _ = trained
    out = export(result, tmp_path / "model")
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in out.iterdir()}
    clf = pipeline("text-classification", model=str(out))
    texts = ["I love this, best day ever!", "I hate this, worst day ever.", "the bus comes at noon"]
    preds = clf(texts)
    ck = result.checkpoint
    with torch.inference_mode():
        probs = ck.model(**ck.tokenizer(texts, padding=True, return_tensors="pt")).logits.softmax(-1)
    assert [p["label"] for p in preds] == [ck.labels[i] for i in probs.argmax(-1)]  # the CSV's names, same model
    np.testing.assert_allclose([p["score"] for p in preds], probs.max(-1).values.numpy(), atol=1e-4)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["id2label"] == {"0": "negative", "1": "neutral", "2": "positive"}
    with pytest.raises(FinetuneError, match="already exists"):
        export(result, out)
    assert export_zip(result.checkpoint)[:2] == b"PK"


def test_export_is_atomic(trained, tmp_path, monkeypatch):
    result, _ = trained

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(result.checkpoint.tokenizer, "save_pretrained", boom)
    with pytest.raises(OSError):
        export(result, tmp_path / "model")
    assert list(tmp_path.iterdir()) == []  # neither the out folder nor a temp folder is left


def test_stop_keeps_best_state(tiny, demo):
    seen = []
    result = finetune(tiny["bert"], demo, settings=Settings(epochs=50, learning_rate=5e-3),
                      on_epoch=seen.append, stop=lambda: len(seen) >= 3)
    assert result.stopped and len(result.history) == 3 and [r.epoch for r in seen] == [1, 2, 3]
    assert [r.row for r in seen] == list(result.history) and {r.epochs for r in seen} == {50}
    best = min(result.history, key=lambda r: r["val_loss"])  # the lowest validation loss is kept
    assert result.best_epoch == best["epoch"] and result.metrics["accuracy"] == pytest.approx(best["accuracy"])


def test_multi_label_and_regression(tiny):
    rows = "".join(f"text number {i},{['a|b', 'b', 'a'][i % 3]}\n" for i in range(30))
    r = finetune(tiny["distilbert"], _data("text,labels\n" + rows), settings=Settings(epochs=2))
    assert r.problem_type == "multi_label_classification" and set(r.metrics) >= {"f1_micro", "f1_macro"}
    assert r.checkpoint.model.config.problem_type == "multi_label_classification"
    rows = "".join(f"text number {i},{i / 30:.3f}\n" for i in range(30))
    r = finetune(tiny["roberta"], _data("text,score\n" + rows), settings=Settings(epochs=2))
    assert r.problem_type == "regression" and r.metrics["mse"] >= 0 and r.checkpoint.model.config.num_labels == 1


def test_full_mode_with_trainer(tiny, demo):
    before = {k: v.clone() for k, v in tiny["bert"].model.state_dict().items()}
    seen = []
    r = finetune(tiny["bert"], demo, settings=Settings(mode="full", epochs=2, batch_size=64), on_epoch=seen.append)
    assert [s.epoch for s in seen] == [1, 2] and [s.row for s in seen] == list(r.history) and "accuracy" in r.metrics and r.best_epoch in (1, 2)
    assert all(torch.equal(before[k], v) for k, v in tiny["bert"].model.state_dict().items())
    assert not any(p.requires_grad for p in r.checkpoint.model.parameters())


def test_foreign_head_kind_is_refused(tiny, demo):
    with pytest.raises(FinetuneError, match="own head"):
        finetune(tiny["bert"], demo, settings=Settings(head="mean-linear"))


# ---- CLI ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("csv") / "demo.csv"
    demo_frame(per_class=30, seed=2).to_csv(path, index=False)
    return path


def test_cli_finetune_json(tiny_root, demo_csv, tmp_path, capsys):
    out = tmp_path / "ft"
    rc = cli.main(["finetune", "--csv", str(demo_csv), "--text-column", "text", "--label-column", "label",
                   "--checkpoint", str(tiny_root / "tiny-bert"), "--head", "own", "--mode", "head",
                   "--epochs", "3", "--out", str(out), "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) >= {"accuracy", "macro_f1", "train_seconds", "out"} and res["out"] == str(out)
    assert json.loads((out / "config.json").read_text())["label2id"] == {"negative": 0, "neutral": 1, "positive": 2}


@pytest.mark.parametrize("body,extra,message", [
    (b"", [], "empty"),
    (b"text,label\n", [], "header but no rows"),
    (b"text,label\na,x\nb,x\n", [], "only one class"),
    (b"text,label\na,x\nb,y\n", ["--label-column", "nope"], "no column 'nope'"),
    (b"text,label\na,x\nb,y\nc,x\nd,y\n", ["--epochs", "0"], "must be between 1 and"),
])
def test_cli_bad_input_exit_2_one_line_and_no_out(tiny_root, tmp_path, capsys, body, extra, message):
    csv = tmp_path / "bad.csv"
    csv.write_bytes(body)
    out = tmp_path / "out"
    rc = cli.main(["finetune", "--csv", str(csv), "--checkpoint", str(tiny_root / "tiny-bert"),
                   "--out", str(out), *extra])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.count("\n") == 0 and message in err and not out.exists()


def test_cli_inspect_data_json(demo_csv, capsys):
    assert cli.main(["inspect-data", "--csv", str(demo_csv), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["rows"] == 90 and rep["issues"] == [] and rep["suggested_mapping"] == {}
    assert sorted(x["name"] for x in rep["labels"]) == ["negative", "neutral", "positive"]


def test_cli_inspect_data_missing_path(tmp_path, capsys):
    assert cli.main(["inspect-data", "--csv", str(tmp_path), "--json"]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.server
@pytest.mark.slow
def test_accelerate_launch_cpu(tiny_root, demo_csv, tmp_path):
    out = tmp_path / "acc"
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    accelerate = os.path.join(os.path.dirname(sys.executable), "accelerate")
    proc = subprocess.run(
        [accelerate, "launch", "--num_processes", "1", "--cpu", "-m", "explorer", "finetune", "--csv", str(demo_csv),
         "--text-column", "text", "--label-column", "label", "--checkpoint", str(tiny_root / "tiny-bert"),
         "--head", "own", "--mode", "head", "--epochs", "2", "--out", str(out), "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["out"] == str(out) and (out / "model.safetensors").exists()
    assert np.isfinite(res["accuracy"])
