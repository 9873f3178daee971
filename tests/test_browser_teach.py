"""Real browser, a class's tools in English and Vietnamese: the quiz's lock cannot be undone by a student (not by
"start again", a reload or a new tab), the class's language and lock stay in every address, the handout draws
each lesson step's chart as the lesson page does, and presenter view shows each lesson step whole in a projector's
window (one walk of the steps checks every presenter property on each)."""
import contextlib
import os
from pathlib import Path

import pytest

from explorer.teach import lesson
from explorer.text.i18n import t

from conftest import PlaywrightTimeout, open_link, wait_idle
from test_docs_screenshot import png_size

pytestmark = pytest.mark.browser

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
HANDOUT_IMG = IMG / "handout-step-10.png"
WRITE = os.environ.get("HEAD_EXPLORER_WRITE_SCREENSHOTS") == "1"  # regenerate the committed pictures
PROJECTOR = {"width": 1280, "height": 720}


def _first_score(page) -> str:
    metric = page.locator("[data-testid=stMetric]").filter(has_text=t("quiz.first_score", page.lang))
    return metric.locator("[data-testid=stMetricValue]").inner_text().strip()


def _pick(page, question: int, option: int, mouse: bool = False) -> None:
    """Pick option `option` (the catalog's index) of question number `question`: the label's own click event,
    or with `mouse` a click where it is on the screen, as a student's mouse does (a disabled option takes
    none: a short wait, then on). The event does not depend on the layout staying put meanwhile."""
    q = lesson.QUIZ[question]
    label = page.locator("[data-testid=stRadio]").nth(question).locator("[data-testid=stRadioOption]").filter(
        has_text=t(f"quiz.{q.key}.o{option}", page.lang))
    with contextlib.suppress(PlaywrightTimeout):
        label.click(timeout=3_000) if mouse else label.dispatch_event("click")
    wait_idle(page)


def _q1_options(page) -> list[tuple[str, str | None, str | None]]:
    """Question 1's options as shown: (text, data-selected, data-disabled)."""
    options = page.locator("[data-testid=stRadio]").first.locator("[data-testid=stRadioOption]")
    return [(o.inner_text().strip(), o.get_attribute("data-selected"), o.get_attribute("data-disabled"))
            for o in options.all()]


def _assert_q1_locked_on(page, lang: str, wrong: int) -> None:
    """Question 1 shows the wrong first answer picked, every option closed, and the first-answer score 0."""
    shown, q1 = _q1_options(page), lesson.QUIZ[0]
    assert [text for text, selected, _ in shown if selected == "true"] == [t(f"quiz.{q1.key}.o{wrong}", lang)], shown
    assert [disabled for *_, disabled in shown] == ["true"] * lesson.N_OPTIONS, shown
    assert _first_score(page) == f"0/{len(lesson.QUIZ)}"


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_a_locked_quiz_keeps_first_answers_through_start_again_a_reload_and_a_new_tab(browser, app_url, lang):
    """The walks of the issues: on a teacher's locked link, Q1 answered wrong, "start again", Q1 answered right.
    The first answer stays picked and locked, and the first-answer score stays 0; so it does after F5, and in a new
    tab of the same browser that reaches the quiz through another page's sidebar (every link the app draws there
    carries the class's language and lock) and is reloaded there."""
    ctx, page = open_link(browser, f"{app_url}/review-quiz?lang={lang}&lock=1")
    page.lang = lang
    query = f"?lang={lang}&lock=1"
    try:
        q1 = lesson.QUIZ[0]
        wrong = next(i for i in range(lesson.N_OPTIONS) if i != q1.correct)
        _pick(page, 0, wrong)
        assert _first_score(page) == f"0/{len(lesson.QUIZ)}"
        again = page.get_by_role("button", name=t("quiz.again", lang))
        if again.count():  # where restarting is offered, a student uses it
            again.click()
            wait_idle(page)
        _pick(page, 0, q1.correct, mouse=True)
        _assert_q1_locked_on(page, lang, wrong)
        page.reload()
        wait_idle(page)
        _assert_q1_locked_on(page, lang, wrong)
        tab = ctx.new_page()
        tab.lang = lang
        tab.goto(f"{app_url}/labels?lang={lang}&lock=1")
        wait_idle(tab)
        hrefs = tab.locator("[data-testid=stSidebarNav] a").evaluate_all("as => as.map(a => a.href)")
        assert len(hrefs) > 10 and all(h.endswith(query) for h in hrefs), hrefs
        tab.locator("[data-testid=stSidebarNav] a[href*='/review-quiz?']").click()
        tab.wait_for_url(lambda u: u.endswith("/review-quiz" + query))  # the query, dropped by the switch, is back
        wait_idle(tab)
        tab.reload()
        wait_idle(tab)
        main = tab.locator("[data-testid=stMain]")
        assert main.locator("h1").first.inner_text().strip() == t("quiz.title", lang)
        assert t("links.locked_by_link", lang) in main.inner_text()
        _assert_q1_locked_on(tab, lang, wrong)
        live = main.locator("[data-testid=stPageLink] a").evaluate_all("as => as.map(a => a.href)")
        assert live and all(h.endswith(query) for h in live), live  # the questions' "see it live" links too
    finally:
        ctx.close()


