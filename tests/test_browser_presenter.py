"""Real browser: presenter view keeps the lesson's step in view and its charts' text inside the charts,
in English and Vietnamese."""
import contextlib

import pytest

from explorer.teach import lesson
from explorer.text.i18n import t

from conftest import PlaywrightTimeout, wait_idle

pytestmark = pytest.mark.browser

# A box inside another: all four edges, in page pixels (a pixel of antialiasing allowed).
INSIDE = """([a, b]) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1"""
BOXES = """gd => [...gd.querySelectorAll('.gtitle, .cbtitle text, .g-xtitle text, .g-ytitle text')].map(e => {
    const r = e.getBoundingClientRect(), s = gd.querySelector('svg.main-svg').getBoundingClientRect();
    return {kind: e.closest('.cbtitle') ? 'colour bar' : e.closest('.gtitle, .g-gtitle') ? 'title' : 'axis', text: e.textContent,
            el: {left: r.left, right: r.right, top: r.top, bottom: r.bottom},
            svg: {left: s.left, right: s.right, top: s.top, bottom: s.bottom}}; })"""
TICKS = """gd => [...gd.querySelectorAll('.colorbar .cbaxis text, .colorbar text.ytick, .colorbar .ycbtick text')]
    .map(e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"""


def _presenter_on(page, lang: str, size: tuple[int, int] = (1280, 720)) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})  # a projector
    page.reload()  # a session on the st.navigation path (see test_browser_home)
    wait_idle(page)
    if lang != "en":
        page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
        page.keyboard.type("Tiếng Việt")  # typed: with every page listed, the sidebar's list may open below the fold
        page.keyboard.press("Enter")
        wait_idle(page)
    page.locator("[data-testid=stSidebarNav] a[href$='/guided-lesson']").click()
    page.wait_for_url("**/guided-lesson")
    wait_idle(page)
    page.mouse.wheel(0, 4000)  # far down the long lesson, as a teacher would be before switching
    page.locator("[data-testid=stSidebar] [data-testid=stCheckbox]", has_text=t("app.presenter", lang)).click()
    wait_idle(page)


def _in_view(page, heading: str) -> dict:
    h = page.locator("[data-testid=stMain] h3", has_text=heading).first
    h.wait_for()
    # the step's script scrolls once the heading is drawn and again as the page settles: waited for, up to 10 s,
    # until the heading's top is in the window (a pixel above 0 allowed: scroll positions are snapped to device
    # pixels); where it never comes, the place it stayed at is what the test reports
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("e => { const top = e.getBoundingClientRect().top; return top > -2 && top < innerHeight; }",
                               arg=h.element_handle(), timeout=10_000)
    top = h.evaluate("e => e.getBoundingClientRect().top")
    return {"top": top, "height": page.viewport_size["height"]}


def _text_inside_charts(page) -> list[dict]:
    """Every chart's title, axis titles and colour-bar title, where they spill out of the chart or
    overlap the colour bar's tick labels."""
    bad = []
    for gd in page.locator("[data-testid=stMain] .js-plotly-plot").all():
        gd.scroll_into_view_if_needed()
        ticks = gd.evaluate(TICKS)
        for box in gd.evaluate(BOXES):
            if not page.evaluate(INSIDE, [box["el"], box["svg"]]):
                bad.append(box)
            if box["kind"] == "colour bar" and any(
                    not (box["el"]["right"] <= k["left"] or box["el"]["left"] >= k["right"]
                         or box["el"]["bottom"] <= k["top"] or box["el"]["top"] >= k["bottom"]) for k in ticks):
                bad.append({**box, "overlaps": "colour-bar ticks"})
    return bad


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_presenter_view_keeps_the_step_in_view_and_chart_text_inside(page, lang):
    _presenter_on(page, lang)
    first = _in_view(page, t(f"lesson.{lesson.STEPS[0]}.title", lang))  # turned on: step 1, in view
    assert -2 < first["top"] < first["height"], first
    for step in lesson.STEPS[1:5]:  # tokenizer → encoder (heatmap, colour bar) → cls → head → probabilities
        page.mouse.wheel(0, 5000)  # down to the Next button under the step's panel, as a teacher does
        nxt = page.locator("[data-testid=stMain] .stButton button", has_text=t("lesson.next", lang))
        nxt.scroll_into_view_if_needed()
        nxt.click()
        wait_idle(page)
        seen = _in_view(page, t(f"lesson.{step}.title", lang))
        assert -2 < seen["top"] < seen["height"], (step, seen)
        assert _text_inside_charts(page) == [], step
    # the presenter charts are laid out at the larger type, not only restyled by CSS
    sizes = page.locator("[data-testid=stMain] .js-plotly-plot").first.evaluate("gd => gd._fullLayout.font.size")
    assert sizes >= 17


