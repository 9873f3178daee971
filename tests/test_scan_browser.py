"""The Scan page in Chromium, in English and Vietnamese: the Data page's demo with its label names swapped is
scanned as one job (its progress shown, Stop ends it, a new scan finishes), the swap is the first major finding,
a row opens on the Data page with its text in the sidebar, and the downloaded HTML report opens on its own."""
import pytest

from conftest import wait_idle

WORDS = {"en": dict(run="Scan", stop="Stop the scan", permuted="looks permuted", report="Scan report",
                    open="Open this row in"),
         "vi": dict(run="Quét", stop="Dừng quét", permuted="hoán vị", report="Báo cáo quét", open="Mở dòng này trong")}


def _text(page) -> str:
    """Text A in the sidebar, once it shows its value (in either language)."""
    from playwright.sync_api import expect

    box = page.locator("[data-testid=stSidebar] textarea").first
    expect(box).not_to_have_value("", timeout=90_000)
    return box.input_value()


def _go(page, slug: str) -> None:
    """Open a page from the sidebar's navigation, as a click: the link may sit below the sidebar's fold."""
    page.locator(f"[data-testid=stSidebarNav] a[href*='/{slug}']").first.evaluate("a => a.click()")  # ?lang= may follow
    wait_idle(page)


def _to_scan(page) -> None:
    _go(page, "scan-report")


def _demo_swapped(page, per_class: int) -> None:
    _go(page, "labels")
    box = page.locator("[data-testid=stMain] [data-testid=stNumberInput] input").first  # Tweets per label
    box.fill(str(per_class))
    box.press("Enter")
    wait_idle(page)
    swap = page.locator("[data-testid=stMain] [data-testid=stCheckbox] input").first  # Swap the label names
    if not swap.is_checked():
        page.locator("[data-testid=stMain] [data-testid=stCheckbox] label").first.click()
        wait_idle(page)


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_scan_page_in_chromium(page, app_url, browser, lang, tmp_path):
    w = WORDS[lang]
    if lang == "vi":
        page.goto(f"{app_url}/?lang=vi")
        wait_idle(page)
    before = _text(page)
    _demo_swapped(page, 60)
    _to_scan(page)
    # a scan of 180 tweets runs long enough to be stopped: its progress shows, Stop ends it, nothing is reported
    page.get_by_role("button", name=w["run"], exact=True).click()
    page.get_by_role("button", name=w["stop"]).wait_for(timeout=60_000)
    page.locator("[data-testid=stProgress]").first.wait_for(timeout=60_000)
    page.get_by_role("button", name=w["stop"]).click()
    page.get_by_role("button", name=w["stop"]).wait_for(state="detached", timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("mapping.permutation").count() == 0
    # a smaller scan that finishes: the swap is a major finding, open at the top
    _demo_swapped(page, 10)
    _to_scan(page)
    page.get_by_role("button", name=w["run"], exact=True).click()
    page.locator("[data-testid=stExpander]", has_text="mapping.permutation").first.wait_for(timeout=180_000)
    wait_idle(page)
    first = page.locator("[data-testid=stExpander] summary").first.inner_text()  # the first finding listed
    assert "mapping.permutation:" in first and w["permuted"] in first
    # the HTML report, downloaded and opened on its own: the same findings, no script
    with page.expect_download() as got:
        page.locator("[data-testid=stDownloadButton] button").first.click()
    path = tmp_path / "report.html"
    got.value.save_as(path)
    html = path.read_text(encoding="utf-8")
    assert "<script" not in html.lower() and "mapping.permutation" in html
    other = browser.new_page()
    other.goto(path.as_uri())
    assert other.locator("h1").inner_text() == w["report"]
    other.close()
    # a row of the finding opens on the Data page, its text in the sidebar
    page.get_by_role("button", name=w["open"]).first.click()
    page.wait_for_url("**/labels*", timeout=60_000)  # a class's ?lang= stays in the address
    wait_idle(page)
    assert _text(page) != before