# Each chart as drawn: its title's words (a wrapped title's lines joined, bold or not), each trace's kind, categories, colour scale
# and its range, and the fill of every bar: what a student compares between the screen and the paper.
CHART = """gd => ({
    title: (gd._fullLayout.title.text || '').replace(/<br>/g, ' ').replace(/<[^>]*>/g, '').replace(/\\s+/g, ' ').trim(),
    traces: gd._fullData.map(tr => ({type: tr.type, x: tr.type === 'bar' ? [...tr.x].map(String) : null,
        y: tr.type === 'bar' || tr.type === 'heatmap' ? [...tr.y].map(String) : null,
        colorscale: JSON.stringify(tr.colorscale || (tr.marker && tr.marker.colorscale) || null),
        range: [tr.zmin, tr.zmax, tr.marker && tr.marker.cmin, tr.marker && tr.marker.cmax].map(v => v === undefined ? null : +(+v).toPrecision(6))})),
    fills: [...gd.querySelectorAll('.trace.bars .point path')].map(p => getComputedStyle(p).fill)})"""
N_CHARTS = 8  # encoder, cls, logits and probabilities, fine-tuning, token heads, layers, leave-one-out


def _charts(page, within: str) -> list[dict]:
    page.wait_for_function(f"document.querySelectorAll('{within} .js-plotly-plot .main-svg').length >= {N_CHARTS}",
                           timeout=120_000)
    return [gd.evaluate(CHART) for gd in page.locator(f"{within} .js-plotly-plot").all()]


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_handout_draws_each_step_chart_as_the_lesson_does(browser, app_url, lang, tmp_path):
    """The lesson page's charts and the downloaded handout's, step by step: the same titles, the same bars in
    the same colours, the same colour scales (resolved to stops in the file, dark where most); step 10 is
    leave-one-out in both."""
    ctx, page = open_link(browser, f"{app_url}/guided-lesson?lang={lang}")
    try:
        screen = _charts(page, "[data-testid=stMain]")
        with page.expect_download(timeout=180_000) as got:
            page.get_by_role("button", name=t("lesson.handout", lang)).click()
        path = tmp_path / "handout.html"
        got.value.save_as(path)
        html = path.read_text(encoding="utf-8")
        assert html.count('class="plotly-graph-div"') == N_CHARTS  # the download arrived whole
        assert '"colorscale":"Blues"' not in html and "rgb(8,48,107)" in html  # resolved stops, dark = most
        paper = ctx.new_page()
        paper.goto(path.as_uri())
        on_paper = _charts(paper, ".step")
        section = paper.locator(f"#step-{lesson.STEPS.index('ablation') + 1}")
        step10 = section.locator(".js-plotly-plot").evaluate(CHART)
        if lang == "en" and WRITE:
            paper.set_viewport_size(PROJECTOR)
            section.scroll_into_view_if_needed()
            section.screenshot(path=str(HANDOUT_IMG))
    finally:
        ctx.close()
    assert len(screen) == N_CHARTS and [c["title"] for c in on_paper] == [c["title"] for c in screen]
    assert all(c["fills"] for c in screen if c["traces"][0]["type"] == "bar")  # bars' colours were read
    for drawn, handed in zip(screen, on_paper):
        assert handed == drawn, drawn["title"]
    before_label = t("lesson.panel.drop_title", lang, label="\0").split("\0")[0]
    assert step10 == screen[-1] and step10["title"].startswith(before_label)  # step 10: leave-one-out
    if lang == "en":  # the committed picture of handout step 10 (docs/img), written with WRITE
        width, height = png_size(HANDOUT_IMG.read_bytes())
        assert width > 600 and height > 200


