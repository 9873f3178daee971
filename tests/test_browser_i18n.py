"""Real browser: switch the language once, then every page speaks Vietnamese."""
import pytest

from explorer.i18n import strings

from conftest import wait_idle

pytestmark = pytest.mark.browser


def _vietnamese_only() -> list[str]:
    en = set(strings("en").values())
    return [v for v in strings("vi").values() if len(v) > 12 and v not in en and "{" not in v]


def test_language_switch_applies_to_every_page(page):
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.get_by_role("option", name="Tiếng Việt").click()
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
