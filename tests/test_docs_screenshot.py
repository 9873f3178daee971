"""The README's picture (docs/img/app.png) is the real app: this test serves it as `head-explorer app` does
(the browser fixtures of conftest.py), opens the Pipeline page and, with HEAD_EXPLORER_WRITE_SCREENSHOTS=1,
writes the screenshot; otherwise it checks that the committed file is a PNG of the size it takes."""
from __future__ import annotations

import os
import struct
from pathlib import Path

from tests.conftest import open_app

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "img" / "app.png"
SIZE = (1400, 1000)  # the viewport of conftest.open_link: a laptop screen, sidebar and the first charts in view
PNG = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, which the format puts first."""
    assert data[:8] == PNG and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_readme_screenshot_is_the_app(browser, app_url):
    ctx, pg = open_app(browser, app_url)
    try:
        assert pg.locator("[data-testid=stMetricValue]").first.inner_text().strip() == "positive"
        if os.environ.get("HEAD_EXPLORER_WRITE_SCREENSHOTS") == "1":
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            pg.screenshot(path=str(SCREENSHOT))
    finally:
        ctx.close()
    data = SCREENSHOT.read_bytes()
    assert png_size(data) == SIZE
    assert 20_000 < len(data) < 2_000_000  # a drawn page, not a blank one; small enough for the repository
