"""The one way a page runs work: ui.run asks first when the work is costly, runs it here or as a job in the
process's one queue, shows its place in line, its progress and a Stop button, and keeps its result for the
inputs it ran on, so that reruns (a click elsewhere, a visit to another page) find it again. The only module
that starts jobs (start_job) and follows them (tests/test_one_way_to_run.py holds this).

Work that runs for minutes while its page stays usable (a fine-tune) runs in the background: ui.run starts its
job and returns at once, and a fragment redraws the job every second without holding the page's run."""
from __future__ import annotations

from typing import Callable, Hashable, TypeVar

import streamlit as st

from explorer.runtime import jobs
from explorer.runtime.jobs import Cancelled, Job, Progress, Refused
from explorer.text.errors import ExplorerError
from explorer.ui import session  # session.session_alive read at call time: tests replace it
from explorer.ui.cache import memo
from explorer.ui.render import run_guarded, show_error
from explorer.ui.session import JOBS, client_address, lang, owner, progress_to, stop_if_gone, t

T = TypeVar("T")
# work(progress) -> result; in the background, work(report, stopping) -> result (jobs.Work): `report(item)`
# adds to the job's history (a fine-tune's finetune.EpochReport per epoch), `stopping()` says Stop was clicked,
# and what a stopped run keeps is the work's own (a fine-tune its best epoch).
Work = Callable[[Progress], T] | jobs.Work

# Session state per kind of work (`what`): the inputs the user agreed to for costly work, the inputs whose
# run was stopped, and the job this session holds in the queue as (inputs, job).
AGREED, STOPPED, HELD = "_agreed_{}", "_stopped_{}", "_job_{}"


def run(what: str, params: Hashable, work: Work, *, ask: str | None = None, heavy: bool = False,
        start: bool | None = None, running: str = "", stop: str | None = None, expected_s: float | None = None,
        size=None, background: Callable[[Job], None] | None = None, name: str | None = None) -> T | Job | None:
    """`work(progress)` for `params`, its result kept (memo) for them: a rerun returns it without running again.
    `what` names the work: its Stop button is `{what}_stop`, its "Compute anyway" `{what}_anyway`, and a session
    runs one `what` at a time.

    `ask`: a warning shown with "Compute anyway" until the user agrees for these params; then the work runs as
    a queued job, and Stop asks again. `heavy`: a job in the one queue (its place and wait while in line,
    then its progress; other sessions go on meanwhile) instead of on this session's thread. `start`: None runs
    unless the user stopped it for these params; False only picks up a job started by an earlier run.
    `running`: the progress bar's text until the work reports; `stop`: the Stop button's label. `expected_s`,
    `size`: the queue's estimate (jobs.Size) until one has run.
    Returns the result, or None while there is none (not asked, not started, in line, stopped).

    `background`: the work runs for minutes while the page stays usable (a fine-tune): `work(report, stopping)`
    becomes a job named `name` when `start` is true, and this run does not wait for it; `background(job)` draws
    it while it runs, redrawn every second (its place in line first). The page draws its own Start and Stop
    (stop_job). Returns the job this session holds for `what` (running or done, its result on it), or None."""
    if background is not None:
        return _run_in_background(what, params, work, bool(start), name or what, expected_s, size, background)
    kept = memo(what, params)
    if kept is not None:
        return kept
    ss = st.session_state
    stop = stop or t("jobs.stop")
    if start is None:  # after a Stop, nothing starts again by itself for the same inputs
        start = not was_stopped(what, params)
    if ask is not None:
        if was_stopped(what, params):  # stopped: back to the question
            ss.pop(STOPPED.format(what))
            ss.pop(AGREED.format(what), None)
        if not _agreed(what, params, ask):
            held = ss.get(HELD.format(what))
            if held is not None and held[0] != params:  # asked again for new inputs: the old ones' job ends
                ss.pop(HELD.format(what))[1].stop()
            return None
        start = heavy = True
    if heavy:
        result = _run_queued(what, params, work, running, stop, start, expected_s, size)
    else:
        held = ss.pop(HELD.format(what), None)
        if held is not None:  # a heavy job for inputs since changed to light ones: nobody will read it
            held[1].stop()
        result = _run_here(what, params, work, running, stop) if start else None
    return None if result is None else memo(what, params, lambda: result)


