"""explorer.runtime.jobs: background jobs with progress, a stop flag, bounded slots, and a watchdog that stops
a job whose owner (a browser tab) is gone."""
import logging
import threading
import time

import pytest

from conftest import wait_until
from explorer.runtime import jobs as jobs_mod
from explorer.runtime.jobs import OVERRUN_S, Cancelled, Jobs, Refused


class ManualClock:
    """A Jobs clock that moves only when the test says: estimates and the watchdog's grace are asserted exactly,
    whatever else the machine's cores are doing."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _until_stopped(progress, stop):
    """Work that reports and checks its stop flag until told to stop; returns how many steps it took."""
    n = 0
    while not stop():
        n += 1
        progress({"step": n})
        time.sleep(0.01)  # one step of pretend work: the stop flag, checked each step, is what ends it
    return n


def test_finished_job_keeps_result_and_frees_its_slot():
    jobs = Jobs(slots=1)
    job = jobs.start("a", "test", "one", lambda progress, stop: (progress({"epoch": 1}), 42)[1])
    assert job.wait(5) and job.done
    assert job.result == 42 and job.error is None and job.progress == [{"epoch": 1}]
    assert jobs.free == 1 and jobs.running() == []


def test_stop_flag_ends_the_work_and_frees_the_slot():
    jobs = Jobs(slots=1)
    job = jobs.start("a", "test", "loop", _until_stopped)
    wait_until(lambda: job.progress)
    assert not job.done and jobs.free == 0 and jobs.running("a") == [job]
    job.stop()
    assert job.wait(5)
    assert job.result == len(job.progress) > 0 and job.why == "user" and jobs.free == 1


def test_error_is_kept_as_the_job_error_and_frees_the_slot():
    jobs = Jobs(slots=1)

    def boom(progress, stop):
        raise ValueError("bad input")

    job = jobs.start("a", "test", "boom", boom)
    assert job.wait(5)
    assert isinstance(job.error, ValueError) and job.result is None and jobs.free == 1


def test_slots_are_bounded_and_come_back():
    jobs = Jobs(slots=2, queue=0)
    first, second = (jobs.start(f"a{i}", "test", str(i), _until_stopped) for i in range(2))
    assert jobs.start("b", "test", "third", _until_stopped) is None  # every slot taken, no queue: refused
    first.stop()
    assert first.wait(5)
    third = jobs.start("b", "test", "third", _until_stopped)
    assert third is not None
    for job in (second, third):
        job.stop()
        assert job.wait(5)
    assert jobs.free == 2


def test_with_one_slot_a_second_job_waits_first_in_line_with_an_estimate_and_starts_when_the_first_ends():
    clock = ManualClock()
    jobs = Jobs(slots=1, queue=2, clock=clock)
    first = jobs.start("a", "fine-tune", "one", _until_stopped, expected_s=30)
    second = jobs.start("b", "fine-tune", "two", _until_stopped, expected_s=30)
    assert second is not None and second.waiting and not first.waiting
    assert second.place() == 1 and jobs.waiting() == [second] and jobs.running() == [first]
    clock.advance(5)
    assert second.estimate() == 25  # the first's expected remainder
    third = jobs.start("c", "fine-tune", "three", _until_stopped, expected_s=30)
    assert third.place() == 2 and third.estimate() == 55  # behind the first's remainder and the second
    assert jobs.start("d", "fine-tune", "four", _until_stopped) is None  # the queue is bounded too
    wait_until(lambda: first.progress)
    assert second.thread.ident is None and second.progress == []  # waiting: its work has not begun
    first.stop()
    assert first.wait(5)
    wait_until(lambda: second.progress)
    assert second.progress and not second.waiting and second.place() == 0 and second.estimate() == 0
    assert third.place() == 1  # moved up
    for job in (second, third):
        job.stop()
        assert job.wait(5)
    assert jobs.free == 1 and jobs.waiting() == []


def test_cancelling_a_waiting_job_removes_it_from_the_line_and_its_work_never_runs():
    jobs = Jobs(slots=1, queue=4)
    first = jobs.start("a", "fine-tune", "one", _until_stopped)
    ran = []
    second = jobs.start("b", "fine-tune", "two", lambda progress, stop: ran.append(1))
    third = jobs.start("c", "fine-tune", "three", lambda progress, stop: ran.append(3))
    second.stop()
    assert second.done and not second.waiting and second.why == "user"
    assert jobs.waiting() == [third] and third.place() == 1
    first.stop()
    assert third.wait(5) and ran == [3]  # the cancelled one never started
    assert jobs.free == 1


def test_the_estimate_learns_from_the_last_finished_job_of_its_kind():
    clock = ManualClock()
    jobs = Jobs(slots=1, queue=2, clock=clock)
    assert jobs.start("z", "fine-tune", "quick", lambda progress, stop: clock.advance(5)).wait(5)
    first = jobs.start("a", "fine-tune", "one", _until_stopped, expected_s=1000)
    second = jobs.start("b", "fine-tune", "two", _until_stopped, expected_s=1000)
    # the last one took 5 s, not the caller's guess; once the first has run past that, it still holds
    # its slot for a while: the wait is never "about 0 s" while every slot is busy
    assert second.estimate() == 5
    clock.advance(6)
    assert second.estimate() == OVERRUN_S
    for job in (first, second):
        job.stop()
        assert job.wait(5)


def test_stop_owner_takes_its_waiting_jobs_out_of_the_line():
    jobs = Jobs(slots=1, queue=2)
    first = jobs.start("a", "fine-tune", "one", _until_stopped)
    waiting = jobs.start("b", "fine-tune", "two", _until_stopped)
    jobs.stop_owner("b")
    assert waiting.done and jobs.waiting() == [] and not first.done
    first.stop()
    assert first.wait(5)


def test_stop_owner_stops_only_that_owners_jobs_and_drops_their_result():
    jobs = Jobs(slots=2)
    mine, other = jobs.start("gone", "test", "x", _until_stopped), jobs.start("here", "test", "y", _until_stopped)
    jobs.stop_owner("gone")
    assert mine.wait(5) and mine.why == "owner closed"
    assert mine.result is None and mine.error is None  # cancelled: nobody is left to read it
    assert not other.stopped and not other.done
    other.stop()
    assert other.wait(5) and jobs.free == 2


def test_watchdog_stops_a_job_whose_owner_stays_gone_and_not_one_that_comes_back():
    clock = ManualClock()
    jobs = Jobs(slots=2, grace=4, poll=0.005, clock=clock)
    here = {"blip": True, "gone": True}
    asked = {"blip": 0, "gone": 0}

    def alive(name):
        def ask():
            asked[name] += 1
            return here[name]
        return ask

    def next_poll(names=("blip", "gone")):
        """Wait for a whole watchdog poll that began after now: two more questions to each watched job."""
        seen = dict(asked)
        wait_until(lambda: all(asked[n] >= seen[n] + 2 for n in names), 10, "a watchdog poll", every=0.005)

    blip = jobs.start("blip", "test", "blip", _until_stopped, alive=alive("blip"))
    gone = jobs.start("gone", "test", "gone", _until_stopped, alive=alive("gone"))
    here["blip"] = here["gone"] = False
    next_poll()  # both seen gone at 0
    clock.advance(2)  # shorter than the grace: a reload or a network blip
    here["blip"] = True
    next_poll()
    clock.advance(1)  # 3 s gone, under the grace of 4: not stopped yet
    next_poll()
    assert not gone.stopped and not blip.stopped
    clock.advance(1)  # 4 s gone: the grace is up
    assert gone.wait(5)
    assert gone.why == "owner gone" and gone.result is None
    clock.advance(10)
    next_poll(("blip",))  # the stopped one is no longer watched
    assert not blip.stopped and not blip.done  # back within the grace: still running
    blip.stop()
    assert blip.wait(5) and jobs.free == 2


def test_watchdog_ends_when_nothing_is_left_to_watch():
    jobs = Jobs(slots=1, grace=0.1, poll=0.02)
    job = jobs.start("a", "test", "w", _until_stopped, alive=lambda: True)
    watchdog = jobs._watchdog
    assert watchdog is not None and watchdog.is_alive()
    job.stop()
    assert job.wait(5)
    watchdog.join(2)
    assert not watchdog.is_alive()


def test_a_cancelled_stop_check_raises_so_the_work_does_not_finish_up():
    jobs = Jobs(slots=1)
    after = threading.Event()

    def work(progress, stop):
        while not stop():
            time.sleep(0.01)  # pretend work between stop checks
        after.set()  # a user's stop lets the work finish up (evaluate, keep the best epoch) ...

    job = jobs.start("a", "test", "c", work)
    jobs.stop_owner("a")
    assert job.wait(5) and not after.is_set()  # ... an owner's departure does not
    with pytest.raises(Cancelled):
        job.stopping()


def test_the_end_of_each_job_is_logged_with_the_free_slots_and_the_device():
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    log = logging.getLogger("head_explorer.jobs")  # its parent may not propagate (Streamlit's logger)
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.INFO)
    try:
        job = Jobs(slots=1, device="cpu").start("a", "fine-tune", "ft-1", _until_stopped)
        job.stop("owner closed")
        assert job.wait(5)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    assert [x for x in lines if x.startswith("job ended")] == [
        "job ended: fine-tune ft-1 (stopped: owner closed); slots free 1 of 1 on cpu"]


def test_the_jobs_device_is_the_apps_resolved_unless_given(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_DEVICE", "cpu")
    assert Jobs(slots=1).device == "cpu"
    monkeypatch.setenv("HEAD_EXPLORER_DEVICE", "cuda:7")  # not here: named as set, never a traceback in a log line
    assert Jobs(slots=1).device == "cuda:7"
    assert Jobs(slots=1, device="cpu").device == "cpu"


def test_the_session_owner_finalizer_stops_its_jobs():
    """explorer.ui ties jobs to the session: when Streamlit forgets the session, its owner key dies."""
    import gc

    from explorer.ui import session

    owner = session._Owner()
    job = session.JOBS.start(owner.id, "test", "fin", _until_stopped)
    assert job is not None
    del owner
    gc.collect()
    assert job.wait(5) and job.why == "owner closed"


@pytest.mark.slow
def test_a_label_audit_on_the_script_thread_ends_once_its_tab_is_gone(monkeypatch):
    """The audit runs as a queued job that its page's run waits for; the waiting asks whether the tab is still
    there, and once it is gone the run ends and the job is stopped with it."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from explorer.runtime import jobs
    from explorer.ui import session

    calls = []
    monkeypatch.setattr(session, "session_alive", lambda: lambda: calls.append(1) or False)  # the tab closed
    monkeypatch.setattr(jobs, "GRACE_S", 0.0)
    monkeypatch.setattr(session.JOBS, "grace", 0.0)  # the watchdog stops a job whose tab is gone (0705992)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/audit.py").run()
    at.button(key="audit_run").click().run()
    assert not at.exception and calls  # asked, and the run ended without an error box ...
    assert "audit_result" not in at.session_state  # ... before the audit finished
    audits = [j for j in session.JOBS.running() + session.JOBS.waiting() if j.kind == "audit"]
    # Ended, then why: the watchdog stops the job on its next poll, which a busy core can delay past the run.
    ended = [(j.wait(30), j.why) for j in audits]
    assert all(e == (True, "owner gone") for e in ended), ended  # no core kept for a closed tab


