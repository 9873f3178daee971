"""Classroom load: 8 students editing the text on the attention page at once, against 1 student.

One server (127.0.0.1 only), one headless Chromium with 8 pages, each its own session. Every
session edits the sidebar text a fixed number of times (a bounded loop that ends by itself) and
times text committed -> the page's charts showing the new text (a word unique to that edit must
appear in the attention chart's axis). The single-session baseline runs first, in the same run.
Target: p95 with 8 sessions ≤ 4× the single-session p95, and no failures (time-outs, error boxes).
"""
from __future__ import annotations

import asyncio
import shutil
import time

import numpy as np

from bench.server import CHROMIUM_ARGS, serve
from bench.timing import row

SESSIONS = 8
EDITS = 6  # per session, in the 8-session phase
SOLO_EDITS = 10
THINK = 0.3  # seconds between a session's edits: students type, read, type again
TIMEOUT_MS = 60_000
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
WORDS = ["apple", "river", "window", "garden", "doctor", "summer", "market", "silver", "forest", "engine",
         "pencil", "ocean", "castle", "rabbit", "violin", "harbor"]


async def _open(browser, url: str):
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    await page.goto(url)  # a first load straight at /attention shows Streamlit's "page not found" dialog
    await page.wait_for_selector(IDLE)
    await page.locator("[data-testid=stSidebarNav] a[href$='/attention']").click()
    await page.wait_for_url("**/attention")
    await page.wait_for_selector(IDLE)
    await page.wait_for_selector(".js-plotly-plot")
    return ctx, page


async def _edits(page, who: str, n: int, out: list[float], failures: list[str]) -> None:
    box = page.locator("[data-testid=stSidebar] [data-testid=stTextArea] textarea").first
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        # Unique per session and edit, so no session is served from another's cached analysis.
        text = f"{who} says the {word} was lovely on day {i}."
        try:
            await box.fill(text)
            t0 = time.perf_counter()
            await box.press("Control+Enter")
            await page.locator(".js-plotly-plot text", has_text=word).first.wait_for()
            await page.wait_for_selector(IDLE)
            out.append(time.perf_counter() - t0)
            if await page.locator("[data-testid=stException], [data-testid=stAlertContentError]").count():
                failures.append(f"{who}: error box after edit {i}")
        except Exception as err:  # noqa: BLE001 - a failed edit is counted, not fatal
            failures.append(f"{who}: {type(err).__name__} on edit {i}")
        await asyncio.sleep(THINK)


async def _measure(url: str, chromium: str) -> tuple[list[float], list[float], list[str]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            opened = [await _open(browser, url) for _ in range(SESSIONS)]  # one by one: loading is not measured
            solo, crowd, failures = [], [], []
            await _edits(opened[0][1], "solo", SOLO_EDITS, solo, failures)
            await asyncio.gather(*(_edits(page, f"student{k}", EDITS, crowd, failures)
                                   for k, (_, page) in enumerate(opened)))
            for ctx, _ in opened:
                await ctx.close()
        finally:
            await browser.close()
    return solo, crowd, failures


def run() -> list[dict]:
    chromium = shutil.which("chromium")
    if chromium is None:
        return []
    with serve() as url:
        solo, crowd, failures = asyncio.run(_measure(url, chromium))
    for f in failures:
        print("  failure:", f)
    p50 = lambda xs: float(np.percentile(xs, 50)) if xs else float("nan")  # noqa: E731
    p95 = lambda xs: float(np.percentile(xs, 95)) if xs else float("nan")  # noqa: E731
    ok = not failures and len(crowd) == SESSIONS * EDITS
    return [
        row(f"classroom: text -> charts p50, {SESSIONS} sessions / 1 session", p50(crowd), p50(solo), "info", True),
        row(f"classroom: text -> charts p95, {SESSIONS} sessions / 1 session ({len(failures)} failures)",
            p95(crowd), p95(solo), "≤ 4×, 0 failures", ok and p95(crowd) <= 4 * p95(solo)),
    ]