def was_stopped(what: str, params: Hashable) -> bool:
    """Did the user stop `what`'s work for these `params` (its Stop button)?"""
    return st.session_state.get(STOPPED.format(what)) == params


def _agreed(what: str, params: Hashable, warning: str) -> bool:
    """Has the user agreed to costly work for these `params`? Until then the warning and "Compute anyway"."""
    ss, key = st.session_state, AGREED.format(what)
    if ss.get(key) == params:
        return True
    st.warning(warning)
    if st.button(t("safety.compute_anyway"), key=f"{what}_anyway"):
        ss[key] = params
        return True
    return False


def _stop(what: str, params: Hashable, job=None) -> None:
    """Stop button: remembered for `params`; a job in the queue leaves the line, or stops running."""
    st.session_state[STOPPED.format(what)] = params
    held = st.session_state.get(HELD.format(what))
    if held is not None:
        held[1].stop()
    if job is not None:  # one followed without being held (a refused start's first)
        job.stop()


def _run_here(what: str, params: Hashable, work: Work, running: str, stop: str):
    """Light work on this session's thread, under a progress bar with Stop (which ends this run)."""
    holder = st.empty()
    with holder.container():
        st.button(stop, key=f"{what}_stop", on_click=_stop, args=(what, params))
        bar = st.progress(0.0, text=running)
    out = work(progress_to(bar))
    holder.empty()
    return out


def _run_queued(what: str, params: Hashable, work: Work, running: str, stop: str, start: bool,
                expected_s: float | None, size):
    """Heavy work as a job in the process's one bounded queue (session.JOBS), waited for here. Waiting costs no
    CPU, so other sessions' interactive runs are never stuck behind it.

    A job outlives this run: one for the same `params` started by an earlier run (cut short by another click,
    or a visit to another page) is picked up, finished or not; one for other params is stopped. A session has
    one job of each `what` at most (jobs.Refused): a start refused for one found running (lost by an
    interrupted run) says so and follows that one."""
    ss, slot = st.session_state, HELD.format(what)
    held = ss.get(slot)
    if held is not None and (held[0] != params or (held[1].done and held[1].why)):
        held[1].stop()  # superseded (a new text), or a stopped one now asked for again
        ss.pop(slot)
        held = None
    if held is None:
        if not start:
            return None

        def job_work(progress, stopping):
            def report(frac: float, msg: str) -> None:
                if stopping():
                    raise Cancelled("user")
                progress({"frac": frac, "msg": msg})

            return work(report)

        try:
            job = start_job(what, what, job_work, expected_s, size)
        except Refused as err:
            if err.first is None:
                raise
            st.info(err.message(lang()))
            _follow(err.first, what, None, running, stop)  # its result is for other inputs: only shown going
            return None
        if job is None:
            raise ExplorerError("jobs_busy")
        ss[slot] = held = (params, job)
    job = _follow(held[1], what, params, running, stop)
    ss.pop(slot, None)
    if job.error is not None:
        raise job.error
    if job.why:  # stopped (its Stop button's run follows)
        st.stop()
    return job.result


def start_job(kind: str, name: str, work: jobs.Work, expected_s: float | None = None,
              size: jobs.Size | None = None) -> Job | None:
    """Run `work(report, stopping)` in the background for this session, or None when every slot is taken;
    jobs.Refused when this session already has a `kind` job, or its address its cap (HEAD_EXPLORER_CLIENT_JOBS).
    The job stops when its tab has been disconnected for jobs.GRACE_S seconds: a closed tab's session
    lingers in Streamlit for a reconnect, so its finalizer alone could keep a core busy for minutes."""
    return JOBS.start(owner(), kind, name, work, alive=session.session_alive(), expected_s=expected_s,
                      client=client_address(), size=size)


