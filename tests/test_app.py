"""The app shell and the pipeline page, through Streamlit's AppTest.

Each scenario is a fresh AppTest with the sidebar picks preset in session state: in this
Streamlit version AppTest's reruns of an st.navigation app execute only the page script,
not app.py, so sidebar widgets vanish after the first run and cannot be driven by set_value.
"""
import pytest
from streamlit.testing.v1 import AppTest

from explorer.text import i18n
from tests.conftest import ROOT


def _app(tiny_root, **state) -> AppTest:  # tiny_root sets HEAD_EXPLORER_ROOTS
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in state.items():
        app.session_state[key] = value
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_default_run_shows_a_prediction(tiny_root):
    at = _app(tiny_root)
    assert not at.error
    assert at.title[0].value == i18n.t("home.title", "en")
    assert at.metric[0].label == i18n.t("home.prediction", "en")
    assert at.metric[0].value == "positive"  # the default text is clearly positive
    assert not at.warning  # the sentiment head is trained
    assert len(at.get("plotly_chart")) == 2
    assert [s.key for s in at.sidebar.selectbox] == ["lang", "checkpoint", "head"]


def test_minilm_shows_the_untrained_warning(tiny_root):
    at = _app(tiny_root, checkpoint="minilm", seed=4)
    warnings = [w.value for w in at.warning]
    assert any("classifier.weight" in w and "seed 4" in w for w in warnings), warnings
    assert at.metric[0].value in ("LABEL_0", "LABEL_1")


def test_empty_text_is_a_one_line_error(tiny_root):
    at = _app(tiny_root, text="  ")
    assert len(at.error) == 1 and "empty" in at.error[0].value and "\n" not in at.error[0].value
    assert not at.metric


def test_language_switch_changes_the_title(tiny_root):
    at = _app(tiny_root, lang="vi")
    assert at.title[0].value == i18n.t("home.title", "vi") != i18n.t("home.title", "en")
    assert at.metric[0].label == i18n.t("home.prediction", "vi")
    assert at.sidebar.selectbox(key="lang").label == i18n.t("app.language", "vi")


def test_other_checkpoint_outside_roots_is_an_error(tiny_root, tmp_path):
    at = _app(tiny_root, checkpoint="other…", checkpoint_other=str(tmp_path))
    assert at.sidebar.text_input(key="checkpoint_other").value == str(tmp_path)
    assert len(at.error) == 1 and "not an allowed checkpoint folder" in at.error[0].value
    assert not at.metric


def test_other_checkpoint_inside_roots_loads(tiny_root):
    at = _app(tiny_root, checkpoint="other…", checkpoint_other=str(tiny_root / "tiny-distilbert"))
    assert not at.error
    assert at.metric[0].value in ("alpha", "beta", "gamma")


def test_rerun_keeps_the_sidebar(tiny_root):
    at = _app(tiny_root, checkpoint="minilm")
    at.run()
    assert [s.key for s in at.sidebar.selectbox] == ["lang", "checkpoint", "head"]
    assert any("classifier.weight" in w.value for w in at.warning)


def test_pipeline_draws_the_top_labels_of_a_10000_label_checkpoint(tiny_root):
    """A 10,000-label head: the charts held 20,000 bars (~700 kB) and the browser took 49 s to draw them.
    Now each chart shows the 20 largest, a caption says how many are hidden, and a download has them all."""
    import json
    import time

    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from explorer import ui
    from explorer.model import problem
    from explorer.model.checkpoints import embedded_encoder_dir

    n, path = 10_000, tiny_root / "tiny-10000-labels"
    if not path.exists():
        torch.manual_seed(0)
        cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                         num_labels=n, id2label={i: f"label_{i}" for i in range(n)})
        BertForSequenceClassification(cfg).save_pretrained(path)
        AutoTokenizer.from_pretrained(str(embedded_encoder_dir())).save_pretrained(path)
    start = time.perf_counter()
    at = _app(tiny_root, checkpoint=ui.OTHER, checkpoint_other=str(path))
    seconds = time.perf_counter() - start
    assert not at.error
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    top = problem.TOP_LABELS
    for fig in charts:
        (bar,) = fig["data"]
        assert len(bar["x"]) == top and bar["x"][0] == at.metric[0].value  # largest first: the prediction
        assert list(bar["y"]) == sorted(bar["y"], reverse=True)
    assert sum(len(c.proto.spec) for c in at.get("plotly_chart")) < 10_000  # was ~700 kB
    hidden = i18n.t("home.labels_hidden", "en", shown=top, hidden=n - top, n=n)
    assert hidden in [c.value for c in at.caption]
    assert at.get("download_button")[0].proto.label == i18n.t("home.labels_csv", "en")
    assert seconds < 60, seconds  # AppTest, cold: ~2 s here (the cost was the browser's drawing)


def test_top_labels_keep_few_labels_in_order_and_pick_the_largest_of_many():
    from explorer.model.problem import label_rows, top_labels

    assert top_labels([0.3, -1.0, 2.0]).tolist() == [0, 1, 2]
    assert top_labels([0.3, -1.0, 2.0, 5.0, 1.0], k=3).tolist() == [3, 2, 4]
    rows = label_rows(("a", "b"), [1.0, 2.0], [0.27, 0.73], [0.73, 0.88])
    assert rows[1] == {"label": "b", "logit": 2.0, "softmax": 0.73, "sigmoid": 0.88}
