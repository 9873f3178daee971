"""Sampled explainers (KernelSHAP, LIME, GradientShap through Captum): seeds, words, caps, every method at
512 tokens, every architecture, faithfulness, the CLI's JSON and the Attributions page."""
import json

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from explorer.cli import main
from explorer.explain import faithfulness, sampled
from explorer.explain.attribution import METHODS, AttributionError, attribute
from explorer.model.checkpoints import embedded_encoder_dir, load_checkpoint
from explorer.model.heads import build_head
from explorer.text.errors import ExplorerError
from test_archs import arch_root, archs  # noqa: F401 - the tiny checkpoint of every architecture, built once
from tests.tiny_archs import ARCHS

TEXT = "Unbelievably, the quick brown fox jumps over the lazy dog."
WORDS = ("kernel_shap", "lime")


@pytest.mark.parametrize("method", WORDS)
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.slow
def test_word_methods_run_on_every_architecture_and_repeat_with_a_seed(archs, arch, method):  # noqa: F811
    ck = archs[arch]
    head = build_head(ck, "own")
    r = attribute(ck, head, text=TEXT, method=method, n_samples=40, seed=3)
    again = attribute(ck, head, text=TEXT, method=method, n_samples=40, seed=3)
    np.testing.assert_array_equal(r.scores, again.scores)
    assert r.sampling == again.sampling and r.sampling.seed == 3 and r.sampling.second_seed == 4
    assert np.isfinite(r.scores).all() and np.abs(r.scores).sum() > 0
    assert np.all(r.scores[list(r.special)] == 0)
    assert r.sampling.features == len(r.words()[0]) - sum(r.special)  # one feature per word, none per special
    assert not np.array_equal(r.scores, attribute(ck, head, text=TEXT, method=method, n_samples=40, seed=4).scores)


def test_a_words_weight_is_shared_by_its_tokens_and_seeds_leave_the_generators_alone(tiny):
    ck = tiny["bert"]
    torch.manual_seed(11)
    np.random.seed(11)
    want = torch.rand(3), np.random.rand(3)
    torch.manual_seed(11)
    np.random.seed(11)
    r = attribute(ck, build_head(ck, "own"), text="Unbelievably, tokenization works", method="lime", n_samples=50)
    assert torch.equal(torch.rand(3), want[0]) and np.array_equal(np.random.rand(3), want[1])
    assert r.tokens[1:6] == ("un", "##bel", "##ie", "##va", "##bly")
    assert len(set(r.scores[1:6])) == 1  # "unbelievably" is one feature: its weight split evenly
    words, scores = r.words()
    assert words[1] == "unbelievably" and scores[1] == pytest.approx(5 * r.scores[1])
    assert r.sampling.features == 4  # unbelievably , tokenization works


def test_kernel_shap_adds_up_to_the_difference(tiny):
    """Captum's KernelSHAP pins the all-on and all-off samples: the scores sum to f(x) − f(baseline)."""
    ck = tiny["roberta"]
    r = attribute(ck, build_head(ck, "mean-linear", seed=3), text=TEXT, method="kernel_shap", target=0)
    assert abs(r.f_x - r.f_baseline) > 0.01  # the tiny models' own heads barely move: this one does
    # Absolute, on the scale of the outputs: the pinned samples are met by a weighted least-squares fit, whose
    # rounding is relative to f's values, not to their (here small) difference.
    assert r.scores.sum() == pytest.approx(r.f_x - r.f_baseline, abs=1e-4 * max(1.0, abs(r.f_x), abs(r.f_baseline)))
    assert r.delta is None and r.n_steps is None  # no completeness claim beyond that


def test_gradient_shap_completes_with_many_samples_and_ranks_like_lig(tiny):
    ck = tiny["bert"]
    head = build_head(ck, "mean-linear", seed=3)  # f(x) − f(baseline) ≈ 0.03 (the own head's is ≈ 1e-5)
    few = attribute(ck, head, text=TEXT, method="gradient_shap", target=0, n_samples=8)
    many = attribute(ck, head, text=TEXT, method="gradient_shap", target=0, n_samples=256)
    lig = attribute(ck, head, text=TEXT, method="lig", target=0)
    assert many.n_steps == 256 and many.error <= 0.01 < few.error  # Monte-Carlo IG converges with samples
    assert many.delta == pytest.approx(many.scores.sum() - (many.f_x - many.f_baseline))
    assert many.f_x == pytest.approx(lig.f_x) and many.f_baseline == pytest.approx(lig.f_baseline)
    text = [i for i, s in enumerate(many.special) if not s]
    assert spearmanr(many.scores[text], lig.scores[text]).statistic > 0.9
    assert np.all(many.scores[list(many.special)] == 0) and many.sampling.agreement > 0.9


