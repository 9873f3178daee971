"""Attributions: completeness on the real model, every method on tiny models, word merge, AOPC, CLI."""
import json

import numpy as np
import pytest
import torch

from explorer.cli import build_parser, main
from explorer.explain import faithfulness
from explorer.explain.attribution import METHODS, AttributionError, attribute, merge_words
from explorer.model.analysis import analyze
from explorer.model.heads import build_head

TEXT = "The quick brown fox jumps over the lazy dog, unbelievably."
REAL = "I love this movie, the acting is wonderful but the ending was far too long."


@pytest.mark.parametrize("quantity", ["logit", "probability"])
def test_completeness_within_one_percent_on_real_model(sentiment, quantity):
    head = build_head(sentiment, "own")
    r = attribute(sentiment, head, text=REAL, method="lig", quantity=quantity)
    a = analyze(sentiment, head, REAL)
    assert r.target_label == a.predicted
    expected = a.logits[r.target] if quantity == "logit" else a.softmax[r.target]
    assert r.f_x == pytest.approx(expected, abs=1e-4)
    diff = r.f_x - r.f_baseline
    assert abs(r.scores.sum() - diff) <= 0.01 * abs(diff)
    assert r.delta == pytest.approx(r.scores.sum() - diff, abs=1e-6)
    assert r.error <= 0.01 and r.converged and r.n_steps >= 5 and (r.n_steps - 1) % 4 == 0  # 5 points, +4 a halving
    assert np.all(r.scores[list(r.special)] == 0)  # baselines keep the special tokens


@pytest.mark.parametrize("arch", ["bert", "distilbert"])  # RoBERTa differs: its input_ids path gives [PAD] no position
def test_lig_with_fixed_steps_equals_captum_layer_integrated_gradients(tiny, arch):
    """Captum's LIG on get_input_embeddings() with pad-id baselines: the same integral."""
    from captum.attr import LayerIntegratedGradients

    ck = tiny[arch]
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="lig", target=2, n_steps=20)
    ids = torch.tensor([r.token_ids])
    base = torch.tensor([[i if s else ck.tokenizer.pad_token_id for i, s in zip(r.token_ids, r.special)]])
    lig = LayerIntegratedGradients(lambda i: ck.model(input_ids=i).logits, ck.model.get_input_embeddings())
    want = lig.attribute(ids, baselines=base, target=2, n_steps=20)[0].sum(-1).detach().numpy()
    np.testing.assert_allclose(r.scores, want, atol=1e-5)


def test_few_fixed_steps_report_their_error(sentiment):
    r = attribute(sentiment, build_head(sentiment, "own"), text=REAL, method="lig", n_steps=2)
    assert r.n_steps == 2 and r.error > 0.01  # the page warns on this


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_on_tiny_models(tiny, arch, method):
    ck = tiny[arch]
    head = build_head(ck, "own")
    r = attribute(ck, head, text=TEXT, method=method, target=1, window=2)
    a = analyze(ck, head, TEXT)
    assert r.tokens == a.tokens and r.scores.shape == (len(a.tokens),)
    assert np.isfinite(r.scores).all() and np.abs(r.scores).sum() > 0
    assert r.target == 1 and r.target_label == "beta"
    if method == "lig":
        assert r.f_x == pytest.approx(a.logits[1], abs=1e-4)  # inputs_embeds path equals input_ids path
        assert r.error <= 0.01
    if method == "saliency":
        assert (r.scores >= 0).all()
    if method == "occlusion":
        assert r.window == 2


@pytest.mark.parametrize("baseline", ["pad", "mask", "zero"])
def test_baselines_and_foreign_heads(tiny, baseline):
    ck = tiny["roberta"]
    r = attribute(ck, build_head(ck, "mean-linear", seed=3), text=TEXT, method="lig", baseline=baseline)
    assert r.error <= 0.01 and r.baseline == baseline


def test_the_shared_model_is_left_untouched(tiny):
    ck = tiny["bert"]
    before = {n: p.clone() for n, p in ck.model.named_parameters()}
    for method in METHODS:
        attribute(ck, build_head(ck, "own"), text=TEXT, method=method)
    assert not ck.model.training
    for n, p in ck.model.named_parameters():
        assert not p.requires_grad and p.grad is None
        assert torch.equal(p, before[n])


