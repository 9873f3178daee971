"""Background jobs (fine-tunes, label audits, long attributions): a thread with progress, a stop flag and a
result, in one of a bounded number of slots, behind one bounded first-come queue.

Heavy work is queued, not stacked: when every slot is taken a new job waits in line (at most `queue`
of them; past that it is refused) and starts by itself when a slot frees. A waiting job knows its
place and an estimate of its wait, and stopping it takes it out of the line. Interactive analyses
never pass through here, so an ordinary click never waits behind a fine-tune; what a page asks about
first ("Compute anyway": leave-one-out, max-flow, a long What-if, occlusion, the all-methods comparison)
does, as a job of its own.

No streamlit here: explorer/ui/ ties each job to its browser session by passing `alive`, a
question the watchdog asks every POLL_S seconds ("is the owner's tab still connected?"). A closed tab's
session object can linger for minutes (Streamlit keeps it for a reconnect), so waiting for it to be
collected would keep a core busy and a slot taken; instead a job whose owner has been gone for
`grace` seconds is told to stop, and its slot is freed when its thread ends. Each end is logged on
one line ("job ended ..."), which is how the browser test sees the slot come back.

Fair shares: a session (an owner) has at most one job of a kind running or waiting, and a
client address at most HEAD_EXPLORER_CLIENT_JOBS of them (0: no cap); a start past either is refused
(Refused, naming the job it already has) instead of taking another place. A job that was asked to stop
no longer counts: it is ending. Estimates come from finished jobs of the same kind and variant (a
fine-tune's mode), scaled by size (rows x epochs), never from another kind: a head-mode fine-tune of
5 s says nothing about a full one of 200 epochs.

A job's thread lowers its own scheduling priority (HEAD_EXPLORER_JOB_NICE, 10 by default): on Linux a
thread has its own nice value, so the kernel gives the cores to the sessions' script threads first and a
heavy job takes what they leave. torch.set_num_threads cannot do this per job (it is process-wide); with
the server's one intra-op thread (explorer/ui) a job's forwards run on its own thread, which is reniced.
"""
from __future__ import annotations

import heapq
import logging
import os
import threading
import time
from typing import Callable

from explorer.runtime.session_models import release_memory
from explorer.runtime.config import env_config, env_name
from explorer.runtime.device import DeviceError, resolve_device
from explorer.text.errors import ExplorerError

DEFAULT_EXPECTED_S = 60.0  # a job's length before any of its kind has finished in this process
OVERRUN_S = 1.0  # the least a running job is expected to need still, however long it has run
GRACE_S = 3.0  # how long an owner may be gone (a reload, a network blip) before its jobs stop
POLL_S = 0.5
# A job hears its Stop where its work reports progress: work that can choose its step (a forward over rows
# that each take long, such as leave-one-out on a 512-token text) reports at least this often.
HEARD_S = 1.0
NICE_ENV = env_name("job_nice")  # added to a job thread's nice value (0: unchanged)

_log = logging.getLogger("head_explorer.jobs")  # a child of the app's logger: same handler, same format

# (fraction done, message): the one signature of every long computation's progress; it may raise to cancel
Progress = Callable[[float, str], None]
Report = Callable[[object], None]  # what a job tells its page: a fine-tune's EpochReport, or {"frac", "msg"}
Stop = Callable[[], bool]
Work = Callable[[Report, Stop], object]  # work(report, stop) -> result


def span(progress: Progress | None, lo: float, hi: float, prefix: str = "") -> Progress | None:
    """`progress` for a part of the work that fills [lo, hi] of the whole: the part's fraction f reports as
    lo + (hi - lo) * f, its message with `prefix` in front. None (nobody listening) stays None."""
    if progress is None:
        return None
    return lambda fraction, message="": progress(lo + (hi - lo) * fraction, prefix + message)


class Cancelled(Exception):
    """Raised by a job's stop check once its owner is gone: the work ends at once instead of finishing
    up (a fine-tune stopped by its user still evaluates and keeps its best epoch; nobody waits for this one)."""


ABANDONED = ("owner gone", "owner closed")

# What a job's length grows with: (variant, units). Jobs of one kind and variant run at one pace (seconds per
# unit); units are their amount of work, e.g. ("full", rows x epochs) for a fine-tune. None: (None, 1).
Size = tuple[object, float]


class Refused(ExplorerError):
    """A start the fair-share rules refuse, one line; `first` is the job of that kind its session already has."""

    def __init__(self, key: str, first: "Job | None" = None, **params):
        super().__init__(key, **params)
        self.first = first


