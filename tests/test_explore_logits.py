"""Logits page: probabilities and losses against torch's own modules, the two traps, AppTest."""
import numpy as np
import pytest
import torch

from explorer.model import problem as P
from explorer.model.analysis import analyze
from explorer.model.heads import build_head

from explore_helpers import TEXT, open_page, specs, values

Z = np.array([1.5, -0.3, 0.2])


@pytest.mark.parametrize("temp", [0.1, 1.0, 3.0])
def test_softmax_sums_to_one(sentiment, temp):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    assert P.softmax(a.logits, temp).sum() == pytest.approx(1.0)
    np.testing.assert_allclose(a.softmax, torch.softmax(torch.tensor(a.logits), -1).numpy(), atol=1e-9)
    assert P.softmax(Z, 0.1).max() > P.softmax(Z, 1.0).max() > P.softmax(Z, 3.0).max()


def test_losses_equal_torch_modules():
    z = torch.tensor(Z, dtype=torch.float32)[None]
    assert P.loss(Z, 2, "single_label_classification") == pytest.approx(
        float(torch.nn.CrossEntropyLoss()(z, torch.tensor([2]))), rel=1e-6)
    y = np.array([1.0, 0.0, 1.0])
    assert P.loss(Z, y, "multi_label_classification") == pytest.approx(
        float(torch.nn.BCEWithLogitsLoss()(z, torch.tensor(y, dtype=torch.float32)[None])), rel=1e-6)
    assert P.loss(Z, np.full(3, 0.5), "regression") == pytest.approx(
        float(torch.nn.MSELoss()(z, torch.full((1, 3), 0.5))), rel=1e-6)


def test_num_labels_one_trap_matches_transformers_rules():
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64, num_labels=1)
    model = BertForSequenceClassification(cfg).eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([[101, 2204, 102]]), labels=torch.tensor([0.7]))
    z = float(out.logits[0, 0])
    trap = P.single_output_trap(z, 0.7, model.config.problem_type)
    assert model.config.problem_type == "regression"  # HF set it while computing the loss
    assert trap["loss"] == pytest.approx(float(out.loss), rel=1e-5)
    assert P.single_output_trap(z, 0.7)["pipeline_score"] == pytest.approx(1 / (1 + np.exp(-z)))
    assert trap["pipeline_score"] == pytest.approx(z)
    assert P.pipeline_function(1, None) == "sigmoid" and P.pipeline_function(3, None) == "softmax"


def test_bce_integer_label_errors_are_torchs_own():
    errs = P.bce_integer_label_errors(Z, 1)
    assert "Target size (torch.Size([1])) must be the same as input size (torch.Size([1, 3]))" in errs["shape"]
    assert "Long" in errs["dtype"]


def test_logits_page_apptest():
    at = open_page("logits")
    s = specs(at)
    assert len(s) == 2 and not at.error
    sm = values(s[1]["data"][0]["y"])
    assert sm.sum() == pytest.approx(1.0, abs=1e-6)
    at.slider(key="logits_temperature").set_value(4.0).run()
    assert values(specs(at)[1]["data"][0]["y"]).max() < sm.max()
    at.selectbox(key="logits_target_label").set_value(2).run()
    logits = values(specs(at)[0]["data"][0]["y"])
    ce = float(torch.nn.CrossEntropyLoss()(torch.tensor(logits, dtype=torch.float32)[None], torch.tensor([2])))
    assert float(at.metric[0].value) == pytest.approx(ce, abs=1e-3)
    at.selectbox(key="logits_ptype").set_value("multi_label_classification").run()
    at.multiselect(key="logits_target_multi").select("positive").run()
    assert at.metric[0].label == "BCEWithLogitsLoss"
    at.selectbox(key="logits_ptype").set_value("regression").run()
    assert at.metric[0].label == "MSELoss" and not at.exception
    assert any("must be the same as input size" in c.value for c in at.code)
    at.session_state["checkpoint"], at.session_state["head"] = "minilm", "distilbert"
    at.run()
    assert not at.exception and not at.error
