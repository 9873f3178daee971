"""Real browser + real server: a fine-tune whose tab is closed stops within seconds and its slot is
freed, although Streamlit keeps the closed tab's session for a reconnect (for minutes by default).

What is observed, all from outside the server: the server's own log line "job ended: fine-tune …
(stopped: owner gone); slots free 1 of 1" (written when the job's thread has ended and released its
slot), the server process's CPU going idle (the training thread really stopped), and a new tab that
can start a fine-tune (with HEAD_EXPLORER_TRAINING=1 it would otherwise be told to try later)."""
import re
import time

import psutil
import pytest

from explorer.text import i18n

from conftest import _chromium, open_app, serve_app, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
ENDED = re.compile(r"job ended: fine-tune (\S+) \((.*?)\); slots free (\d+) of (\d+)")


@pytest.fixture(scope="module")
def server(tiny_root, tmp_path_factory):
    _chromium()
    log = tmp_path_factory.mktemp("server") / "stderr.log"
    with open(log, "wb") as err, serve_app({"HEAD_EXPLORER_TRAINING": "1", "HEAD_EXPLORER_TRAIN_TOKENS": str(10**12)},
                                        stderr=err) as (url, proc):
        yield url, log, psutil.Process(proc.pid)


def _open_finetune(browser, url):
    ctx, pg = open_app(browser, url)
    pg.locator("[data-testid=stSidebarNav] a[href$='/fine-tune']").first.click()
    pg.wait_for_url("**/fine-tune")
    wait_idle(pg)
    pg.get_by_role("heading", name=T("finetune.title")).first.wait_for()
    return ctx, pg


def _ended(log) -> list[tuple[str, str, int, int]]:
    return [(m[1], m[2], int(m[3]), int(m[4])) for m in ENDED.finditer(log.read_text(errors="replace"))]


def test_closing_the_tab_stops_its_fine_tune_within_10_s_and_frees_the_slot(browser, server):
    url, log, proc = server
    ctx, pg = _open_finetune(browser, url)
    pg.get_by_text(T("finetune.mode_full")).click()
    wait_idle(pg)
    epochs = pg.get_by_label(T("finetune.epochs"))
    epochs.fill("500")
    epochs.press("Enter")
    wait_idle(pg)
    pg.get_by_role("button", name=T("finetune.start")).click()
    stop = pg.get_by_role("button", name=T("finetune.stop"))
    for _ in range(120):  # running: its Stop button is enabled
        if stop.is_enabled():
            break
        pg.wait_for_timeout(500)
    assert stop.is_enabled() and _ended(log) == []
    pg.wait_for_timeout(3000)
    busy = proc.cpu_percent(interval=2.0)
    assert busy > 20  # training (a loaded machine gives the server less than a core)

    ctx.close()  # the visitor closes the tab mid-training (500 epochs: hours on this CPU)
    t0 = time.monotonic()
    while not _ended(log) and time.monotonic() - t0 < 30:
        time.sleep(0.2)
    took = time.monotonic() - t0
    ended = _ended(log)
    assert len(ended) == 1 and ended[0][1:] == ("stopped: owner gone", 1, 1), log.read_text()[-2000:]
    assert took <= 10, f"slot freed {took:.1f} s after the tab closed"
    print(f"\nslot freed {took:.1f} s after the tab closed")
    proc.cpu_percent(interval=None)
    time.sleep(3)
    assert proc.cpu_percent(interval=None) < min(25, busy / 2)  # the training thread is gone, not just flagged

    ctx, pg = _open_finetune(browser, url)  # a new visitor gets the slot
    pg.get_by_role("button", name=T("finetune.start")).click()  # head mode, 30 epochs: seconds
    wait_idle(pg)
    main = pg.locator("[data-testid=stMain]")
    assert T("errors.jobs_busy") not in main.inner_text()  # a slot, not "the queue is full"
    for _ in range(120):
        if len(_ended(log)) == 2:
            break
        pg.wait_for_timeout(500)
    assert _ended(log)[1][1:] == ("finished", 1, 1)
    ctx.close()
