"""Drawing on a page: user text kept literal, errors as one translated line, tables, column headers."""
from __future__ import annotations

from typing import Callable

import numpy as np
import streamlit as st

from explorer.model.heads import POOLING
from explorer.plots.common import presenter
from explorer.model.problem import Prediction, prediction_text
from explorer.text.errors import ExplorerError
from explorer.ui import gate
from explorer.text.plain import markdown as plain  # user text in Markdown: the one rule, in explorer.text.plain
from explorer.runtime.jobs import Cancelled, Refused
from explorer.ui import session  # session.start_job read at call time: tests wrap it
from explorer.ui.session import MODELS, lang, log, owner, progress_to, stop_if_gone, t


def prediction(pred: Prediction) -> str:
    """A prediction as the views show it, "none" translated (a multi-label prediction of no label)."""
    return prediction_text(pred, none=t("pipeline.none"))


def error(err: BaseException | str) -> None:
    """One st.error line: a core error in the session's language, user data kept literal. Any other
    exception (e.g. from a background thread) is logged and shown as the translated "unexpected" line."""
    if isinstance(err, ExplorerError):
        text = err.message(lang())
    elif isinstance(err, str):
        text = err
    else:
        log.error("unexpected error", exc_info=err)
        text = t("errors.unexpected", kind=type(err).__name__)
    st.error(plain(text.strip().splitlines()[0] if text.strip() else type(err).__name__))


def guarded(run: Callable[[], object]) -> None:
    """Run a page (or a fragment). Bad input that escaped the page shows as its one line; anything else
    as one translated line, the traceback going only to the server log. st.rerun, st.stop and
    st.switch_page raise BaseExceptions (Streamlit's ScriptControlException), which pass through."""
    try:
        run()
    except ExplorerError as err:
        error(err)
    except Exception as err:  # noqa: BLE001 - the page boundary: visitors never see a traceback
        log.exception("unexpected error while running a page")
        st.error(t("errors.unexpected", kind=type(err).__name__))


def table(rows: list[dict], **grid) -> None:
    """A data table: the interactive grid, or in presenter view an HTML table, which takes the larger
    type (the grid is drawn on a canvas that CSS cannot enlarge). User strings stay literal."""
    if st.session_state.get("presenter"):
        def cell(v):  # ✓ for a flag (no English true/false), blank for none, user text literal
            if isinstance(v, (bool, np.bool_)):
                return "✓" if v else ""
            return "" if v is None else plain(v) if isinstance(v, str) else v
        st.table([{k: cell(v) for k, v in row.items()} for row in rows], hide_index=True)
    else:
        st.dataframe(rows, hide_index=True, **grid)


def chart(fig, key: str, where=None, height: int | None = None) -> None:
    """st.plotly_chart (in `where`, a column or container), laid out for presenter view when it is on:
    larger type that the figure itself makes room for, not only CSS, no taller than `height` px (default:
    the room a projector leaves, see plots.common.presenter)."""
    (where or st).plotly_chart(presenter(fig, height) if st.session_state.get("presenter") else fig, key=key)


def headers(rows: list[dict], prefix: str) -> list[dict]:
    """Table rows from the core with their column names translated (`prefix` + column name)."""
    return [{t(prefix + k): v for k, v in row.items()} for row in rows]


STEP_KEYS = POOLING  # the pooling steps: app.step_first | _last | _mean


def step_label(name: str) -> str:
    """A head step's name as shown: the pooling steps are words, the others module names."""
    return t(f"app.step_{STEP_KEYS[name]}") if name in STEP_KEYS else name


