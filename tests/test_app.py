"""The app shell and the pipeline page, through Streamlit's AppTest.

Each scenario is a fresh AppTest with the sidebar picks preset in session state: in this
Streamlit version AppTest's reruns of an st.navigation app execute only the page script,
not app.py, so sidebar widgets vanish after the first run and cannot be driven by set_value.
"""
import pytest
from streamlit.testing.v1 import AppTest

from explorer import i18n
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