# ---- fair shares: one job per session and kind, a cap per client address, estimates by kind and size ----

def _ending(*jobs_):
    for job in jobs_:
        job.stop()
        assert job.wait(5)


def test_a_session_has_one_job_of_a_kind_and_a_second_start_names_the_first():
    jobs = Jobs(slots=1, queue=4, per_client=0)
    first = jobs.start("me", "lesson_loo", "one", _until_stopped)
    waiting = jobs.start("me", "audit", "two", _until_stopped)  # another kind: its own place
    with pytest.raises(Refused) as err:
        jobs.start("me", "lesson_loo", "again", _until_stopped)
    assert err.value.first is first and err.value.key == "jobs_one_per_kind"
    with pytest.raises(Refused) as err:  # a waiting job counts as much as a running one
        jobs.start("me", "audit", "again", _until_stopped)
    assert err.value.first is waiting
    assert jobs.waiting() == [waiting] and jobs.running() == [first]  # no second place taken
    other = jobs.start("you", "lesson_loo", "theirs", _until_stopped)  # another session: its own
    assert other is not None and jobs.waiting() == [waiting, other]
    first.stop()  # stopped (still ending, or ended): no longer counts
    again = jobs.start("me", "lesson_loo", "again", _until_stopped)
    assert again is not None
    _ending(first, waiting, other, again)