# ---- presenter view: every step reads whole, in view, without scrolling -----------------------------------


# What a projector's window shows badly on one presenter step: a button or the step counter cut or wrapped,
# the step's text (up to its "see the page" link) running past the window's bottom, a table wider than its box
# (a column cut off) or a cell's text cut, a chart's title running past the chart's edge, and in each chart two
# tick labels of one axis, or an axis title and that axis' tick labels, drawn over each other.
STEP_FAULTS = r"""([counterText, body]) => {
    const MIN_GAP = 8;  // px: half a line of the projector's chart type
    const main = document.querySelector('[data-testid=stMain]'), bad = [];
    const over = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    const lines = el => { const tops = new Set(), walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            const r = document.createRange(); r.selectNodeContents(n);
            [...r.getClientRects()].filter(q => q.width > 0).forEach(q => tops.add(Math.round(q.top))); }
        return tops.size; };
    for (const b of main.querySelectorAll('.stButton button'))
        for (const e of [b, ...b.querySelectorAll('*')])
            if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible')
                { bad.push(['button cut', b.textContent]); break; }
    const counter = [...main.querySelectorAll('[data-testid=stCaptionContainer]')].find(e => e.textContent.trim() === counterText);
    if (!counter) bad.push(['no counter', counterText]);
    else if (lines(counter) > 1) bad.push(['counter wraps', counterText]);
    const words = [...main.querySelectorAll('[data-testid=stMarkdownContainer]')].find(e => e.textContent.trim().startsWith(body));
    const column = words && words.closest('[data-testid=stColumn]');
    if (!column) bad.push(['no text', body]);
    else {
        const bottom = Math.max(...[...column.querySelectorAll('[data-testid=stMarkdownContainer], [data-testid=stPageLink]')]
            .map(e => e.getBoundingClientRect().bottom));
        if (bottom > window.innerHeight + 1) bad.push(['text past the window', Math.round(bottom)]);
    }
    for (const box of main.querySelectorAll('[data-testid=stTable]')) {
        const table = box.querySelector('table'), edge = Math.min(box.getBoundingClientRect().right, innerWidth);
        if (table.getBoundingClientRect().right > edge + 1)
            bad.push(['table cut', [...table.querySelectorAll('th')].map(th => th.textContent).join(' | ')]);
        for (const cell of table.querySelectorAll('th, td'))
            if (cell.scrollWidth > cell.clientWidth + 1) bad.push(['cell cut', cell.textContent]);
    }
    for (const gd of main.querySelectorAll('.js-plotly-plot')) {
        const title = (gd._fullLayout.title.text || '').replace(/<[^>]*>/g, ' ');
        const svg = gd.querySelector('svg.main-svg').getBoundingClientRect();
        for (const line of gd.querySelectorAll('.gtitle')) {
            const r = line.getBoundingClientRect();
            if (r.left < svg.left - 1 || r.right > svg.right + 1) bad.push(['title cut', line.textContent]);
        }
        for (const ax of ['x', 'y']) {
            for (const layer of gd.querySelectorAll(`.${ax}axislayer-above, .${ax}axislayer-below`)) {
                // a slanted label's box is not its outline: boxes of neighbours overlap by construction
                const ticks = [...layer.querySelectorAll(`.${ax}tick text`)]
                    .filter(e => e.textContent && !/rotate\((?!0\))/.test(e.getAttribute('transform') || ''))
                    .map(e => [e.textContent, e.getBoundingClientRect()]);
                ticks.forEach(([a, ra], i) => ticks.slice(i + 1).forEach(([b, rb]) => {
                    if (over(ra, rb)) bad.push(['ticks overlap', title, a, b]); }));
                for (const t of gd.querySelectorAll(`.g-${ax}title text`))
                    for (const [a, ra] of ticks) {
                        const rt = t.getBoundingClientRect();
                        if (over(rt, ra)) bad.push(['axis title on a tick', title, t.textContent, a]);
                        // under a category's tick label, an x title close by reads as part of it ("neutral label")
                        if (ax === 'x' && rt.left < ra.right && rt.right > ra.left && rt.top - ra.bottom < MIN_GAP)
                            bad.push(['axis title reads with a tick', title, t.textContent, a, Math.round(rt.top - ra.bottom)]);
                    }
            }
        }
    }
    return bad; }"""


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