def test_word_merge_on_a_known_wordpiece_split(tiny):
    r = attribute(tiny["bert"], build_head(tiny["bert"], "own"), text="Unbelievably, tokenization works",
                  method="saliency")
    assert r.tokens == ("[CLS]", "un", "##bel", "##ie", "##va", "##bly", ",", "token", "##ization", "works", "[SEP]")
    words, scores = r.words()
    assert words == ("[CLS]", "unbelievably", ",", "tokenization", "works", "[SEP]")
    assert scores[1] == pytest.approx(r.scores[1:6].sum())
    assert scores[3] == pytest.approx(r.scores[7:9].sum())
    merged = merge_words(("<s>", "Ġgo", "od", "</s>"), (None, 0, 0, None), scores=[0, 1, 2, 0])[0]
    assert merged == ("<s>", "good", "</s>")


def test_aopc_on_a_toy_model_with_a_known_answer():
    # 10 text tokens between [CLS]=101 and [SEP]=102; the probability is the share of the 4 "good" tokens present.
    good = {1, 2, 3, 4}
    ids = [101, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 102]
    special = [True] + [False] * 10 + [True]

    def prob(batch):
        return np.array([len(good & set(s)) / 4 for s in batch])

    perfect = [0, 10, 9, 8, 7, 0, 0, 0, 0, 0, 0, 0]
    # k = 1..5 tokens: deleting min(k,4) good tokens drops p by min(k,4)/4; keeping them leaves 1 - that.
    comp, suff = faithfulness.token_aopc(prob, ids, special=special, scores=perfect)
    assert comp == pytest.approx(np.mean([.25, .5, .75, 1, 1]))
    assert suff == pytest.approx(np.mean([.75, .5, .25, 0, 0]))
    worst = [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0]
    comp_w, suff_w = faithfulness.token_aopc(prob, ids, special=special, scores=worst)
    assert comp_w == pytest.approx(0.0) and suff_w == pytest.approx(1.0)


def test_compare_scores_every_method(tiny):
    ck = tiny["distilbert"]
    rows = faithfulness.compare_methods(ck, build_head(ck, "own"), text=TEXT)
    assert [r.method for r in rows] == list(METHODS)
    assert all(np.isfinite([r.comprehensiveness, r.sufficiency]).all() for r in rows)
    assert rows[0].completeness_error <= 0.01 and rows[2].completeness_error is None


def test_model_prob_matches_analysis(tiny):
    ck = tiny["roberta"]
    head = build_head(ck, "own")
    a = analyze(ck, head, TEXT)
    p = faithfulness.model_prob(ck, head, target=2)([list(a.token_ids), list(a.token_ids[:4]) + [a.token_ids[-1]]])
    assert p[0] == pytest.approx(a.softmax[2], abs=1e-5)  # padding in the batch changes nothing


def test_bad_requests_are_one_line_errors(tiny):
    ck = tiny["bert"]
    head = build_head(ck, "own")
    with pytest.raises(AttributionError, match="unknown method"):
        attribute(ck, head, text=TEXT, method="deep_taylor")
    with pytest.raises(AttributionError, match="out of range"):
        attribute(ck, head, text=TEXT, method="saliency", target=7)


@pytest.mark.parametrize("method", METHODS)
def test_cli_attributions_contract(tiny_root, capsys, method):
    code = main(["analyze", "--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT, "--json",
                 "--attributions", method])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    at = out["attributions"]
    assert at["method"] == method and at["target"] == out["predicted"]
    assert len(at["tokens"]) == len(at["scores"]) == len(out["tokens"])
    if method == "lig":
        assert abs(sum(at["scores"]) - (at["f_x"] - at["f_baseline"])) <= 0.01 * abs(at["f_x"] - at["f_baseline"]) + 1e-5
        assert abs(at["delta"]) <= 0.01 * abs(at["f_x"] - at["f_baseline"])


def test_cli_rejects_unknown_method(capsys):
    assert main(["analyze", "--text", "hi", "--attributions", "deep_taylor"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and len(err.strip().splitlines()) == 1
    choices = build_parser()._subparsers._group_actions[0].choices["analyze"]._option_string_actions
    assert tuple(choices["--attributions"].choices) == METHODS