def test_a_client_address_has_at_most_its_cap_of_jobs(monkeypatch):
    jobs = Jobs(slots=1, queue=8, per_client=2)
    a = jobs.start("tab1", "attr", "a", _until_stopped, client="10.0.0.7")
    b = jobs.start("tab2", "attr", "b", _until_stopped, client="10.0.0.7")  # another tab, the same machine
    with pytest.raises(Refused) as err:
        jobs.start("tab3", "attr", "c", _until_stopped, client="10.0.0.7")
    assert err.value.key == "jobs_client_cap" and err.value.first is None and "2" in err.value.message("vi")
    c = jobs.start("tab4", "attr", "d", _until_stopped, client="10.0.0.8")  # another address
    d = jobs.start("tab5", "attr", "e", _until_stopped)  # unknown address (this machine, or a proxy): no cap
    b.stop()
    e = jobs.start("tab3", "attr", "c", _until_stopped, client="10.0.0.7")  # one left: room again
    _ending(a, b, c, d, e)
    off = Jobs(slots=1, queue=8, per_client=0)
    many = [off.start(f"t{i}", "attr", str(i), _until_stopped, client="10.0.0.7") for i in range(4)]
    assert None not in many  # 0: no cap
    _ending(*many)
    monkeypatch.setenv("HEAD_EXPLORER_CLIENT_JOBS", "1")  # the setting, read at each start
    env = Jobs(slots=1, queue=8)
    one = env.start("t1", "attr", "1", _until_stopped, client="10.0.0.9")
    with pytest.raises(Refused):
        env.start("t2", "attr", "2", _until_stopped, client="10.0.0.9")
    _ending(one)