def _run_in_background(what: str, params: Hashable, work: jobs.Work, start: bool, name: str,
                       expected_s: float | None, size, draw: Callable[[Job], None]) -> Job | None:
    """ui.run's background mode: start the job when asked, then follow the held one without waiting for it. A
    start refused says so in one line and, when the session already runs one of this kind (one per session),
    follows that one instead."""
    ss, slot = st.session_state, HELD.format(what)
    if start:
        try:
            job = start_job(what, name, work, expected_s, size)
            if job is None:  # each job holds a core and memory: bounded per process, and so is the line
                raise ExplorerError("jobs_busy")
            ss[slot] = (params, job)
        except Refused as err:
            if err.first is not None:
                ss[slot] = (None, err.first)  # its inputs were another run's
            show_error(err)
        except ExplorerError as err:
            show_error(err)
    follow_in_background(slot, draw)
    held = ss.get(slot)
    return None if held is None else held[1]


def stop_job(what: str) -> None:
    """The Stop button of work run in the background (a callback): its job leaves the line, or stops running
    and keeps what the work keeps when stopped."""
    held = st.session_state.get(HELD.format(what))
    if held is not None:
        held[1].stop()


def _follow(job, what: str, params: Hashable, running: str, stop: str):
    """Draw `job` until it ends: its place and wait while in line, then its progress, and a Stop button
    (`{what}_stop`); returns the job, done."""
    box = st.empty()
    with box.container():
        st.button(stop, key=f"{what}_stop", on_click=_stop, args=(what, params, job))
        line = st.empty()
    while not job.done:
        # Ends this run once the tab is gone. The job is left to the watchdog, which asks the runtime: a
        # StopException here also comes from a click's rerun replacing this run, after which the job is
        # picked up again; taking it for the tab's end stopped jobs as "owner gone" on a click.
        stop_if_gone()
        with line.container():  # redrawn each tick: a click on Stop or another widget ends this run here
            if not show_queue_place(job):  # drawn before the first wait: the bar shows at once
                last = job.progress[-1] if job.progress else {"frac": 0.0, "msg": running}
                st.progress(min(1.0, max(0.0, last["frac"])), text=last["msg"] or running)
        job.wait(0.5)
    box.empty()
    return job


def show_queue_place(job) -> bool:
    """A job still waiting for a slot: its place in line and the estimated wait, in one line; True while it
    waits (the page then has nothing else to draw for it)."""
    if job is None or not job.waiting:
        return False
    wait = job.estimate()
    if wait >= 90:
        st.info(t("jobs.waiting_min", place=job.place(), wait=round(wait / 60)))
    else:
        st.info(t("jobs.waiting_s", place=job.place(), wait=max(5, 5 * round(wait / 5))))
    return True


def follow_in_background(slot: str, draw: Callable[[Job], None]) -> None:
    """The job held in session state under `slot` (as (inputs, job)), followed without holding this run: its
    place and wait while in line, then `draw(job)`, redrawn every second by a fragment while it runs; once it
    ends the whole page runs again, to draw its result."""
    job = _held_job(slot)
    running = job is not None and not job.done

    @st.fragment(run_every=1.0 if running else None)
    def live():
        run_guarded(lambda: _draw_live(slot, draw, running))  # a fragment's own reruns do not pass app.py's guard

    live()


def _held_job(slot: str) -> Job | None:
    held = st.session_state.get(slot)
    return None if held is None else held[1]


def _draw_live(slot: str, draw: Callable[[Job], None], running: bool) -> None:
    job = _held_job(slot)
    if job is None or show_queue_place(job):  # waiting for a slot: its place, and Stop leaves the line
        return
    draw(job)
    if running and job.done:
        st.rerun()  # finished: redraw the whole page with the results
