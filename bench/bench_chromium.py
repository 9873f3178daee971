"""The browser's share of an edit: Chromium's CPU-seconds per edit of the text on the attention page, against
plotly's own floor for the same figures.

One headless Chromium (a child of this process) on one served app (bench/server.py): open /attention, then edit the
sidebar text EDITS times back to back (commit, wait for the edit's unique word in a chart and the run's end,
let the page settle SETTLE_S). The figure is the CPU time (user + system, from /proc via psutil) that every
Chromium process under this one used, over the edits, divided by their count. In a class each browser draws on
its student's own machine; this is what one student's machine pays per edit.

The floor: a bare page with plotly.js and nothing else draws the same figures (plots.attention.tokens_page for
the same kind of text, serialised as st.plotly_chart sends them) from scratch (Plotly.newPlot), EDITS times,
each with new data and the same settle: what plotly itself costs, without Streamlit's page, its token grid
and its remounts.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from functools import partial

import plotly.io as pio
import psutil
from plotly.offline import get_plotlyjs

from bench.server import CHROMIUM_ARGS, serve
from bench.timing import row

EDITS = 8
SETTLE_S = 0.3  # after a run ends: plotly draws once the page has the figure
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
WORDS = ["apple", "river", "window", "garden", "doctor", "summer", "market", "silver", "forest", "engine"]
TEXT = "Student {i} says the {word} was lovely on day {i}."


def _chromium_cpu() -> dict[int, float]:
    """CPU-seconds so far of every Chromium process under this one (by pid)."""
    out = {}
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "chrom" in p.name():
                c = p.cpu_times()
                out[p.pid] = c.user + c.system
        except psutil.Error:  # ended meanwhile
            pass
    return out


def _spent(before: dict[int, float]) -> float:
    after = _chromium_cpu()
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


def _app_edits(browser, url: str) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)  # a plain `streamlit run`'s very first visitor may see "Page not found" on a deep link
    page.wait_for_selector(IDLE)
    page.goto(url + "/attention")
    page.wait_for_selector(IDLE)
    page.wait_for_selector(".js-plotly-plot")
    box = page.locator("[data-testid=stSidebar] [data-testid=stTextArea] textarea").first
    page.wait_for_timeout(1000)
    before = _chromium_cpu()
    for i in range(EDITS):
        word = WORDS[i % len(WORDS)]
        box.fill(TEXT.format(i=i, word=word))
        box.press("Control+Enter")
        page.locator(".js-plotly-plot text", has_text=word).first.wait_for()
        page.wait_for_selector(IDLE)
        page.wait_for_timeout(SETTLE_S * 1000)
    per_edit = _spent(before) / EDITS
    ctx.close()
    return per_edit


def _figures() -> list[list[str]]:
    """The attention page's figures (flow off, last layer, every head) for EDITS texts, as JSON."""
    from explorer import plots
    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT, load_checkpoint
    from explorer.model.heads import build_head
    from explorer.text import i18n

    ck = load_checkpoint(DEFAULT_CHECKPOINT)
    head, t = build_head(ck), partial(i18n.t, lang="en")
    out = []
    for i in range(EDITS):
        a = analyze(ck, head, TEXT.format(i=i, word=WORDS[i % len(WORDS)]))
        figs = plots.attention.tokens_page(a, a.attentions.shape[0], head=None, hide_special=False, t=t)
        out.append([pio.to_json(f, validate=False) for f in figs.values()])
    return out


def _floor(browser) -> tuple[float, int]:
    figs = _figures()
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    n = len(figs[0])
    page.set_content("<html><body>" + "".join(f"<div id=f{k} style='width:1200px;height:450px'></div>" for k in range(n))
                     + "</body></html>")
    page.add_script_tag(content=get_plotlyjs())
    page.evaluate("figs => { window.FIGS = figs; }", figs)
    draw = """i => Promise.all(window.FIGS[i].map((s, k) => {
        const f = JSON.parse(s), el = document.getElementById('f' + k);
        Plotly.purge(el);
        return Plotly.newPlot(el, f.data, f.layout, {responsive: true});
    }))"""
    page.evaluate(draw, 0)  # the first draw compiles plotly's code paths: not counted, as the app's page is warm
    page.wait_for_timeout(1000)
    before = _chromium_cpu()
    for i in range(EDITS):
        page.evaluate(draw, i)
        page.wait_for_timeout(SETTLE_S * 1000)
    per_draw = _spent(before) / EDITS
    ctx.close()
    return per_draw, n


def run() -> list[dict]:
    chromium = shutil.which("chromium")
    if chromium is None:
        return []
    from playwright.sync_api import sync_playwright

    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            started = time.perf_counter()
            app = _app_edits(browser, url)
            floor, n = _floor(browser)
            print(f"  chromium bench: {time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
        finally:
            browser.close()
    return [row(f"Chromium CPU-s per edit, attention page (plotly's floor: the same {n} figures, bare page)",
                app, floor, "≤ 0.5 s", app <= 0.5, unit="s")]
