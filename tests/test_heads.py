"""Head table: parity of the `own` head with transformers' own forward, on tiny and real models."""
import json
import numpy as np
import pytest
import torch

from explorer.model.analysis import analyze, encode, encoder_inputs
from explorer.model.heads import HEAD_KINDS, KINDS, HeadError, build_head, run_head

TEXT = "The quick brown fox jumps over the lazy dog, unbelievably."


def _hf_logits(ck, text):
    enc, _ = encode(ck, text)
    with torch.inference_mode():
        return ck.model(**encoder_inputs(enc)).logits[0].numpy()


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_own_head_matches_sequence_classification_logits_tiny(tiny, arch):
    ck = tiny[arch]
    a = analyze(ck, build_head(ck, "own"), TEXT)
    assert a.head_kind == arch
    np.testing.assert_allclose(a.logits, _hf_logits(ck, TEXT), atol=1e-5)
    assert a.new_weights == ()  # the tiny checkpoints ship their heads


def test_own_head_matches_on_real_model(sentiment, minilm):
    for ck in (sentiment, minilm):
        a = analyze(ck, build_head(ck, "own"), TEXT)
        np.testing.assert_allclose(a.logits, _hf_logits(ck, TEXT), atol=1e-5)


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
@pytest.mark.parametrize("kind", list(HEAD_KINDS))
def test_any_encoder_takes_any_head(tiny, arch, kind):
    ck = tiny[arch]
    head = build_head(ck, kind, seed=0)
    a = analyze(ck, head, TEXT)
    assert a.logits.shape == (3,)
    assert [name for name, _ in a.steps] == [s.name for s in HEAD_KINDS[kind]]
    reused = kind == arch
    assert bool(a.new_weights) != reused


def test_new_heads_are_seeded(tiny):
    ck = tiny["bert"]
    one = analyze(ck, build_head(ck, "mean-linear", seed=0), TEXT).logits
    same = analyze(ck, build_head(ck, "mean-linear", seed=0), TEXT).logits
    other = analyze(ck, build_head(ck, "mean-linear", seed=1), TEXT).logits
    np.testing.assert_array_equal(one, same)
    assert not np.allclose(one, other)


def test_minilm_pooler_is_pretrained_and_classifier_is_new(minilm):
    head = build_head(minilm, "own")
    rows = {r["name"]: r for r in head.parameters_table()}
    assert rows["bert.pooler.dense"]["pretrained"] and not rows["classifier"]["pretrained"]
    assert rows["classifier"]["shape"] == "384×2+2"
    assert set(minilm.new_weights) == {"classifier.weight", "classifier.bias"}


def test_mean_pool_ignores_padding(tiny):
    ck = tiny["bert"]
    head = build_head(ck, "mean-linear")
    hidden = torch.randn(1, 5, 32)
    padded = torch.cat([hidden, torch.randn(1, 3, 32) * 100], dim=1)
    a = run_head(head, hidden, torch.ones(1, 5))[0][1]
    b = run_head(head, padded, torch.tensor([[1, 1, 1, 1, 1, 0, 0, 0]]))[0][1]
    torch.testing.assert_close(a, b)


def test_unknown_kind_is_a_clear_error(tiny):
    with pytest.raises(HeadError, match="unknown head kind"):
        build_head(tiny["bert"], "lstm")
    assert KINDS[0] == "own"


def test_a_step_op_is_one_vocabulary():
    """steps.Op is the one vocabulary of what a step does: every named kind's and own head's steps carry an
    Op, the strings JSON and the CLI read are its values, and a typo fails where the step is made."""
    from explorer.model.heads import HEAD_KINDS, TOKEN_HEAD_KINDS
    from explorer.model.steps import Op, Step
    from explorer.model.features import POOLS
    from explorer.train.finetune import HEAD_POOLS

    for steps in (*HEAD_KINDS.values(), *TOKEN_HEAD_KINDS.values()):
        assert all(type(s.op) is Op for s in steps)
    assert Step("x", "linear").op is Op.LINEAR and json.dumps(Step("x", "mean").op) == '"mean"'
    with pytest.raises(ValueError):
        Step("x", "lineer")
    assert set(HEAD_POOLS) <= set(POOLS)
