"""Pickle-only folders are named and converted without running their code; checkpoints of another task
(question answering, ...) are named and refused; token classifiers load as such, never as sentence classifiers."""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from transformers import (AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer,
                          BertForMaskedLM, BertForQuestionAnswering, BertForSequenceClassification,
                          BertForTokenClassification)

from explorer import api
from explorer.cli import main
from explorer.model.analysis import analyze
from explorer.model.checkpoints import (CheckpointError, architecture_task, embedded_encoder_dir, load_checkpoint,
                                        other_task)
from explorer.model.heads import build_head
from tests import tiny_archs

TEXT = "The plot was thin but the acting was superb."


def _save(model, folder: Path, pickle: bool = True, shards: int = 1) -> Path:
    """save_pretrained (transformers 5 writes safetensors only), then, for a pickle folder, the weights as
    transformers 4 wrote them: torch.save of the state dict, tied weights sharing one storage."""
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(embedded_encoder_dir())).save_pretrained(folder)
    if pickle:
        (folder / "model.safetensors").unlink()
        state = model.state_dict()
        if shards == 1:
            torch.save(state, folder / "pytorch_model.bin")
        else:
            keys = list(state)
            weight_map = {}
            for i in range(shards):
                name = f"pytorch_model-{i + 1:05d}-of-{shards:05d}.bin"
                part = {k: state[k] for k in keys[i::shards]}
                torch.save(part, folder / name)
                weight_map.update(dict.fromkeys(part, name))
            (folder / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return folder


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("kinds")
    cfg = tiny_archs.config("bert")
    torch.manual_seed(3)
    _save(BertForSequenceClassification(cfg), root / "seq-bin")
    torch.manual_seed(4)
    _save(BertForSequenceClassification(cfg), root / "seq-shards", shards=2)
    torch.manual_seed(5)
    _save(BertForMaskedLM(cfg), root / "mlm-bin")
    torch.manual_seed(6)
    _save(BertForTokenClassification(cfg), root / "token", pickle=False)
    _save(BertForQuestionAnswering(cfg), root / "qa", pickle=False)
    torch.manual_seed(7)
    _save(BertForMaskedLM(cfg), root / "mlm", pickle=False)
    (root / "seq-bin" / "training_args.bin").write_bytes(b"not copied")
    return root


@pytest.fixture(autouse=True)
def roots(root, tmp_path, monkeypatch):  # a converted folder is written under tmp_path and loaded from there
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", os.pathsep.join([str(root), str(tmp_path), str(embedded_encoder_dir())]))
    monkeypatch.chdir(root)  # outputs are written here, so nothing lands in the checkout


def _cli(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    return code, err


def _one_line_exit_2(capsys, *args) -> str:
    code, err = _cli(capsys, *args)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def _hf_logits(folder: Path, cls=AutoModelForSequenceClassification, pickle: bool = True) -> torch.Tensor:
    """The logits HF gives; from a pickle folder HF 5 reads the .bin only when told to."""
    model = cls.from_pretrained(str(folder), use_safetensors=not pickle, attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(str(folder))
    with torch.inference_mode():
        return model(**tok(TEXT, return_tensors="pt")).logits[0]


# ---- .bin folders -----------------------------------------------------------------------------------

@pytest.mark.parametrize("folder, file", [("seq-bin", "pytorch_model.bin"),
                                          ("seq-shards", "pytorch_model.bin.index.json")])
def test_pickle_folder_names_the_file_and_the_command(root, capsys, folder, file):
    name = str(root / folder)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(name)
    msg = str(err.value)
    command = f"python -m explorer convert-checkpoint --checkpoint {shlex.quote(name)} --out " \
              f"{shlex.quote(name + '-safetensors')}"
    assert f"its weights are in {file}, a pickle file, which can run code" in msg and msg.endswith(command), msg
    assert "\n" not in msg
    assert command in _one_line_exit_2(capsys, "analyze", "--checkpoint", name, "--text", TEXT)
    assert "pickle" in err.value.message("vi") and command in err.value.message("vi")


@pytest.mark.parametrize("folder", ["seq-bin", "seq-shards"])
def test_converted_folder_loads_with_hf_logits(root, capsys, tmp_path, folder):
    out = tmp_path / "converted"
    code, err = _cli(capsys, "convert-checkpoint", "--checkpoint", root / folder, "--out", out)
    assert code == 0, err
    ck = load_checkpoint(str(out))
    assert ck.new_weights == () and ck.unused_weights == ()
    expected = _hf_logits(root / folder)
    with torch.inference_mode():
        got = ck.model(**ck.tokenizer(TEXT, return_tensors="pt")).logits[0]
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)
    a = analyze(ck, build_head(ck, "own"), TEXT)
    np.testing.assert_allclose(a.logits, expected.numpy(), rtol=0, atol=1e-6)
    texts = {p.name for p in (root / folder).iterdir() if p.suffix == ".json" and "pytorch_model" not in p.name}
    assert {"config.json", "tokenizer.json"} <= texts
    weights = {"model.safetensors"} if folder == "seq-bin" else \
        {"model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
    assert {p.name for p in out.iterdir()} == texts | weights
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left


def test_tied_weights_are_kept_under_both_names(root, tmp_path):
    from explorer.model.convert import convert_checkpoint

    done = convert_checkpoint(str(root / "mlm-bin"), str(tmp_path / "mlm"))
    assert done.skipped == () and "config.json" in done.copied
    with safe_open(str(tmp_path / "mlm" / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
        assert {"bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight"} <= keys
        assert torch.equal(f.get_tensor("bert.embeddings.word_embeddings.weight"),
                           f.get_tensor("cls.predictions.decoder.weight"))
    torch.testing.assert_close(_hf_logits(tmp_path / "mlm", AutoModelForMaskedLM, pickle=False),
                               _hf_logits(root / "mlm-bin", AutoModelForMaskedLM), rtol=0, atol=0)


def test_training_pickles_are_left_behind(root, tmp_path):
    from explorer.model.convert import convert_checkpoint

    done = convert_checkpoint(str(root / "seq-bin"), str(tmp_path / "out"))
    assert done.skipped == ("training_args.bin",) and done.weights == ("model.safetensors",)
    assert not (tmp_path / "out" / "training_args.bin").exists()


def _evil(folder: Path, marker: Path) -> None:
    class Evil:
        def __reduce__(self):
            return os.system, (f"touch {shlex.quote(str(marker))}",)

    folder.mkdir()
    (folder / "config.json").write_text("{}")
    torch.save({"w": torch.zeros(2), "x": Evil()}, folder / "pytorch_model.bin")
    shards = folder.parent / f"{folder.name}-shards"  # the second shard is refused after the first is written
    shards.mkdir()
    torch.save({"a": torch.ones(2)}, shards / "pytorch_model-00001-of-00002.bin")
    (shards / "pytorch_model-00002-of-00002.bin").write_bytes((folder / "pytorch_model.bin").read_bytes())
    (shards / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": {
        "a": "pytorch_model-00001-of-00002.bin", "w": "pytorch_model-00002-of-00002.bin"}}))


def test_convert_refuses_with_one_line_and_writes_nothing(root, capsys, tmp_path, tmp_path_factory):
    marker = tmp_path / "pwned"
    _evil(root / "evil", marker)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    cases = [
        (root / "seq-bin", taken, "already exists"),
        (root / "token", tmp_path / "a", "no pytorch_model.bin"),
        (root / "evil", tmp_path / "b", "refused pytorch_model.bin (Trying to load unsupported GLOBAL posix.system"),
        (root / "evil-shards", tmp_path / "b", "refused pytorch_model-00002-of-00002.bin (Trying to load"),
        (tmp_path_factory.mktemp("outside"), tmp_path / "c", "not an allowed checkpoint folder"),
        (root / "seq-bin", tmp_path / "no" / "d", "does not exist"),
    ]
    for source, out, needle in cases:
        before = sorted(p.name for p in tmp_path.iterdir())
        assert needle in _one_line_exit_2(capsys, "convert-checkpoint", "--checkpoint", source, "--out", out)
        assert sorted(p.name for p in tmp_path.iterdir()) == before, needle
    assert [p.name for p in taken.iterdir()] == ["keep.txt"] and (taken / "keep.txt").read_text() == "mine"
    assert not marker.exists()  # torch.load(weights_only=True) refused before building the object


# ---- other tasks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("architecture, task", [
    ("BertForSequenceClassification", "SequenceClassification"), ("BertForTokenClassification", "TokenClassification"),
    ("RobertaForQuestionAnswering", "QuestionAnswering"), ("LlamaForCausalLM", "CausalLM"),
    ("GPT2LMHeadModel", "CausalLM"), ("BertModel", None), ("SomethingElse", None)])
