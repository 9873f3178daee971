"""Attributions page: AppTest on the embedded model, and one real-browser run."""
import json

import pytest

from streamlit.testing.v1 import AppTest

from explorer.explain import attribution as attr

from conftest import ROOT, wait_idle

SHORT = "I love this movie, the acting is wonderful!"


def _page(text=SHORT):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["text"] = text
    at.run()
    at.switch_page("pages/attributions.py").run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_page_shows_complete_lig_and_switches_methods():
    at = _page()
    assert [s.value for s in at.success], "lig completeness should be within 1%"
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Σ attributions"]) == pytest.approx(float(metrics["f(x) − f(baseline)"]), rel=0.01)
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert bars["layout"]["title"]["text"].startswith("Tokens ranked")
    assert "love" in " ".join(bars["data"][0]["y"])
    at.selectbox(key="attr_method").set_value("occlusion").run()
    assert not at.exception and not at.metric  # no completeness for occlusion
    at.radio(key="attr_level").set_value("word").run()
    words = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["y"]
    assert not any(w.startswith("##") for w in words)
    at.button(key="attr_faith_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert len(table) == len(attr.METHODS) and table.iloc[:, 1].notna().all()


@pytest.mark.slow
def test_long_occlusion_waits_for_run_and_warns():
    at = _page(" ".join(["word"] * 200))
    at.selectbox(key="attr_method").set_value("occlusion").run()
    warnings = " ".join(w.value for w in at.warning)
    assert "forward passes" in warnings
    assert not at.get("plotly_chart") and at.button(key="attr_run")


def test_attributions_page_in_browser(page, app_url):
    page.goto(app_url + "/attribution")
    wait_idle(page)
    page.get_by_text("Complete: the scores add up").wait_for()
    assert page.locator("span[title]").count() >= 5  # highlighted tokens with scores in tooltips
    page.get_by_role("button", name="Compare all methods").click()
    wait_idle(page)
    page.get_by_text("Comprehensiveness").first.wait_for()
