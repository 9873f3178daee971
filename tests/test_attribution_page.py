"""Attributions page: AppTest on a tiny model (the page's workings), and one real-browser run on the served app's
embedded model (the smoke test on real weights)."""
import json

import pytest

from streamlit.testing.v1 import AppTest

from explorer.explain import attribution as attr

from conftest import ROOT, wait_idle
from explore_helpers import pick_checkpoint

SHORT = "I love this movie, the acting is wonderful!"


def _page(checkpoint: str, text=SHORT):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    pick_checkpoint(at, checkpoint)
    at.session_state["text"] = text
    at.run()
    at.switch_page("pages/attributions.py").run()
    assert not at.exception, at.exception
    return at


def test_page_shows_complete_lig_and_switches_methods(tiny_root):
    at = _page(tiny_root / "tiny-bert")
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


def test_long_occlusion_waits_for_run_and_warns(tiny_root):
    at = _page(tiny_root / "tiny-bert", " ".join(["word"] * 200))
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