def test_estimates_come_from_the_same_kind_and_variant_scaled_by_size_never_from_another():
    clock = ManualClock()
    jobs = Jobs(slots=1, queue=4, per_client=0, clock=clock)
    # a head-mode fine-tune of 100 rows x epochs took 0.2 s
    assert jobs.start("z", "fine-tune", "quick", lambda progress, stop: clock.advance(0.2), size=("head", 100)).wait(5)
    running = jobs.start("a", "fine-tune", "full", _until_stopped, size=("full", 200 * 100))
    behind = jobs.start("b", "fine-tune", "head", _until_stopped, size=("head", 1000))
    last = jobs.start("c", "audit", "x", _until_stopped, expected_s=40)
    # the full one is not estimated from the head one (0.2 s): the default until a full one has run here
    assert jobs._expected(running) == jobs_mod.DEFAULT_EXPECTED_S
    assert behind.estimate() == jobs_mod.DEFAULT_EXPECTED_S
    # the head one behind it is: 10 times the rows x epochs, 10 times as long
    assert jobs._expected(behind) == pytest.approx(2.0)
    assert last.estimate() == pytest.approx(62.0)  # the running full one's remainder, then the head one's 2 s
    assert jobs._expected(last) == 40  # no audit has finished: the page's guess, not a fine-tune's pace
    _ending(running, behind, last)


def test_span_maps_a_part_into_its_share_of_the_bar():
    seen = []
    part = jobs_mod.span(lambda f, m: seen.append((f, m)), 0.25, 0.75, "2/4: ")
    for f in (0.0, 0.5, 1.0):
        part(f, "lig")
    assert seen == [(0.25, "2/4: lig"), (0.5, "2/4: lig"), (0.75, "2/4: lig")]
    assert jobs_mod.span(None, 0.0, 1.0) is None  # nobody listening: nothing to call


def test_a_finalizer_inside_a_locked_section_does_not_wait_on_itself():
    """A session owner's finalizer runs when the garbage collector does: at any allocation, also in a thread that
    is inside Jobs' (or the model store's, or a cache's) own locked section. Calling in there must not deadlock."""
    import threading

    from explorer.runtime.budget import ByteCache
    from explorer.runtime.session_models import ModelStore
    jobs, store, cache = Jobs(slots=1, device="cpu"), ModelStore(per_owner=1, budget_bytes=2**30), ByteCache(lambda: 1)

    def collect_while_locked():
        with jobs._lock:
            jobs.stop_owner("gone")
        with store._lock:
            store.drop_owner("gone")
        with cache._lock:
            cache.drop(lambda key: key[0] == "gone")

    t = threading.Thread(target=collect_while_locked, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "a finalizer waited on a lock its own thread holds"
