"""Real browser: switch the language once, then every page speaks Vietnamese."""
import pytest

from explorer.text.i18n import strings

from conftest import wait_idle

pytestmark = pytest.mark.browser


def _vietnamese_only() -> list[str]:
    en = set(strings("en").values())
    return [v for v in strings("vi").values() if len(v) > 12 and v not in en and "{" not in v]


def test_language_switch_applies_to_every_page(page):
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.keyboard.type("Tiếng Việt")  # typed: with every page listed, the sidebar's list may open below the fold
    page.keyboard.press("Enter")
    wait_idle(page)
    vi = _vietnamese_only()
    links = page.locator("[data-testid=stSidebarNav] a")
    n = links.count()
    assert n >= 11
    for i in range(n):
        href = links.nth(i).get_attribute("href")
        links.nth(i).click()
        page.wait_for_url(href)
        wait_idle(page)
        page.locator("[data-testid=stMain] h1").first.wait_for()
        main = page.locator("[data-testid=stMain]").inner_text()
        assert any(v in main for v in vi), f"page {i} shows no Vietnamese: {main[:200]}"


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
