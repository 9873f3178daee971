"""The smaller view fixes: the softmax box sums to 1 and counts text B, the mixing chart's
axis says cosine runs −1 to 1, the Logits page's true label starts at the prediction, "other…" with
no path asks for one, and the faithfulness headers say which way is better in words."""
import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explore_helpers import chain_boxes, open_page, specs, values
from explorer.model.problem import rounded_to_sum


@pytest.mark.parametrize("p", [[0.004, 0.074, 0.922], [1 / 3] * 3, [0.0049, 0.0749, 0.9202], [0.5, 0.5],
                               list(np.random.default_rng(0).dirichlet(np.ones(28)))])
def test_rounded_to_sum_keeps_the_sum_and_moves_each_less_than_a_unit(p):
    r = rounded_to_sum(np.array(p))
    assert round(r.sum(), 9) == 1.0 and np.all(np.abs(r - np.array(p)) < 0.01)
    assert np.allclose(r * 100, np.round(r * 100))


def _app(**state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_softmax_box_sums_to_one_and_counts_text_b():
    at = _app(text="I love it.", text_pair="Not at all.")
    boxes = [value for _, value in chain_boxes(at)]
    assert boxes[0] == "10 + 11 characters (text A + text B)"
    probs = [b for b in boxes if b.count(", ") == 2][1]  # the logits box, then the softmax box
    assert round(sum(float(v) for v in probs.split(", ")), 6) == 1.0


def test_mixing_chart_axis_says_cosine_runs_minus_one_to_one():
    at = open_page("tokens")
    mixing = next(s for s in specs(at) if s["layout"]["title"]["text"].startswith("First token"))
    assert "cosine (−1 to 1)" in mixing["layout"]["yaxis"]["title"]["text"]


def test_logits_true_label_follows_the_prediction_until_picked():
    at = open_page("logits", text="I hate this film, it is awful.")
    logits = values(specs(at)[0]["data"][0]["y"])
    assert at.selectbox(key="logits_target_label").value == int(np.argmax(logits)) == 0
    ce = float(torch.nn.CrossEntropyLoss()(torch.tensor(logits, dtype=torch.float32)[None], torch.tensor([0])))
    assert float(at.metric[0].value) == pytest.approx(ce, abs=1e-3) and ce < 1.0
    at.session_state["text"] = "I love this film, it is wonderful."
    at.run()
    assert at.selectbox(key="logits_target_label").value == 2  # followed the new prediction
    at.selectbox(key="logits_target_label").set_value(1).run()
    at.session_state["text"] = "I hate this film, it is awful."
    at.run()
    assert at.selectbox(key="logits_target_label").value == 1  # the user's pick stays


def test_other_with_no_path_asks_for_one_instead_of_showing_a_model():
    at = _app(checkpoint="other…", checkpoint_other="  ")
    assert not at.error and not at.metric and not at.get("plotly_chart")
    assert any("Type the checkpoint's folder" in i.value for i in at.info)


def test_faithfulness_headers_say_better_in_words(tiny_root):
    at = open_page("attributions", checkpoint=str(tiny_root / "tiny-bert"), text="Great film.")
    at.button(key="attr_faith_run").click().run()
    cols = list(at.dataframe[0].value.columns)
    assert "Comprehensiveness (higher is better)" in cols and "Sufficiency (lower is better)" in cols
    assert not any("↑" in c or "↓" in c for c in cols)


@pytest.mark.parametrize("page", ["audit", "explain_data", "finetune", "data"])
def test_other_with_no_path_on_the_data_pages_asks_instead_of_using_the_default(page):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    for key, value in {"checkpoint": "other…", "checkpoint_other": "", "lang": "en"}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception and not at.error
    assert any("Type the checkpoint's folder" in i.value for i in at.info)
    # The default model is never named as the one in use (Data still reports the CSV, without a model).
    assert not any("minilm-sentiment" in c.value for c in at.caption)
    assert not at.get("download_button") or page == "data"
