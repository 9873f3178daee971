"""Real browser: what a person set up is still there after visiting other pages."""
import pytest
from playwright.sync_api import expect

from explorer.text import i18n

from browser_plots import chart
from conftest import upload, wait_idle

pytestmark = pytest.mark.browser
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731


SLUG = {"data.title": "labels", "finetune.title": "fine-tune", "quiz.title": "review-quiz"}


def _go(page, key: str) -> None:
    page.locator(f"[data-testid=stSidebarNav] a[href$='/{SLUG[key]}']").first.click()
    page.wait_for_url(f"**/{SLUG[key]}")
    wait_idle(page)
    page.get_by_role("heading", name=T(key)).first.wait_for()


def _main(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def test_uploaded_csv_merged_in_one_click_is_kept_and_trained_on(page, tmp_path):
    spellings = ["positive", "Positive", "positive ", "negative", "neutral"] * 8
    rows = "\n".join(f'"text number {i} is {lab.strip().lower()}","{lab}"' for i, lab in enumerate(spellings))
    csv = tmp_path / "spellings.csv"
    csv.write_text("text,label\n" + rows + "\n")
    _go(page, "data.title")
    page.get_by_test_id("stRadioGroup").get_by_text(T("data.source_upload")).click()
    wait_idle(page)
    upload(page, str(csv), "spellings.csv")
    assert sorted(chart(page, T("data.counts_title"))["data"][0]["x"]) == ["Positive", "negative", "neutral", "positive", "positive "]
    page.get_by_role("button", name=T("data.merge")).click()  # once
    wait_idle(page)
    assert sorted(chart(page, T("data.counts_title"))["data"][0]["x"]) == ["negative", "neutral", "positive"]
    assert T("data.issue_near_duplicate_labels") not in _main(page)
    _go(page, "finetune.title")
    merged = i18n.n("data.version", 16, "en", name="spellings.csv", version=2)  # 8 "Positive" + 8 "positive "
    assert T("finetune.data", name=merged, n=3, labels="negative, neutral, positive") in _main(page)
    _go(page, "data.title")
    assert "spellings.csv" in _main(page)  # not the demo tweets
    assert sorted(chart(page, T("data.counts_title"))["data"][0]["x"]) == ["negative", "neutral", "positive"]


def test_quiz_answers_survive_see_it_live(page):
    _go(page, "quiz.title")
    first = page.locator("[data-testid=stRadio]").first
    # the option's own click event: a mouse click lands wherever the option is drawn at that moment, and the
    # page's layout can still move under it (another option would be picked)
    first.locator("[data-testid=stRadioOption]").filter(has_text=T("quiz.what_head.o1")).dispatch_event("click")
    wait_idle(page)
    # the feedback, once the rerun the pick starts has drawn it (wait_idle can return before that rerun begins)
    expect(page.locator("[data-testid=stMain]")).to_contain_text(T("quiz.correct"), timeout=30_000)
    page.get_by_role("link", name=T("quiz.see_live")).first.click()
    wait_idle(page)
    _go(page, "quiz.title")
    # Options are shuffled per session: find the picked one by its text, not by its place.
    assert first.locator("label", has_text=T("quiz.what_head.o1")).locator("input").is_checked()
    assert T("quiz.correct") in _main(page)
