"""Real browser: What-if's changed text follows the sidebar's text until edited, and the word diff
reads with spaces between words."""
import pytest

from explorer.text import i18n

from conftest import commit, sidebar_text, wait_idle

pytestmark = pytest.mark.browser
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731


def _type(page, box, text: str) -> None:
    commit(box, text)


def test_whatif_follows_the_sidebar_and_the_diff_keeps_spaces(page):
    sidebar = sidebar_text(page)
    page.locator("[data-testid=stSidebarNav] a[href$='/what-if']").first.click()
    page.wait_for_url("**/what-if")
    wait_idle(page)
    changed = page.get_by_role("textbox", name=T("whatif.text_b"))
    for text in ("The food was cold.", "I love this flight but"):  # the sidebar moves on twice
        _type(page, sidebar, text)
        assert changed.input_value() == text
    assert page.get_by_text(T("whatif.following")).count() == 1
    _type(page, changed, "I hate this flight and")
    diff = page.locator("[data-testid=stMain] [data-testid=stHtml]").first.inner_text()  # the sidebar holds one too
    assert diff.startswith("i love hate this flight but and"), diff  # words as the uncased tokenizer has them
    assert page.get_by_role("button", name=T("whatif.follow_again")).count() == 1
    # the original text was never shown, and the follow button was cut off in a narrow column
    original = page.get_by_role("textbox", name=T("whatif.text_a"))
    assert original.input_value() == "I love this flight but" and original.is_disabled()
    button = page.get_by_role("button", name=T("whatif.follow_again"))
    lines = button.locator("p").first.evaluate("e => e.getClientRects().length")  # an inline label: a box per line
    assert lines == 1, f"the button's label wraps over {lines} lines"