def show_evictions() -> None:
    """Say which of this session's models were evicted to stay within the memory bounds."""
    for name, why in MODELS.take_evicted(owner()):
        st.info(t(f"safety.evicted_{why}", name=plain(name), n=MODELS.per_owner, mb=MODELS.budget_bytes // 2**20))


def show_refused() -> None:
    """One line per widget value the server refused for this session (explorer/ui/gate.py)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    for r in gate.take(ctx.session_id) if ctx is not None else ():
        st.error(plain(t(f"errors.{r.reason}", widget=r.key, **dict(r.fields))))


def confirmed(what: str, params: object, warning: str) -> bool:
    """Ask before costly work: the warning and a "compute anyway" button until the user agrees for
    these `params`; the answer is remembered for them. True once agreed."""
    ss, key = st.session_state, f"_confirmed_{what}"
    if ss.get(key) == params:
        return True
    st.warning(warning)
    if st.button(t("safety.compute_anyway"), key=f"{what}_anyway"):
        ss[key] = params
        return True
    return False


def costly_job(what: str, params: object, warning: str, work: Callable[[Callable[[float, str], None]], object],
               running: str, size=None, expected_s: float | None = None):
    """Work a page asks about first: `warning` and "Compute anyway" until the user agrees for these `params`,
    then `work(progress)` as a job in the one queue (queued: its place and wait, its progress within a second,
    Stop; other sessions go on meanwhile). Stop asks again. The result, or None while there is none."""
    ss = st.session_state
    if ss.get(f"_cancelled_{what}") == params:  # stopped: back to the question
        ss.pop(f"_cancelled_{what}")
        ss.pop(f"_confirmed_{what}", None)
    if not confirmed(what, params, warning):
        held = ss.get(f"_job_{what}")
        if held is not None and held[0] != params:  # asked again for new inputs: the old ones' job ends
            ss.pop(f"_job_{what}")[1].stop()
        return None
    return queued(what, params, work, running, t("jobs.stop"), start=True, expected_s=expected_s, size=size)


def with_progress(what: str, params: object, work: Callable[[Callable[[float, str], None]], object],
                  running: str, stop: str):
    """Run `work(progress)` under a progress bar with a Stop button (`{what}_stop`); a click on Stop
    ends this run and is remembered for `params` (see cancelled)."""
    holder = st.empty()
    with holder.container():
        st.button(stop, key=f"{what}_stop", on_click=_cancel, args=(what, params))
        bar = st.progress(0.0, text=running)
    out = work(progress_to(bar))
    holder.empty()
    return out


def _cancel(what: str, params: object, job=None) -> None:
    st.session_state[f"_cancelled_{what}"] = params
    held = st.session_state.get(f"_job_{what}")
    if held is not None:  # heavy work in the queue (see queued): leave the line, or stop running
        held[1].stop()
    if job is not None:  # one followed without being held (a refused start's first)
        job.stop()


def run_or_queue(what: str, params: object, work: Callable[[Callable[[float, str], None]], object], running: str,
                 stop: str, start: bool, heavy: bool, expected_s: float | None = None, size=None):
    """`work(progress)`: heavy work through the job queue (queued), light work here on the session's thread
    (with_progress, when `start`). The result, or None when nothing ran."""
    if heavy:
        return queued(what, params, work, running, stop, start, expected_s, size)
    held = st.session_state.pop(f"_job_{what}", None)
    if held is not None:  # a heavy job for inputs since changed to light ones: nobody will read it
        held[1].stop()
    return with_progress(what, params, work, running, stop) if start else None


def queued(what: str, params: object, work: Callable[[Callable[[float, str], None]], object], running: str,
           stop: str, start: bool = True, expected_s: float | None = None, size=None):
    """Heavy `work(progress)` (a label audit, a long attribution), run as a job in the process's one bounded
    queue (session.JOBS) instead of on this session's thread, and waited for here: the page shows its place
    and wait while in line, then its progress, with with_progress's Stop button (`{what}_stop`, which leaves
    the line). Waiting costs no CPU, so other sessions' interactive runs are never stuck behind it.

    A job outlives this run: one for the same `params` started by an earlier run (cut short by another
    click, or a visit to another page) is picked up, finished or not; one for other params is stopped.
    With `start` False only such a job is waited for. Returns the result; None when nothing ran.

    `what` is the job's kind: a session has one of each at most (jobs.Refused), so a superseded job is stopped
    before its successor starts, and a start refused for one found running (lost by an interrupted run) says
    so and follows that one. `size`: jobs.Size, for the estimates of jobs waiting behind it."""
    ss, slot = st.session_state, f"_job_{what}"
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
            job = session.start_job(what, what, job_work, expected_s, size)
        except Refused as err:
            if err.first is None:
                raise
            st.info(err.message(lang()))
            follow(err.first, what, None, running, stop)  # its result is for other inputs: only shown going
            return None
        if job is None:
            raise ExplorerError("jobs_busy")
        ss[slot] = held = (params, job)
    job = follow(held[1], what, params, running, stop)
    ss.pop(slot, None)
    if job.error is not None:
        raise job.error
    if job.why:  # stopped (its Stop button's run follows)
        st.stop()
    return job.result


def follow(job, what: str, params: object, running: str, stop: str):
    """Draw `job` until it ends: its place and wait while in line, then its progress, and a Stop button
    (`{what}_stop`); returns the job, done."""
    box = st.empty()
    with box.container():
        st.button(stop, key=f"{what}_stop", on_click=_cancel, args=(what, params, job))
        line = st.empty()
    while not job.done:
        # Ends this run once the tab is gone. The job is left to the watchdog, which asks the runtime: a
        # StopException here also comes from a click's rerun replacing this run, after which the job is
        # picked up again; taking it for the tab's end stopped jobs as "owner gone" on a click.
        stop_if_gone()
        with line.container():  # redrawn each tick: a click on Stop or another widget ends this run here
            if not job_queue(job):  # drawn before the first wait: the bar shows at once
                last = job.progress[-1] if job.progress else {"frac": 0.0, "msg": running}
                st.progress(min(1.0, max(0.0, last["frac"])), text=last["msg"] or running)
        job.wait(0.5)
    box.empty()
    return job


def job_queue(job) -> bool:
    """A job still waiting for a slot: its place in line and the estimated wait, in one line, redrawn by the
    page's live fragment; True while it waits (the page then has nothing else to draw for it)."""
    if job is None or not job.waiting:
        return False
    wait = job.estimate()
    if wait >= 90:
        st.info(t("jobs.waiting_min", place=job.place(), wait=round(wait / 60)))
    else:
        st.info(t("jobs.waiting_s", place=job.place(), wait=max(5, 5 * round(wait / 5))))
    return True


def cancelled(what: str, params: object) -> bool:
    """Did the user stop `what`'s work for these `params` (with_progress's Stop button)?"""
    return st.session_state.get(f"_cancelled_{what}") == params