class Job:
    """One background run. `progress` grows as the work reports; `result` or `error` is set when
    `done`. Only the job's own thread writes them."""

    def __init__(self, owner: str, kind: str, name: str, alive: Callable[[], bool] | None,
                 expected_s: float | None = None, client: str | None = None, size: Size | None = None):
        self.owner, self.kind, self.name, self.alive = owner, kind, name, alive
        self.client = client  # the browser's address (None: unknown, or this machine): the per-client cap's key
        self.size: Size = size or (None, 1.0)
        self.expected_s = expected_s  # the caller's guess at its length, used until one of its kind has run
        self.started: float | None = None  # its Jobs' clock when it left the queue for a slot
        self._jobs: Jobs | None = None
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
            if self._jobs is not None:
                self._jobs._cancel_waiting(self)  # a job still in line leaves it at once

    @property
    def stopped(self) -> bool:
        """Asked to stop (it may still be ending)."""
        return self._stop.is_set()

    @property
    def waiting(self) -> bool:
        """In the queue: not started, not cancelled."""
        return self.started is None and not self.done

    def place(self) -> int:
        """1 for the next job to start, 2 after it...; 0 once it runs (or never queued)."""
        return self._jobs.place(self) if self._jobs is not None else 0

    def estimate(self) -> float:
        """Seconds until it should start (0 once it runs)."""
        return self._jobs.estimate(self) if self._jobs is not None else 0.0

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


def lower_priority() -> None:
    """Add HEAD_EXPLORER_JOB_NICE to the calling thread's nice value (Linux: setpriority on a thread id
    touches that thread only). Unprivileged, so it can only go down; elsewhere, or when refused, a no-op."""
    nice = env_config().job_nice
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        pass