@pytest.fixture(scope="module")
def long_bert(tiny_root):
    """A BERT of one 8-wide layer and 512 positions: a 512-token forward costs little more than its attention."""
    cfg = BertConfig(vocab_size=30522, hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                     intermediate_size=16, max_position_embeddings=512, num_labels=2)
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(tiny_root / "long-bert")
    AutoTokenizer.from_pretrained(str(embedded_encoder_dir())).save_pretrained(tiny_root / "long-bert")
    return load_checkpoint(str(tiny_root / "long-bert"))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_at_512_tokens_within_its_caps(long_bert, method):
    ck = long_bert
    r = attribute(ck, build_head(ck, "own"), text="word " * 600, method=method, target=0)
    assert len(r.tokens) == 512 and r.truncated_tokens > 0 and np.isfinite(r.scores).all()
    if method in sampled.METHODS:  # the default fits the cap exactly at 512 tokens
        assert r.sampling.n_samples == sampled.DEFAULT_SAMPLES[method]
        assert sampled.DEFAULT_SAMPLES[method] * 512 <= sampled.SAMPLE_TOKENS_CAP[method]
        assert r.sampling.underdetermined == (method != "gradient_shap")  # 510 words, 200 samples: said so


def test_samples_beyond_the_caps_are_one_line_in_each_language(long_bert):
    ck = long_bert
    head = build_head(ck, "own")
    with pytest.raises(AttributionError) as err:
        attribute(ck, head, text="word " * 600, method="kernel_shap", n_samples=201)
    assert err.value.key == "attribution_samples_cap"
    for lang in ("en", "vi"):
        line = err.value.message(lang)
        assert "201" in line and "512" in line and "200" in line and "\n" not in line
    assert err.value.message("vi") != err.value.message("en")
    with pytest.raises(AttributionError, match="outside its caps"):
        attribute(ck, head, text=TEXT, method="lime", n_samples=sampled.MIN_SAMPLES - 1)
    assert sampled.samples_for("lime", 1024) == 100  # a longer text gets fewer samples by default
    with pytest.raises(ExplorerError):
        sampled.samples_for("gradient_shap", 64 * 512 // (sampled.MIN_SAMPLES - 1))


def test_faithfulness_scores_the_sampled_methods(tiny):
    ck = tiny["distilbert"]
    rows = faithfulness.compare_methods(ck, build_head(ck, "own"), text=TEXT, methods=sampled.METHODS)
    assert [r.method for r in rows] == list(sampled.METHODS)
    assert all(np.isfinite([r.comprehensiveness, r.sufficiency]).all() for r in rows)
    assert rows[0].completeness_error is None and rows[2].completeness_error is not None


def test_cli_json_states_the_sampling(tiny_root, capsys):
    assert main(["analyze", "--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT, "--json",
                 "--attributions", "lime"]) == 0
    s = json.loads(capsys.readouterr().out)["attributions"]["sampling"]
    assert s["n_samples"] == sampled.DEFAULT_SAMPLES["lime"] and (s["seed"], s["second_seed"]) == (0, 1)
    assert not s["underdetermined"] and -1 <= s["agreement"] <= 1 and s["perturbations_per_eval"] >= 1 and s["features"] == 12
    assert main(["analyze", "--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT,
                 "--attributions", "kernel_shap"]) == 0
    assert "sampled: 200 samples, seed 0; Spearman over words against seed 1" in capsys.readouterr().out


def test_page_offers_the_sampled_methods_and_states_their_noise(tiny_root):
    from test_attribution_page import _page

    at = _page(tiny_root / "tiny-bert")
    options = at.selectbox(key="attr_method").options
    assert {"KernelSHAP (words, sampled)", "LIME (words, sampled)", "GradientShap (sampled gradients)"} <= set(options)
    at.selectbox(key="attr_method").set_value("kernel_shap").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Sampled: 200 samples, seed 0" in captions and "Spearman ρ = " in captions
    assert at.get("plotly_chart")
    at.selectbox(key="attr_method").set_value("gradient_shap").run()
    assert not at.exception, at.exception
    assert "Sampled: 64 random points on the path" in " ".join(c.value for c in at.caption)
    assert {m.label for m in at.metric} >= {"Σ attributions", "f(x) − f(baseline)"}  # its completeness, as lig's
    # It warned "Not converged" on every text; a sampled method promises no completeness, so the gap
    # is stated as information, not as a failure to converge
    assert not any("Not converged" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any(i.value.startswith("Sampled, so no completeness is promised: here the scores add up to "
                                  "f(x) − f(baseline) within ") and "(64 samples)" in i.value for i in at.info)


def test_gradient_shap_has_nothing_to_converge(tiny):
    ck = tiny["bert"]
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="gradient_shap")
    assert r.converged is None and r.error is not None and r.to_dict()["converged"] is None
    assert attribute(ck, build_head(ck, "own"), text=TEXT,
                     method="lig").converged is not None  # lig still refines and says so
