"""Real browser, in English and Vietnamese: What-if's "Find the smallest change that flips it" runs as a job, marks
the edits in the text, shows how the head saw it, and "use this text" puts the edited text into the sidebar."""
import pytest
from playwright.sync_api import expect

import explorer
from explorer.text import i18n

from conftest import commit, sidebar_text, wait_idle

pytestmark = pytest.mark.browser
TEXT = "I love this movie, it is wonderful"


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_whatif_page_finds_marks_and_uses_the_smallest_change(page, sentiment, lang):
    T = lambda key, **kw: i18n.t(key, lang, **kw)  # noqa: E731
    box = sidebar_text(page)
    commit(box, TEXT)
    if lang == "vi":
        page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
        page.keyboard.type(i18n.LANGUAGES["vi"])
        page.keyboard.press("Enter")
        wait_idle(page)
    page.locator("[data-testid=stSidebarNav] a[href$='/what-if']").first.click()
    page.wait_for_url("**/what-if")
    wait_idle(page)
    page.get_by_role("button", name=T("counterfactual.find")).click()
    wait_idle(page)
    want = explorer.counterfactual(sentiment, TEXT)
    assert want.flipped
    done = T("counterfactual.flipped", edits=len(want.edits), passes=want.forward_passes,
             before=want.predicted_before, after=want.predicted_after)
    expect(page.locator("[data-testid=stAlertContentSuccess]").filter(has_text=done)).to_have_count(1)
    deleted = page.locator("del.cf-delete")
    expect(deleted).to_have_count(len(want.edits))
    assert [deleted.nth(k).inner_text() for k in range(len(want.edits))] == [e.old for e in want.edits]
    assert page.locator("ins.cf-replace").count() == sum(e.kind == "replace" for e in want.edits)
    main = page.locator("[data-testid=stMain]")
    expect(main.get_by_text(T("counterfactual.head_title"), exact=True)).to_have_count(1)
    expect(main.locator(".gtitle").filter(has_text=T("counterfactual.pooled_title"))).to_have_count(1)
    page.get_by_role("button", name=T("counterfactual.use")).click()
    wait_idle(page)
    expect(page.locator("[data-testid=stSidebar]").get_by_label(T("app.text"), exact=True)).to_have_value(want.text)
