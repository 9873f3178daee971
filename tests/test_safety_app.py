"""Visitors never see a traceback: a broken checkpoint and an unexpected failure are one st.error line."""
import pytest

import explorer.model.analysis
from explorer.text import i18n
from tests.conftest import ROOT
from tests.test_app import _app
from tests.hostile import BROKEN, broken_checkpoints


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    return broken_checkpoints(tmp_path_factory.mktemp("broken"))


def _home(**state):
    return _app(None, **state)  # the app's own AppTest opener; roots come from monkeypatch here


@pytest.mark.parametrize("name", ["ids-0-1-7", "num-labels-5", "invalid-json", "id2label-ints", "vocab-no-unk",
                                  "empty-weights-40M-vocab", "nan-layer-norm-eps", "negative-layers",
                                  "vocab-links-out", "shard-etc-passwd"])
def test_broken_checkpoint_is_one_error_line(broken, monkeypatch, name):
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(broken["ok"].parent))
    at = _home(checkpoint="other…", checkpoint_other=str(broken[name]))
    assert len(at.error) == 1, [e.value for e in at.error]
    msg = at.error[0].value
    assert "\n" not in msg and "Traceback" not in msg and BROKEN[name][1] in msg
    assert not at.metric


@pytest.mark.parametrize("name, words", [("vocab-links-out", "liên kết ra ngoài HEAD_EXPLORER_ROOTS"),
                                         ("nan-layer-norm-eps", "layer_norm_eps = nan, không phải là một số"),
                                         ("empty-weights-40M-vocab", "HEAD_EXPLORER_NEW_WEIGHTS_MB")])
def test_broken_checkpoint_line_is_vietnamese_on_a_vietnamese_page(broken, monkeypatch, name, words):
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(broken["ok"].parent))
    at = _home(checkpoint="other…", checkpoint_other=str(broken[name]), lang="vi")
    assert [e.value for e in at.error if words in e.value] == [e.value for e in at.error] != [], \
        [e.value for e in at.error]


def test_unexpected_error_is_one_translated_line_without_details(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("secret detail /etc/passwd")

    monkeypatch.setattr(explorer.model.analysis, "analyze", boom)
    for lang in ("en", "vi"):
        at = _home(text=f"a text no cache has seen ({lang})", lang=lang)
        assert len(at.error) == 1
        assert at.error[0].value == i18n.t("errors.unexpected", lang, kind="RuntimeError")
        assert "secret" not in at.error[0].value


def test_a_failing_sidebar_is_one_translated_line_and_the_page_still_runs(monkeypatch):
    from explorer import ui

    def boom():
        raise RuntimeError("secret detail")

    monkeypatch.setattr(ui, "session_checkpoint_names", boom)
    at = _home(lang="vi")
    assert not at.exception and [e.value for e in at.error] == [i18n.t("errors.unexpected", "vi", kind="RuntimeError")]
    assert at.metric  # the page below the sidebar still ran


def test_streamlit_control_flow_passes_through(monkeypatch):
    """st.stop() inside a page must still just stop (no error box): it is a BaseException."""
    import streamlit as st

    def stop(*args, **kwargs):
        st.stop()

    monkeypatch.setattr(explorer.model.analysis, "analyze", stop)
    at = _home(text="another unseen text for the stop test")
    assert not at.error and not at.metric


def test_config_hides_error_details():
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["server"]["address"] == "127.0.0.1"
