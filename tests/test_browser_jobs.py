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

from conftest import TRAINING_SERVER, commit, open_app, pick_folder_checkpoint, wait_idle, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
ENDED = re.compile(r"job ended: fine-tune (\S+) \((.*?)\); slots free (\d+) of (\d+)")


@pytest.fixture
def server(served, tiny_root):
    """One job slot and no training-size cap (500 full epochs); shared, its slot free; and the tiny model the
    fine-tunes train (what is watched is the job's slot and thread, not what it learns)."""
    s = served(TRAINING_SERVER).after_jobs()
    return s.url, s.log, psutil.Process(s.pid), tiny_root / "tiny-bert"


def _open_finetune(browser, url, checkpoint):
    ctx, pg = open_app(browser, url)
    pick_folder_checkpoint(pg, checkpoint)
    pg.locator("[data-testid=stSidebarNav] a[href$='/fine-tune']").first.click()
    pg.wait_for_url("**/fine-tune")
    wait_idle(pg)
    pg.get_by_role("heading", name=T("finetune.title")).first.wait_for()
    return ctx, pg


def _ended(log) -> list[tuple[str, str, int, int]]:
    return [(m[1], m[2], int(m[3]), int(m[4])) for m in ENDED.finditer(log.read_text(errors="replace"))]


def test_closing_the_tab_stops_its_fine_tune_within_10_s_and_frees_the_slot(browser, server):
    url, log, proc, checkpoint = server
    before = len(_ended(log))  # a shared server: earlier tests' fine-tunes
    ctx, pg = _open_finetune(browser, url, checkpoint)
    pg.get_by_text(T("finetune.mode_full")).click()
    wait_idle(pg)
    epochs = pg.get_by_label(T("finetune.epochs"))
    commit(epochs, "500", "Enter")
    pg.get_by_role("button", name=T("finetune.start")).click()
    stop = pg.get_by_role("button", name=T("finetune.stop"))
    wait_until(stop.is_enabled, 60, "the running fine-tune's Stop button", every=0.5)
    assert _ended(log)[before:] == []
    # the running job's progress bar is drawn ("Epoch 1 of 500 running…"); its CPU share is then measured over a
    # window: a rate, so there is no condition to wait on instead
    pg.locator("[data-testid=stMain] [data-testid=stProgress]").first.wait_for(timeout=60_000)
    cpu = lambda: {t.id: t.user_time + t.system_time for t in proc.threads()}  # noqa: E731  thread -> CPU seconds
    start = cpu()
    busy = proc.cpu_percent(interval=2.0)
    grew = {tid: s - start.get(tid, 0.0) for tid, s in cpu().items()}
    trainer = max(grew, key=grew.get)  # the thread that trains: the one that used the CPU in that window
    # training: an idle server uses a few per cent; a loaded machine gives it well under a core (19 % seen with
    # the suite's other workers on two cores), so the bar is low
    assert busy > 8 and grew[trainer] > 0

    ctx.close()  # the visitor closes the tab mid-training (500 full epochs: far past the test's end)
    t0 = time.monotonic()
    wait_until(lambda: _ended(log)[before:], 30, "the closed tab's fine-tune's end", every=0.2)
    took = time.monotonic() - t0
    ended = _ended(log)[before:]
    assert len(ended) == 1 and ended[0][1:] == ("stopped: owner gone", 1, 1), log.read_text()[-2000:]
    assert took <= 10, f"slot freed {took:.1f} s after the tab closed"
    print(f"\nslot freed {took:.1f} s after the tab closed")
    # the training thread is gone, not just flagged: it has exited (an exit, not a lower CPU share: the server's
    # other work on a loaded machine makes a share measured after the end noisy)
    wait_until(lambda: trainer not in {t.id for t in proc.threads()}, 10, "the training thread's exit", every=0.2)

    ctx, pg = _open_finetune(browser, url, checkpoint)  # a new visitor gets the slot
    pg.get_by_role("button", name=T("finetune.start")).click()  # head mode, 30 epochs: seconds
    wait_idle(pg)
    main = pg.locator("[data-testid=stMain]")
    assert T("errors.jobs_busy") not in main.inner_text()  # a slot, not "the queue is full"
    wait_until(lambda: len(_ended(log)) >= before + 2, 60, "the second fine-tune's end", every=0.5)
    assert _ended(log)[before + 1][1:] == ("finished", 1, 1)
    ctx.close()