# Words (runs of non-space) whose characters sit on more than one line: a word broken inside.
BROKEN_WORDS = """box => [...box.querySelectorAll('p, code')].flatMap(el => {
    const text = el.firstChild && el.textContent, out = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const m of node.textContent.matchAll(/\\S+/g)) {
            const r = document.createRange();
            r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
            const tops = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
            if (tops.size > 1) out.push(m[0]);
        }
    }
    return out; })"""


def test_chain_boxes_break_between_words_not_inside_them(page):
    page.reload()
    wait_idle(page)
    page.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.keyboard.type("Tiếng Việt")  # typed: with every page listed, the sidebar's list may open below the fold
    page.keyboard.press("Enter")  # "6 tầng × 12 đầu attention": the longest words
    wait_idle(page)
    chain = page.locator(".st-key-home_chain")
    assert "bert.pooler.dense" in chain.inner_text()
    assert chain.evaluate(BROKEN_WORDS) == []


# ---- each step fits the window ------------------------------------------------------

# Element boxes in viewport pixels: every chart (its drawn svg) and its legend, the step counter, the Next button.
STEP_BOXES = """([step, next]) => {
    const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    const main = document.querySelector('[data-testid=stMain]');
    const charts = [...main.querySelectorAll('.js-plotly-plot')].map(gd => ({
        chart: box(gd.querySelector('svg.main-svg')),
        legend: gd.querySelector('.legend') ? box(gd.querySelector('.legend')) : null}));
    const counter = [...main.querySelectorAll('[data-testid=stCaptionContainer]')].find(e => e.textContent.trim() === step);
    const button = [...main.querySelectorAll('.stButton button')].find(e => e.textContent.includes(next));
    return {charts, counter: counter ? box(counter) : null, next: button ? box(button) : null,
            view: {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight}}; }"""


def _outside(boxes: dict) -> list:
    """What of one step's boxes lies outside the window (a pixel allowed), or a legend outside its chart."""
    view, bad = boxes["view"], []

    def inside(a, b):
        return a["left"] >= b["left"] - 1 and a["right"] <= b["right"] + 1 and a["top"] >= b["top"] - 1 and \
            a["bottom"] <= b["bottom"] + 1

    for name in ("counter", "next"):
        if boxes[name] is None or not inside(boxes[name], view):
            bad.append((name, boxes[name]))
    for c in boxes["charts"]:
        if not inside(c["chart"], view):
            bad.append(("chart", c["chart"]))
        if c["legend"] and not inside(c["legend"], c["chart"]):
            bad.append(("legend", c["legend"], c["chart"]))
    return bad


@pytest.mark.parametrize("lang", ["en", "vi"])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_presenter_steps_fit_the_window(page, lang, size):
    _presenter_on(page, lang, size)
    n = len(lesson.STEPS)
    seen = {}
    for i, step in enumerate(lesson.STEPS):
        if i:  # the Next button is in view without scrolling: the teacher clicks it where it is
            page.locator("[data-testid=stMain] .stButton button", has_text=t("lesson.next", lang)).click()
            wait_idle(page)
        _in_view(page, t(f"lesson.{step}.title", lang))
        last = t("lesson.next", lang) if i < n - 1 else t("lesson.prev", lang)  # the last step: no Next to click
        seen[step] = _outside(page.evaluate(STEP_BOXES, [t("lesson.step", lang, i=i + 1, n=n), last]))
    bad = {k: v for k, v in seen.items() if v}
    assert bad == {}, bad
