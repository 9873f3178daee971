"""The head view in a real browser: hovering a token keeps only that token's lines, leaving restores them."""
import time

from tests.conftest import commit, wait_idle

# Read the plot inside the head view's iframe: per line trace, the source row of each drawn segment.
LINES = """gd => gd._fullData.filter(t => t.meta === 'lines')
                       .map(t => Array.from(t.y).filter((v, k) => k % 3 === 0))"""


def test_hover_highlights_one_tokens_lines(page):
    page.locator("[data-testid=stSidebarNav] a", has_text="Inside the encoder").first.click()
    wait_idle(page)
    frame_el = page.locator("iframe").first
    frame_el.scroll_into_view_if_needed()
    frame = frame_el.element_handle().content_frame()
    gd = frame.locator("#headview")
    frame.wait_for_function("() => (document.getElementById('headview') || {})._fullData !== undefined")
    before = gd.evaluate(LINES)
    total = sum(len(t) for t in before)
    assert total > 0
    k = 3  # the fourth token on the left
    x, y = gd.evaluate("""(gd, k) => [gd._fullLayout.margin.l + gd._fullLayout.xaxis.l2p(0),
                                       gd._fullLayout.margin.t + gd._fullLayout.yaxis.l2p(-k)]""", k)
    box = frame_el.bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    frame.wait_for_function("() => document.getElementById('headview').dataset.focus === 'left:3'")
    after = gd.evaluate(LINES)
    sources = {v for t in after for v in t}
    assert sources == {-k}, sources  # only token 3's own lines are drawn
    assert 0 < sum(len(t) for t in after) < total
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # leave the plot
    frame.wait_for_function("() => document.getElementById('headview').dataset.focus === ''")
    assert sum(len(t) for t in gd.evaluate(LINES)) == total
    # a click on a model-view thumbnail opens that layer and head in the head view
    mv = page.locator("[data-testid=stMain] .js-plotly-plot").last
    mv.scroll_into_view_if_needed()
    x, y = mv.evaluate("""gd => { const d = gd._fullData[1], L = gd._fullLayout, k = 13;  // layer 2, head 1
        return [L.margin.l + L.xaxis.l2p(d.x[k]), L.margin.t + L.yaxis.l2p(d.y[k])]; }""")
    box = mv.bounding_box()
    t0 = time.perf_counter()
    page.mouse.click(box["x"] + x, box["y"] + y)
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('iframe').srcdoc.includes('Layer 2, head 1:')")
    frame = page.locator("iframe").first.element_handle().content_frame()
    frame.wait_for_function("() => (document.getElementById('headview') || {})._fullData !== undefined")
    print(f"browser: model-view click -> head view drawn {time.perf_counter() - t0:.2f}s")


def test_click_a_word_bar_drops_it(page):
    """What-if: a click on a word's attribution bar cuts that word from the original text and shows the new prediction."""
    page.locator("[data-testid=stSidebarNav] a", has_text="What-if").first.click()
    wait_idle(page)
    chart = page.locator(".js-plotly-plot").filter(has=page.locator(".gtitle", has_text="click one to drop it"))
    chart.scroll_into_view_if_needed()
    word = chart.evaluate("gd => gd._fullData[0].y[gd._fullData[0].y.length - 1]").rsplit(" #", 1)[0]
    chart.locator("g.trace.bars path").last.click(force=True)  # the top bar: the largest |attribution|
    wait_idle(page)
    page.wait_for_selector("[data-testid=stCode]")
    dropped = page.locator("[data-testid=stCode]").first.inner_text().strip()
    text = page.get_by_role("textbox", name="Text", exact=True).input_value()
    assert word.lower() in text.lower()
    assert len(dropped) < len(text) and dropped.lower().count(word.lower()) < text.lower().count(word.lower())
    assert page.get_by_text("Prediction without the word").count() == 1
    # the changed text survives a visit to another page
    box = page.get_by_role("textbox", name="Changed text", exact=True)
    commit(box, "A changed text that must stay.")
    page.locator("[data-testid=stSidebarNav] a", has_text="Inside the encoder").first.click()
    wait_idle(page)
    page.locator("[data-testid=stSidebarNav] a", has_text="What-if").first.click()
    wait_idle(page)
    assert page.get_by_role("textbox", name="Changed text", exact=True).input_value() == "A changed text that must stay."
