"""Checkpoint loading: allowed roots, clear errors, seeded new weights, eval/eager, read-only analyses."""
import time

import numpy as np
import pytest
import torch

from explorer.model.analysis import analyze
from explorer.model.checkpoints import CheckpointError, load_checkpoint
from explorer.model.heads import KINDS, build_head

TEXT = "A film I would happily watch again."


def test_folder_outside_roots_is_refused(tiny_root, tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for f in (tiny_root / "tiny-bert").iterdir():
        (outside / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tiny_root))
    with pytest.raises(CheckpointError, match="not an allowed checkpoint folder"):
        load_checkpoint(str(outside))
    # the same files inside a root load fine, so the refusal is about the location only
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tmp_path))
    assert load_checkpoint(str(outside)).model_type == "bert"


def test_symlink_out_of_roots_is_refused(tiny_root, tmp_path, monkeypatch):
    link = tiny_root / "escape"
    link.symlink_to(tmp_path, target_is_directory=True)
    try:
        monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tiny_root))
        with pytest.raises(CheckpointError, match="not an allowed checkpoint folder"):
            load_checkpoint(str(link))
    finally:
        link.unlink()


def test_a_file_is_not_a_folder_and_outside_files_stay_opaque(tiny_root, tmp_path, monkeypatch):
    inside = tiny_root / "tiny-bert" / "config.json"
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tiny_root))
    with pytest.raises(CheckpointError, match="is not a folder"):
        load_checkpoint(str(inside))
    with pytest.raises(CheckpointError, match="not an allowed checkpoint folder"):
        load_checkpoint(str(outside))


def test_missing_path_inside_roots_is_a_clear_error(tiny_root):
    with pytest.raises(CheckpointError, match="no such folder"):
        load_checkpoint(str(tiny_root / "nope" / "x" / "y"))


@pytest.mark.parametrize("name", ["./no/such/folder", "/definitely/not/here", "/etc", "~", "~/x", "../.."])
def test_outside_roots_one_message_whether_or_not_it_exists(tiny_root, name):
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(name)
    assert str(err.value) == f"'{name}' is not an allowed checkpoint folder: only folders under " \
        "HEAD_EXPLORER_ROOTS can be loaded (no ~ expansion)"


def test_empty_name_is_a_clear_error():
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint("   ")


def test_hub_id_offline_fails_fast(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError, match="offline") as err:
        load_checkpoint("someone/some-model")
    assert time.perf_counter() - t0 < 5
    assert "\n" not in str(err.value)


def test_minilm_classifier_is_new_and_seeded(minilm):
    assert set(minilm.new_weights) == {"classifier.weight", "classifier.bias"}
    again = load_checkpoint("minilm", seed=0)
    other = load_checkpoint("minilm", seed=1)
    w0 = minilm.model.classifier.weight
    torch.testing.assert_close(again.model.classifier.weight, w0, rtol=0, atol=0)
    assert not torch.allclose(other.model.classifier.weight, w0)
    # exactly the documented recipe: normal(0, initializer_range) from a generator seeded with `seed`
    expected = torch.randn(w0.shape, generator=torch.Generator().manual_seed(0)) * minilm.model.config.initializer_range
    torch.testing.assert_close(w0, expected)
    torch.testing.assert_close(again.model.classifier.bias, torch.zeros_like(again.model.classifier.bias))
    # the encoder itself does not depend on the seed
    torch.testing.assert_close(other.model.bert.pooler.dense.weight, minilm.model.bert.pooler.dense.weight)


def test_sentiment_head_is_loaded_not_new(sentiment):
    assert sentiment.new_weights == ()
    assert sentiment.labels == ("negative", "neutral", "positive")


def test_models_are_eval_and_eager(tiny, minilm, sentiment):
    for ck in (*tiny.values(), minilm, sentiment):
        assert not ck.model.training
        assert all(not m.training for m in ck.model.modules())
        assert not any(p.requires_grad for p in ck.model.parameters())
        enc = ck.tokenizer("hello there", return_tensors="pt")
        with torch.inference_mode():
            out = ck.model.base_model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                      output_attentions=True)
        assert out.attentions and len(out.attentions) == ck.model.config.num_hidden_layers
        assert all(a is not None for a in out.attentions)


def _snapshot(ck):
    return {k: v.detach().clone() for k, v in ck.model.state_dict().items()}, ck.model.config.to_dict()


@pytest.mark.parametrize("which", ["bert", "distilbert", "roberta", "sentiment", "minilm"])
def test_analyze_leaves_the_cached_model_untouched(tiny, sentiment, minilm, which):
    ck = {"sentiment": sentiment, "minilm": minilm}.get(which) or tiny[which]
    state, cfg = _snapshot(ck)
    for kind in KINDS:
        a = analyze(ck, build_head(ck, kind, seed=3), TEXT, flow=True)
        assert a.flow is not None
    after, cfg_after = _snapshot(ck)
    assert cfg_after == cfg
    assert after.keys() == state.keys()
    for k in state:
        assert torch.equal(after[k], state[k]), k
    assert not ck.model.training
    assert not any(p.requires_grad for p in ck.model.parameters())
    assert np.isfinite(a.logits).all()
