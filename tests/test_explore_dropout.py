"""Dropout page: functional MC dropout invariants, the cached model untouched, AppTest."""
import numpy as np
import pytest
import torch

from explorer.explain import dropout
from explorer.model.analysis import analyze
from explorer.model.heads import HEAD_KINDS, build_head
from explorer.text.i18n import t

from explore_helpers import TEXT, open_page, specs, values


@pytest.mark.parametrize("kind", list(HEAD_KINDS))
def test_p_zero_is_eval_mode_exactly(tiny, kind):
    ck = tiny["roberta"]
    hd = build_head(ck, kind)
    a = analyze(ck, hd, TEXT)
    zero = dropout.mc_dropout(hd, a.hidden_states[-1], p=0.0, samples=20)
    np.testing.assert_allclose(zero.std, 0.0, atol=1e-7)
    np.testing.assert_allclose(zero.mean, a.logits, atol=1e-5)
    assert dropout.mc_dropout(hd, a.hidden_states[-1], p=0.5, samples=50).std.max() > 0


@pytest.mark.parametrize("kind", list(HEAD_KINDS))
def test_mc_mean_tends_to_eval_logits_as_p_shrinks(sentiment, kind):
    hd = build_head(sentiment, kind)
    a = analyze(sentiment, hd, TEXT)
    errs = [np.abs(dropout.mc_dropout(hd, a.hidden_states[-1], p=p, samples=400, seed=1).mean - a.logits).max()
            for p in (0.5, 0.01, 0.001)]
    assert errs[1] < 0.3 * errs[0] and errs[2] < 0.3 * errs[0] and errs[2] < 1e-3


def test_dropout_steps_per_kind(tiny):
    assert len(dropout.dropout_steps(build_head(tiny["bert"], "bert"))) == 1
    assert len(dropout.dropout_steps(build_head(tiny["bert"], "roberta"))) == 2


def test_mask_sample_scales_kept_values(sentiment):
    hd = build_head(sentiment)
    h = analyze(sentiment, hd, TEXT).hidden_states[-1]
    s = dropout.mask_sample(hd, h, p=0.25, seed=3)
    np.testing.assert_allclose(s.after[s.keep], s.before[s.keep] / 0.75, rtol=1e-5)
    assert np.all(s.after[~s.keep] == 0) and 0.1 < (~s.keep).mean() < 0.4
    again = dropout.mc_dropout(hd, h, p=0.25, samples=30, seed=3)
    np.testing.assert_array_equal(again.logits, dropout.mc_dropout(hd, h, p=0.25, samples=30, seed=3).logits)


def test_cached_model_training_flag_and_weights_untouched(sentiment):
    model = sentiment.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    flags = [m.training for m in model.modules()]
    hd = build_head(sentiment, "own")
    h = analyze(sentiment, hd, TEXT).hidden_states[-1]
    dropout.mc_dropout(hd, h, p=0.5, samples=64)
    dropout.mask_sample(hd, h, p=0.5)
    assert [m.training for m in model.modules()] == flags and not any(flags)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not any(p.requires_grad for p in model.parameters())


def test_dropout_page_apptest():
    at = open_page("dropout")
    assert at.slider(key="dropout_p").value == pytest.approx(0.1)
    at.slider(key="dropout_n").set_value(40).run()
    s = specs(at)
    assert len(s) == 3 and not at.error
    assert len(values(s[0]["data"][0]["y"])) == 40
    at.slider(key="dropout_p").set_value(0.0).run()
    logits = specs(at)[0]
    eval_pt = values(logits["data"][-1]["y"])
    np.testing.assert_allclose(values(logits["data"][0]["y"]), eval_pt[0], atol=1e-5)
    assert any(c.value == t("dropout.agree", share="100%") for c in at.caption)  # p=0: every sample agrees
    at.session_state["head"] = "roberta"
    at.run()
    at.radio(key="dropout_which").set_value(1).run()
    assert not at.exception and "#2" in specs(at)[2]["layout"]["title"]["text"]


def test_probabilities_follow_the_problem_type(sentiment):
    hd = build_head(sentiment)
    h = analyze(sentiment, hd, TEXT).hidden_states[-1]
    single = dropout.mc_dropout(hd, h, p=0.3, samples=20, seed=2)
    multi = dropout.mc_dropout(hd, h, p=0.3, samples=20, seed=2, ptype="multi_label_classification")
    np.testing.assert_allclose(single.probs.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(multi.probs, 1 / (1 + np.exp(-multi.logits)), atol=1e-9)
    assert 0.0 < single.agreement <= 1.0
