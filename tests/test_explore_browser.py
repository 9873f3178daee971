"""Real browser: type a text, then walk every Explore page from the sidebar; no exception anywhere."""
import time

from conftest import wait_idle

PAGES = ["Tokens & attention", "Pooled vector", "Dropout", "Logits & probabilities", "Compare heads"]
TEXT = "The plot was thin but the actors saved it."


def test_walk_explore_pages_after_typing(page):
    box = page.locator("[data-testid=stSidebar] textarea")
    box.fill(TEXT)
    box.press("Control+Enter")
    wait_idle(page)
    timings = {}
    for title in PAGES:
        t0 = time.perf_counter()
        page.locator("[data-testid=stSidebarNav] a", has_text=title).first.click()
        wait_idle(page)
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        timings[title] = time.perf_counter() - t0
        assert page.locator("[data-testid=stAlertContentError]").count() == 0, title
        assert page.locator("[data-testid=stSidebar] textarea").input_value() == TEXT  # the text survives
    # The tokens page's on-demand flow, then a changed text redraws every chart without an exception.
    page.locator("[data-testid=stSidebarNav] a", has_text=PAGES[0]).first.click()
    wait_idle(page)
    page.get_by_text("Compute max-flow").click()
    wait_idle(page)
    assert page.get_by_text("max-flow from [CLS]").count() >= 1
    box.fill(TEXT + " Really.")
    t0 = time.perf_counter()
    box.press("Control+Enter")
    wait_idle(page)
    print(f"browser: page walk {timings}; changed text on tokens page with flow {time.perf_counter() - t0:.2f}s")
