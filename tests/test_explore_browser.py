"""Real browser: type a text, then walk every Explore page from the sidebar; no exception anywhere."""
import time

from conftest import commit, sidebar_text, wait_idle

PAGES = ["Tokens and attention", "Pooled vector", "Dropout", "Logits and probabilities", "Compare heads"]
TEXT = "The plot was thin but the actors saved it."


def _go(page, title: str) -> float:
    t0 = time.perf_counter()
    page.locator("[data-testid=stSidebarNav] a", has_text=title).first.click()
    wait_idle(page)  # fails on any stException
    return time.perf_counter() - t0


def test_walk_explore_pages_after_typing(page):
    box = sidebar_text(page)
    commit(box, TEXT)
    # the run for the new text has drawn (a busy machine can start it after wait_idle's grace period; leaving the
    # page before then would leave with the old text)
    page.wait_for_function("document.querySelector('[data-testid=stMain]').textContent.includes('actors')",
                           timeout=60_000)
    wait_idle(page)
    timings = {}
    for title in PAGES:
        timings[title] = _go(page, title)
        assert box.input_value() == TEXT, f"the sidebar text was lost on {title}"
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        assert page.locator("[data-testid=stAlertContentError]").count() == 0, title
    print(f"browser: seconds to open each page {timings}")
    _go(page, PAGES[0])
    page.locator("label", has_text="Compute max-flow").first.click()
    wait_idle(page)
    assert page.locator(".gtitle", has_text="max-flow from [CLS]").count() == 1
    t0 = time.perf_counter()
    commit(box, TEXT + " Really.")
    print(f"browser: changed text -> tokens page with flow {time.perf_counter() - t0:.2f}s")