class Jobs:
    """The process's jobs, keyed by owner. Thread-safe: sessions start jobs from their script threads."""

    def __init__(self, slots: int | None = None, grace: float = GRACE_S, poll: float = POLL_S,
                 queue: int | None = None, per_client: int | None = None, device: str | None = None,
                 clock: Callable[[], float] = time.monotonic):
        # HEAD_EXPLORER_TRAINING slots, each holding a model copy; HEAD_EXPLORER_QUEUE waiting, each only its closure
        self.slots = slots or env_config().training
        self.queue = env_config().queue if queue is None else queue
        self._per_client = per_client  # None: HEAD_EXPLORER_CLIENT_JOBS, read at each start
        self.grace, self.poll = grace, poll
        # Seconds from any origin, never going back: what estimates, paces and the watchdog's grace are measured
        # on, so a test can move time on by hand instead of sleeping through it.
        self._clock = clock
        # The device the jobs' models run on (None: the app's, HEAD_EXPLORER_DEVICE, read when asked): each slot
        # sizes its batches from it (budget.batch_mb: on cuda a share of its free memory) and the log names it.
        self._device = device
        # Re-entrant: a session owner's finalizer (explorer.ui.session._Owner) calls in here from the garbage
        # collector, which can run at any allocation, also in a thread that holds this lock already.
        self._lock = threading.RLock()
        self._running: list[Job] = []  # a slot each, from start() until its thread ends
        self._waiting: list[Job] = []  # first come, first served
        self._took: dict[tuple[str, object], float] = {}  # (kind, variant) -> seconds per unit, the last finished
        self._watchdog: threading.Thread | None = None

    @property
    def per_client(self) -> int:
        """Jobs one client address may have running or waiting (0: no cap)."""
        return env_config().client_jobs if self._per_client is None else self._per_client

    def start(self, owner: str, kind: str, name: str, work: Work,
              alive: Callable[[], bool] | None = None, expected_s: float | None = None,
              client: str | None = None, size: Size | None = None) -> Job | None:
        """Run `work(progress, stop)` in a thread now, or queue it when every slot is taken (it starts by
        itself when one frees); None when the queue is full too. Raises Refused when `owner` already has a
        `kind` job, or `client` its cap of jobs (stopped ones, which are ending, are not counted)."""
        job = Job(owner, kind, name, alive, expected_s, client, size)
        job._jobs = self
        job.thread = threading.Thread(target=self._run, args=(job, work), daemon=True, name=f"job-{kind}-{name}")
        cap = self.per_client
        with self._lock:
            live = [j for j in self._running + self._waiting if not j.stopped]
            first = next((j for j in live if j.owner == owner and j.kind == kind), None)
            if first is not None:
                _log.info("job refused: %s %s; its session has %s", kind, name, first.name)
                raise Refused("jobs_one_per_kind", first=first)
            if client is not None and cap > 0 and sum(j.client == client for j in live) >= cap:
                _log.info("job refused: %s %s; its client has %d", kind, name, cap)
                raise Refused("jobs_client_cap", n=cap)
            if len(self._running) < self.slots:
                self._running.append(job)
                job.started = self._clock()
            elif len(self._waiting) < self.queue:
                self._waiting.append(job)
            else:
                return None
            if alive is not None and (self._watchdog is None or not self._watchdog.is_alive()):
                self._watchdog = threading.Thread(target=self._watch, daemon=True, name="jobs-watchdog")
                self._watchdog.start()
        if job.started is not None:
            _log.info("job started: %s %s; slots free %d of %d", kind, name, self.free, self.slots)
            job.thread.start()
        else:
            _log.info("job queued: %s %s; place %d", kind, name, self.place(job))
        return job

    @property
    def device(self) -> str:
        """The jobs' device, as "cuda:0" or "cpu" ("auto" resolved); the setting as given if it is not here."""
        setting = self._device or env_config().device
        try:
            return str(resolve_device(setting))
        except DeviceError:
            return setting

    def _cancel_waiting(self, job: Job) -> None:
        with self._lock:
            if job not in self._waiting:
                return
            self._waiting.remove(job)
        _log.info("job ended: %s %s (stopped: %s, while waiting); slots free %d of %d on %s",
                  job.kind, job.name, job.why, self.free, self.slots, self.device)
        job._done.set()

    def place(self, job: Job) -> int:
        with self._lock:
            return self._waiting.index(job) + 1 if job in self._waiting else 0

    def _expected(self, job: Job) -> float:
        """Its expected length: the pace of the last finished job of its kind and variant times its units;
        before one has finished, the caller's guess."""
        variant, units = job.size
        pace = self._took.get((job.kind, variant))
        return pace * max(units, 1e-9) if pace else job.expected_s or DEFAULT_EXPECTED_S

    def estimate(self, job: Job) -> float:
        """Seconds until `job` should start: the running jobs' expected remainders fill the slots, then each
        job ahead in line takes the first slot to free for its expected length (Jobs._expected)."""
        now = self._clock()
        with self._lock:
            if job not in self._waiting:
                return 0.0
            # A job past its expected length still holds its slot: it has at least OVERRUN_S left, not 0.
            free_at = [max(OVERRUN_S, self._expected(j) - (now - (now if j.started is None else j.started)))
                       for j in self._running]
            free_at += [0.0] * (self.slots - len(free_at))
            heapq.heapify(free_at)
            for ahead in self._waiting:
                at = heapq.heappop(free_at)
                if ahead is job:
                    return at
                heapq.heappush(free_at, at + self._expected(ahead))
        return 0.0  # not reached: job is in _waiting

    def _run(self, job: Job, work: Work) -> None:
        lower_priority()
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
                self._running.remove(job)  # the slot is free: the first in line takes it
                if job.why is None and job.error is None:
                    now = self._clock()
                    took = now - (now if job.started is None else job.started)
                    self._took[(job.kind, job.size[0])] = took / max(job.size[1], 1e-9)
                nxt = self._waiting.pop(0) if self._waiting else None
                if nxt is not None:
                    self._running.append(nxt)
                    nxt.started = self._clock()
            if abandoned:
                release_memory()
            how = f"stopped: {job.why}" if job.why else "error" if job.error is not None else "finished"
            _log.info("job ended: %s %s (%s); slots free %d of %d on %s", job.kind, job.name, how, self.free,
                      self.slots, self.device)
            job._done.set()
            if nxt is not None:
                _log.info("job started: %s %s; slots free %d of %d", nxt.kind, nxt.name, self.free, self.slots)
                nxt.thread.start()

    def _watch(self) -> None:
        """Stop the jobs whose owner has been gone for `grace` seconds; ends when none is left to watch."""
        gone: dict[int, float] = {}
        while True:
            with self._lock:
                watched = [j for j in self._running + self._waiting if j.alive is not None]
                if not watched:
                    self._watchdog = None
                    return
            now = self._clock()
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
            mine = [j for j in self._running + self._waiting if j.owner == owner]
        for job in mine:
            job.stop("owner closed")

    def running(self, owner: str | None = None) -> list[Job]:
        with self._lock:
            return [j for j in self._running if owner is None or j.owner == owner]

    def waiting(self) -> list[Job]:
        """The queue, first in line first."""
        with self._lock:
            return list(self._waiting)

    @property
    def free(self) -> int:
        """Slots not taken."""
        with self._lock:
            return self.slots - len(self._running)
