"""Real browser: the first page starts people off. Its chain from text to label is a drawn diagram whose words
never wrap mid-word at 1280, 1024 and 768 px; it holds the text box itself; it offers the three ways in (the
lesson, the data page, a text to explore); and the theme's primary colour is neither red nor blue. In English and
Vietnamese. With HEAD_EXPLORER_WRITE_SCREENSHOTS=1 it writes docs/img/home.png (1280 px wide). (Every sidebar name
is the title of the page it opens: tests/test_browser_deeplinks.py's walk reads both as drawn, in English and on
the pages a class shares in Vietnamese; tests/test_vi_pages.py reads them on every page in Vietnamese.)"""
from __future__ import annotations

import os

import pytest

from explorer.text.i18n import t

from conftest import ROOT, wait_idle

pytestmark = pytest.mark.browser

SCREENSHOT = ROOT / "docs" / "img" / "home.png"

# Per box: its words, each with the number of lines it is drawn on, and whether the box's content is wider than
# the box (a word that cannot fit).
BOXES = """() => [...document.querySelectorAll('.he-chain .he-step')].map(b => ({
  words: [...b.querySelectorAll('.he-word')].map(w => [w.textContent, w.getClientRects().length,
    Math.round(w.getBoundingClientRect().height)]),
  overflows: b.scrollWidth > b.clientWidth + 1,
  outside: b.getBoundingClientRect().right > document.querySelector('[data-testid=stMain]').getBoundingClientRect().right + 1
}))"""
# Words (runs of non-space) of the chain's paragraphs and code whose characters sit on more than one line: a word
# broken inside ("6 tầng × 12 đầu attention" holds the longest words).
BROKEN_WORDS = """box => [...box.querySelectorAll('p, code')].flatMap(el => {
    const out = [], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const m of node.textContent.matchAll(/\\S+/g)) {
            const r = document.createRange();
            r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
            const tops = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
            if (tops.size > 1) out.push(m[0]);
        }
    }
    return out; })"""


def _open(browser, app_url: str, width: int, lang: str):
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    pg = ctx.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(f"{app_url}/?lang={lang}")
    wait_idle(pg)
    pg.locator(".he-chain .he-step").first.wait_for()
    return ctx, pg


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_chain_never_breaks_a_word(browser, app_url, lang):
    for width in (1280, 1024, 768):
        ctx, pg = _open(browser, app_url, width, lang)
        try:
            boxes = pg.evaluate(BOXES)
            assert len(boxes) >= 8, width  # text, tokens, encoder, pooled, head, logits, probabilities, label
            one_line = min(h for b in boxes for _, _, h in b["words"])
            for b in boxes:
                for word, lines, height in b["words"]:
                    # one line box, no taller than the shortest word's: not split across lines
                    assert lines == 1 and height < 1.5 * one_line, (width, word)
                assert not b["overflows"] and not b["outside"], (width, b)
            chain = pg.locator(".st-key-home_chain")  # its boxes' text breaks between words, not inside one
            assert "bert.pooler.dense" in chain.inner_text()
            assert chain.evaluate(BROKEN_WORDS) == [], width
            if width == 1280 and lang == "en" and os.environ.get("HEAD_EXPLORER_WRITE_SCREENSHOTS") == "1":
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                pg.screenshot(path=str(SCREENSHOT))
        finally:
            ctx.close()


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_first_page_says_where_to_start(browser, app_url, lang):
    ctx, pg = _open(browser, app_url, 1280, lang)
    try:
        main = pg.locator("[data-testid=stMain]")
        # the three ways in, each a link to its page
        for key, slug in (("start.lesson", "guided-lesson"), ("start.check", "labels"), ("start.explore", "attention")):
            link = main.locator("[data-testid=stPageLink] a", has_text=t(key, lang))
            assert link.count() == 1 and link.get_attribute("href").split("?")[0].rstrip("/").split("/")[-1] == slug, key
        # the text box on the page itself, above the fold, the same text as the sidebar's
        box = main.get_by_label(t("start.text", lang), exact=True)
        assert box.bounding_box()["y"] + box.bounding_box()["height"] < 800
        box.fill("I hate this, it is awful.")
        box.press("Control+Enter")
        pg.wait_for_function("document.querySelector('.he-chain') && "
                             "document.querySelector('[data-testid=stSidebar] textarea').value.includes('awful')")
        wait_idle(pg)
        assert "awful" in main.inner_text()
        main.locator("[data-testid=stPageLink] a", has_text=t("start.lesson", lang)).click()
        pg.wait_for_url("**/guided-lesson*")
        wait_idle(pg)
        assert main.locator("h1").first.inner_text().strip() == t("lesson.title", lang)
    finally:
        ctx.close()


def _rgb(css: str) -> tuple[int, int, int]:
    return tuple(int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def test_the_primary_colour_is_neither_red_nor_blue(browser, app_url):
    """The primary button's fill: not the red or blue that signed charts use (red: R well above G and B; blue:
    B well above R and G)."""
    ctx, pg = _open(browser, app_url, 1280, "en")
    try:
        pg.goto(app_url + "/fine-tune")
        wait_idle(pg)
        button = pg.locator("[data-testid=stMain] [data-testid=stBaseButton-primary]").first
        r, g, b = _rgb(button.evaluate("e => getComputedStyle(e).backgroundColor"))
        assert not (r > g + 60 and r > b + 60), (r, g, b)
        assert not (b > r + 60 and b > g + 60), (r, g, b)
    finally:
        ctx.close()


CUT = """() => [...document.querySelectorAll(
  '[data-testid=stMain] [data-testid=stMetricValue] div, [data-testid=stMain] [data-testid=stMetricLabel] p')].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""


@pytest.mark.parametrize("width", [1280, 1024])
def test_the_data_page_metrics_are_not_cut_off(browser, app_url, width):
    """The loss's class name (CrossEntropyLoss) and the problem type fit their metrics: none is cut to "…"."""
    ctx, pg = _open(browser, app_url, width, "en")
    try:
        pg.goto(app_url + "/labels")
        wait_idle(pg)
        pg.locator("[data-testid=stMetricValue]").first.wait_for()
        assert pg.evaluate(CUT) == []
    finally:
        ctx.close()


BUTTONS = """() => [...document.querySelectorAll(
  '[data-testid=stMain] .stButton button p, [data-testid=stMain] .stDownloadButton button p')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.textContent.includes('…')).map(e => e.textContent)"""


@pytest.mark.slow
def test_the_audit_export_buttons_are_not_cut_off(browser, app_url):
    """After an audit of the demo tweets: "Use the fixes as the dataset's next version" and "Download the
    corrected CSV (0 rows changed)" are whole (side by side in thirds they were cut to "…")."""
    ctx, pg = _open(browser, app_url, 1024, "en")
    try:
        pg.goto(app_url + "/label-audit")
        wait_idle(pg)
        pg.locator("[data-testid=stMain] button", has_text=t("audit.run", "en")).click()
        pg.locator("[data-testid=stMain] .stDownloadButton button").first.wait_for(timeout=400_000)
        wait_idle(pg)
        assert pg.locator("[data-testid=stMain] .stDownloadButton button").count() >= 2  # the CSV and the report
        assert pg.evaluate(BUTTONS) == []
    finally:
        ctx.close()