# Each chart's title, axis titles and colour-bar title, in page pixels, with its drawn svg's box; and the colour
# bar's tick labels.
CHART_TEXT = """gd => [...gd.querySelectorAll('.gtitle, .cbtitle text, .g-xtitle text, .g-ytitle text')].map(e => {
    const r = e.getBoundingClientRect(), s = gd.querySelector('svg.main-svg').getBoundingClientRect();
    return {kind: e.closest('.cbtitle') ? 'colour bar' : e.closest('.gtitle, .g-gtitle') ? 'title' : 'axis', text: e.textContent,
            el: {left: r.left, right: r.right, top: r.top, bottom: r.bottom},
            svg: {left: s.left, right: s.right, top: s.top, bottom: s.bottom}}; })"""
TICKS = """gd => [...gd.querySelectorAll('.colorbar .cbaxis text, .colorbar text.ytick, .colorbar .ycbtick text')]
    .map(e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"""


def _text_outside_charts(page) -> list[dict]:
    """Every chart's title, axis titles and colour-bar title that spill out of the chart or overlap the colour
    bar's tick labels (a pixel of antialiasing allowed)."""
    bad = []
    for gd in page.locator("[data-testid=stMain] .js-plotly-plot").all():
        ticks = gd.evaluate(TICKS)
        for box in gd.evaluate(CHART_TEXT):
            a, b = box["el"], box["svg"]
            if not (a["left"] >= b["left"] - 1 and a["right"] <= b["right"] + 1 and a["top"] >= b["top"] - 1
                    and a["bottom"] <= b["bottom"] + 1):
                bad.append(box)
            if box["kind"] == "colour bar" and any(
                    not (a["right"] <= k["left"] or a["left"] >= k["right"] or a["bottom"] <= k["top"]
                         or a["top"] >= k["bottom"]) for k in ticks):
                bad.append({**box, "overlaps": "colour-bar ticks"})
    return bad


def _presenter(browser, app_url: str, lang: str, size: dict):
    """(context, page): the lesson in presenter view on a projector's window, turned on far down the long
    lesson (where a teacher would be before switching): it opens at step 1."""
    ctx = browser.new_context(viewport=size)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{app_url}/guided-lesson?lang={lang}")
    wait_idle(page)
    page.mouse.wheel(0, 4000)
    page.locator("[data-testid=stSidebar] [data-testid=stCheckbox]", has_text=t("app.presenter", lang)).click()
    wait_idle(page)
    return ctx, page


