"""Background jobs (a fine-tune today): a thread with progress, a stop flag and a result, in one of a
bounded number of slots.

No streamlit here: explorer/ui/ ties each job to its browser session by passing `alive`, a
question the watchdog asks every POLL_S seconds ("is the owner's tab still connected?"). A closed tab's
session object can linger for minutes (Streamlit keeps it for a reconnect), so waiting for it to be
collected would keep a core busy and a slot taken; instead a job whose owner has been gone for
`grace` seconds is told to stop, and its slot is freed when its thread ends. Each end is logged on
one line ("job ended ..."), which is how the browser test sees the slot come back.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from explorer.runtime.session_models import TRAINING_ENV, env_int, release_memory

DEFAULT_SLOTS = 2  # jobs running at once (HEAD_EXPLORER_TRAINING), each holding a model copy
GRACE_S = 3.0  # how long an owner may be gone (a reload, a network blip) before its jobs stop
POLL_S = 0.5

_log = logging.getLogger("head_explorer.jobs")  # a child of the app's logger: same handler, same format

Progress = Callable[[dict], None]
Stop = Callable[[], bool]
Work = Callable[[Progress, Stop], object]  # work(progress, stop) -> result


class Cancelled(Exception):
    """Raised by a job's stop check once its owner is gone: the work ends at once instead of finishing
    up (a fine-tune stopped by its user still evaluates and keeps its best epoch; nobody waits for this one)."""


ABANDONED = ("owner gone", "owner closed")


class Job:
    """One background run. `progress` grows as the work reports; `result` or `error` is set when
    `done`. Only the job's own thread writes them."""

    def __init__(self, owner: str, kind: str, name: str, alive: Callable[[], bool] | None):
        self.owner, self.kind, self.name, self.alive = owner, kind, name, alive
        self.progress: list[dict] = []
        self.result: object = None
        self.error: BaseException | None = None
        self.why: str | None = None  # why it was asked to stop: "user", "owner gone", "owner closed"
        self._stop = threading.Event()
        self._done = threading.Event()
        self.thread: threading.Thread | None = None

    def stop(self, why: str = "user") -> None:
        if not self._stop.is_set():
            self.why = why
            self._stop.set()

    def stopping(self) -> bool:
        """The work's stop check, passed to it as `stop`: True once its user asked; raises Cancelled
        once its owner is gone."""
        if self._stop.is_set() and self.why in ABANDONED:
            raise Cancelled(self.why)
        return self._stop.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)


class Jobs:
    """The process's jobs, keyed by owner. Thread-safe: sessions start jobs from their script threads."""

    def __init__(self, slots: int | None = None, grace: float = GRACE_S, poll: float = POLL_S):
        self.slots = slots or env_int(TRAINING_ENV, DEFAULT_SLOTS)
        self.grace, self.poll = grace, poll
        self._lock = threading.Lock()
        self._running: list[Job] = []  # a slot each, from start() until its thread ends
        self._watchdog: threading.Thread | None = None

    def start(self, owner: str, kind: str, name: str, work: Work,
              alive: Callable[[], bool] | None = None) -> Job | None:
        """Run `work(progress, stop)` in a thread, or return None when every slot is taken."""
        job = Job(owner, kind, name, alive)
        job.thread = threading.Thread(target=self._run, args=(job, work), daemon=True, name=f"job-{kind}-{name}")
        with self._lock:
            if len(self._running) >= self.slots:
                return None
            self._running.append(job)
            if alive is not None and (self._watchdog is None or not self._watchdog.is_alive()):
                self._watchdog = threading.Thread(target=self._watch, daemon=True, name="jobs-watchdog")
                self._watchdog.start()
        job.thread.start()
        return job

    def _run(self, job: Job, work: Work) -> None:
        try:
            job.result = work(job.progress.append, job.stopping)
        except Cancelled:
            pass
        except Exception as err:  # noqa: BLE001 - a thread boundary: the failure reaches the page as one line
            job.error = err
        finally:
            abandoned = job.why in ABANDONED
            if abandoned:  # nobody will read it: let the model copy go now
                job.result = job.error = None
            with self._lock:
                self._running.remove(job)  # the slot is free
            if abandoned:
                release_memory()
            how = f"stopped: {job.why}" if job.why else "error" if job.error is not None else "finished"
            _log.info("job ended: %s %s (%s); slots free %d of %d", job.kind, job.name, how, self.free, self.slots)
            job._done.set()

    def _watch(self) -> None:
        """Stop the jobs whose owner has been gone for `grace` seconds; ends when none is left to watch."""
        gone: dict[int, float] = {}
        while True:
            with self._lock:
                watched = [j for j in self._running if j.alive is not None]
                if not watched:
                    self._watchdog = None
                    return
            now = time.monotonic()
            for job in watched:
                try:
                    here = job.alive()
                except Exception:  # noqa: BLE001 - a runtime that cannot answer counts as still there
                    here = True
                if here:
                    gone.pop(id(job), None)
                elif now - gone.setdefault(id(job), now) >= self.grace:
                    job.stop("owner gone")
            time.sleep(self.poll)

    def stop_owner(self, owner: str) -> None:
        """Stop every job of `owner` (its session was closed for good)."""
        with self._lock:
            mine = [j for j in self._running if j.owner == owner]
        for job in mine:
            job.stop("owner closed")

    def running(self, owner: str | None = None) -> list[Job]:
        with self._lock:
            return [j for j in self._running if owner is None or j.owner == owner]

    @property
    def free(self) -> int:
        """Slots not taken."""
        with self._lock:
            return self.slots - len(self._running)
