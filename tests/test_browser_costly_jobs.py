"""Real browser + real server: what a page asks about first ("Compute anyway") runs as a job in the one
queue. On the Lesson with a 20,000-character text its progress shows within 2 s of the click, another
session's edit is answered while it runs, Stop ends it within 5 s (the server's own "job ended" line), and
a second start in the same session takes no second place in the line."""
import re
import time

import pytest

from explorer.text import i18n

from conftest import TRAINING_SERVER, commit, open_app, sidebar_text, wait_idle, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
LONG = ("The film was long, and its plot wandered; still, the acting was good and I liked the music. " * 250)[:20_000]
ENDED = re.compile(r"job ended: lesson_loo lesson_loo \((.*?)\)")
QUEUED = re.compile(r"job queued: lesson_loo lesson_loo; place (\d+)")


@pytest.fixture
def server(served):
    """One job slot, so a second job waits in line; shared with the other files that need it, its slot free."""
    return served(TRAINING_SERVER).after_jobs()


def _lesson_with_long_text(browser, url):
    """(context, page, seconds the visit to the lesson took): the lesson on a long text, its question asked."""
    ctx, pg = open_app(browser, url)
    box = sidebar_text(pg)
    commit(box, LONG)
    t0 = time.monotonic()
    pg.locator("[data-testid=stSidebarNav] a[href$='/guided-lesson']").first.click()
    pg.wait_for_url("**/guided-lesson")
    wait_idle(pg)
    return ctx, pg, time.monotonic() - t0


def _ended(log) -> list[str]:
    return ENDED.findall(log.read_text(errors="replace"))


def _anyway(pg):
    return pg.get_by_role("button", name=T("safety.compute_anyway"))


def test_compute_anyway_is_a_job_with_progress_in_2_s_stop_in_5_s_and_the_server_answers_others(browser, server):
    url, log = server.url, server.log
    ctx, pg, visit = _lesson_with_long_text(browser, url)
    other_ctx, other = open_app(browser, url)  # another student, on the same server
    try:
        before = len(_ended(log))
        t0 = time.monotonic()
        _anyway(pg).click()
        bar = pg.locator("[data-testid=stMain] [data-testid=stProgress]")
        bar.first.wait_for(timeout=10_000)
        shown = time.monotonic() - t0
        # 2 s, or twice what a visit to the same page took just before where the machine is loaded: the click's
        # run is that page's run plus a place in the queue (leave-one-out on the script thread would take minutes)
        assert shown <= max(2.0, 2 * visit), f"progress shown {shown:.1f} s after the click (a visit: {visit:.1f} s)"
        # meanwhile the other session's edit is answered (its page reruns to the end) while the job runs
        t1 = time.monotonic()
        box = sidebar_text(other)
        commit(box, "The food was cold.")
        answered = time.monotonic() - t1
        assert len(_ended(log)) == before, "the job ended before the other session was answered"
        assert bar.count() > 0 and answered < 20, f"the other session waited {answered:.1f} s"
        pg.get_by_role("button", name=T("jobs.stop")).click()
        t2 = time.monotonic()
        wait_until(lambda: len(_ended(log)) > before, 10, "the job's end", every=0.1)
        took = time.monotonic() - t2
        assert _ended(log)[before:] == ["stopped: user"] and took <= 5.0, f"{_ended(log)} after {took:.1f} s"
        wait_idle(pg)
        assert _anyway(pg).count() == 1 and bar.count() == 0  # stopped: asked again
        print(f"\nprogress after {shown:.2f} s; other session answered in {answered:.1f} s; stopped in {took:.2f} s")
    finally:
        other_ctx.close()
        ctx.close()


def test_a_second_start_in_one_session_takes_no_second_place(browser, server):
    url, log = server.url, server.log
    queued_before = len(QUEUED.findall(log.read_text(errors="replace")))  # a shared server: earlier tests' lines
    ended_before = len(_ended(log))
    first_ctx, first, _ = _lesson_with_long_text(browser, url)  # a classmate's job holds the one slot
    ctx, pg, _ = _lesson_with_long_text(browser, url)
    try:
        _anyway(first).click()
        first.get_by_role("button", name=T("jobs.stop")).wait_for()
        _anyway(pg).click()  # waits in line behind it
        line = pg.locator("[data-testid=stMain] [data-testid=stAlert]").filter(has_text="place 1 in the queue")
        line.first.wait_for(timeout=15_000)
        pg.get_by_text(re.compile(r"^All \d+ words$")).click()  # other inputs: its question again, the old job ends
        _anyway(pg).click(timeout=15_000)  # a second start
        wait_until(lambda: len(QUEUED.findall(log.read_text(errors="replace"))) >= queued_before + 2, 15,
                   "the second start's line", every=0.1)
        line.first.wait_for(timeout=15_000)
        queued = [int(p) for p in QUEUED.findall(log.read_text(errors="replace"))][queued_before:]
        assert queued == [1, 1], queued  # the second took the first's place, not a second one
        assert "stopped: user, while waiting" in _ended(log)[ended_before:]
        assert pg.locator("[data-testid=stMain]").get_by_text("place 2").count() == 0
    finally:
        ctx.close()
        first_ctx.close()