def _step_in_view(page, step: str, lang: str) -> None:
    """Wait until step `step`'s heading is drawn whole in the window, and its charts are drawn."""
    heading = page.locator("[data-testid=stMain] h3", has_text=t(f"lesson.{step}.title", lang)).first
    heading.wait_for()
    # whole in the window (a pixel above 0 allowed: scroll positions are snapped to device pixels). The row sits
    # right under the page's title, and the step's script scrolls it to the top when the teacher had scrolled away.
    try:
        page.wait_for_function("h => { const r = h.getBoundingClientRect(); return r.top > -2 && r.bottom <= innerHeight; }",
                               arg=heading.element_handle(), timeout=20_000)
    except PlaywrightTimeout:
        box = page.evaluate("h => [h.getBoundingClientRect().top, h.getBoundingClientRect().bottom]", heading.element_handle())
        pytest.fail(f"step {step}'s heading is not whole in the window: top and bottom at {box} px")
    page.wait_for_function("[...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]"
                           ".every(gd => gd._fullLayout && gd.querySelector('.main-svg'))")


# A projector's window in both languages, and a full-HD one in Vietnamese, whose longer words are the harder case.
WINDOWS = [("en", PROJECTOR), ("vi", PROJECTOR), ("vi", {"width": 1920, "height": 1080})]


@pytest.mark.parametrize("lang, size", WINDOWS, ids=[f"{lang}-{s['width']}" for lang, s in WINDOWS])
def test_presenter_steps_read_whole_in_the_window(browser, app_url, lang, size):
    """One walk of the 10 steps, each step checked once for all of: turned on far down the lesson, step 1 is in
    view, and after each Next (steps 2-5 after the teacher scrolled down) its step's heading is; the
    buttons and the counter whole on one line and inside the window, the text inside the window, every table
    column and chart title whole, no tick labels drawn over each other or over their axis title, every chart and
    its legend inside the window, each chart's titles inside the chart and off the colour bar's ticks; the charts
    laid out at the presenter's larger type. In English at 1280 × 720, the pictures under docs/img/ are these
    steps (written with HEAD_EXPLORER_WRITE_SCREENSHOTS=1, otherwise checked to be there)."""
    ctx, page = _presenter(browser, app_url, lang, size)
    n, faults, font = len(lesson.STEPS), {}, 0
    pictures = lang == "en" and size == PROJECTOR
    try:
        for i, step in enumerate(lesson.STEPS):
            if i:
                nxt = page.locator("[data-testid=stMain] .stButton button", has_text=t("lesson.next", lang))
                if i <= 4:  # tokenizer → encoder (heatmap, colour bar) → cls → head → probabilities: after the
                    page.mouse.wheel(0, 5000)  # teacher scrolled down to the Next button, as a teacher does
                    nxt.scroll_into_view_if_needed()
                nxt.click()  # later steps: clicked where it is, in view without scrolling (checked below)
                wait_idle(page)
            _step_in_view(page, step, lang)
            body = " ".join(t(f"lesson.{step}.body", lang).split())[:30]
            # the layout settles after the run ends (charts drawn, the scroll, the columns' widths): waited for, up
            # to 5 s, until it shows no fault; then measured once, so a fault that stays is what the test reports
            counter = t("lesson.step", lang, i=i + 1, n=n)
            args = [counter, body.split("*")[0]]
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function(f"args => ({STEP_FAULTS})(args).length === 0", arg=args, timeout=5_000)
            last = t("lesson.next", lang) if i < n - 1 else t("lesson.prev", lang)  # the last step: no Next
            faults[i + 1] = (page.evaluate(STEP_FAULTS, args) + _outside(page.evaluate(STEP_BOXES, [counter, last]))
                             + _text_outside_charts(page))
            if step == "probabilities":  # a chart step: its chart is laid out at the presenter's type
                font = page.locator("[data-testid=stMain] .js-plotly-plot").first.evaluate("gd => gd._fullLayout.font.size")
            if pictures and WRITE:
                page.screenshot(path=str(IMG / f"presenter-step-{i + 1:02d}.png"))
    finally:
        ctx.close()
    bad = {k: v for k, v in faults.items() if v}
    assert bad == {}, "\n".join(f"step {k}: {v}" for k, v in bad.items())
    # the presenter charts are laid out at the larger type, not only restyled by CSS
    assert font >= 17, font
    if pictures:
        for i in range(n):
            assert png_size((IMG / f"presenter-step-{i + 1:02d}.png").read_bytes()) == (1280, 720)