def test_the_task_is_the_class_name_suffix(architecture, task):
    assert architecture_task(architecture) == task


def test_a_bare_encoder_keeps_its_new_head(minilm):
    assert minilm.model.config.architectures == ["BertModel"] and other_task(minilm.model.config) is None
    assert set(minilm.new_weights) == {"classifier.weight", "classifier.bias"}


def test_a_pretraining_head_loads_as_its_encoder_with_a_new_head(root):
    """bert-base-uncased and gpt2 are saved as LM heads: the usual start for fine-tuning, not refused."""
    ck = api.load(str(root / "mlm"), device="cpu")
    assert {"classifier.weight", "classifier.bias"} <= set(ck.new_weights)
    assert any(w.startswith("cls.predictions") for w in ck.unused_weights)  # the page names them


def test_a_pickle_only_pretraining_head_gets_the_pickle_line(root):
    with pytest.raises(CheckpointError, match="convert-checkpoint"):
        api.load(str(root / "mlm-bin"), device="cpu")


def test_a_token_classifier_loads_as_one(root):
    """Its classifier has a sentence head's shape: it must load per token, never as a sentence classifier."""
    ck = api.load(str(root / "token"), device="cpu")
    assert ck.task == "token-classification" and type(ck.model).__name__ == "BertForTokenClassification"
    assert ck.new_weights == () and ck.unused_weights == ()


@pytest.mark.parametrize("folder, architecture, kind", [("qa", "BertForQuestionAnswering", "question answering")])
def test_other_tasks_are_named_and_refused(root, capsys, folder, architecture, kind):
    name = str(root / folder)
    with pytest.raises(CheckpointError) as err:
        api.load(name, device="cpu")
    assert str(err.value) == f"checkpoint '{name}': config.json names {architecture}, a {kind} model, " \
                             "not a sentence classifier; Head Explorer does not analyse it"
    assert architecture in _one_line_exit_2(capsys, "analyze", "--checkpoint", name, "--text", TEXT)


def test_app_shows_the_refusal_as_one_error(root):
    from tests.test_app import _app

    at = _app(None, checkpoint="other…", checkpoint_other=str(root / "qa"))
    assert [e.value for e in at.error] == [
        f"checkpoint '{root / 'qa'}': config.json names BertForQuestionAnswering, a question answering "
        "model, not a sentence classifier; Head Explorer does not analyse it"]
    assert not at.metric
