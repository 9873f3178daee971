"""Real browser: a chart's hover label, drawn by plotly.js, speaks the chosen language. (That every page speaks
Vietnamese after one switch in the sidebar is text that AppTest reads: tests/test_vi_pages.py.)"""
import pytest

from conftest import wait_idle

pytestmark = pytest.mark.browser


def _hover_strips(page) -> str:
    """Hover the pooled-vector strips (the page's first chart) at dimension 5 of its first row; the
    hover label's text as drawn."""
    chart = page.locator("[data-testid=stMain] .js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    x, y = chart.evaluate("""gd => { const L = gd._fullLayout;
        return [L.xaxis._offset + L.xaxis.l2p(5), L.yaxis._offset + L.yaxis.l2p(0)]; }""")
    box = chart.bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    label = chart.locator(".hoverlayer .hovertext").first
    label.wait_for()
    return label.text_content()  # SVG text: inner_text is for HTML elements


def test_chart_hovers_speak_the_chosen_language(page, tmp_path):
    """A hover names the dimension in the page's language (it said "dim" in every language)."""
    page.locator("[data-testid=stSidebarNav] a[href$='/pooled-vector']").click()
    wait_idle(page)
    assert "dimension 5:" in _hover_strips(page)
    page.mouse.move(2, 2)
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.keyboard.type("Tiếng Việt")  # typed: with every page listed, the sidebar's list may open below the fold
    page.keyboard.press("Enter")
    wait_idle(page)
    text = _hover_strips(page)
    page.screenshot(path=str(tmp_path / "hover-vi.png"))
    assert "chiều 5:" in text and "dim" not in text
