"""Heavy work is queued, not stacked: a label audit and a long attribution wait for a job slot in the one queue
fine-tunes use (explorer/runtime/jobs.py), shown their place and wait, and Stop takes them out of the line;
an interactive page of another session runs meanwhile. What counts as heavy comes from the batch budget."""
import os
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest
from transformers import AutoConfig

from conftest import ROOT, wait_until
from explore_helpers import give_csv
from explorer.explain import cost
from explorer.model import checkpoints
from explorer.runtime import jobs as jobs_mod
from test_audit import planted


@pytest.fixture
def full_slots():
    """Every job slot taken by another session's work, released at the end."""
    from explorer.ui import JOBS

    release = threading.Event()
    blockers = [JOBS.start(f"other-student-{i}", "fine-tune", f"busy-{i}", lambda progress, stop: release.wait(60))
                for i in range(JOBS.free)]
    yield JOBS
    release.set()
    for b in blockers:
        b.wait(10)


@pytest.fixture
def drawn(monkeypatch):
    """(kind, place, estimate) each time a page drew a waiting job's line."""
    from explorer.ui import running

    seen, original = [], running.show_queue_place

    def record(job):
        shown = original(job)
        if shown:
            seen.append((job.kind, job.place(), job.estimate()))
        return shown

    monkeypatch.setattr(running, "show_queue_place", record)
    return seen


def _wait_in_line(JOBS, kind: str, run: threading.Thread, drawn: list):
    """The session's `kind` job, once it waits in line and its page has drawn its place."""
    def in_line():
        job = next((j for j in JOBS.waiting() if j.kind == kind), None)
        if job is not None and any(d[0] == kind for d in drawn):
            return job
        assert run.is_alive(), f"the page's run ended and no {kind} job waited in line; drawn {drawn}"
        return None

    return wait_until(in_line, 90, f"a {kind} job waiting in line", every=0.1)


def test_a_long_attribution_waits_in_line_with_its_place_and_stop_leaves_it_while_another_page_runs(
        full_slots, drawn):
    JOBS = full_slots
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    # lig's automatic path on MiniLM is past one 256 MB batch: heavy, so it waits for a slot
    run = threading.Thread(target=lambda: at.switch_page("pages/attributions.py").run())
    run.start()
    try:
        job = _wait_in_line(JOBS, "attr", run, drawn)
        assert job.place() == 1 and job.estimate() > 0
        assert ("attr", 1) == drawn[-1][:2]
        # meanwhile another student's interactive page is not held up by the queue
        other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        other.run()
        other.switch_page("pages/tokens.py").run()
        assert not other.exception and other.get("plotly_chart")
        assert job.waiting and run.is_alive()  # the attribution still waits: the other page did not wait for it
    finally:
        job.stop()  # what its Stop button does (running._stop)
        run.join(60)
    assert not run.is_alive() and not at.exception, at.exception
    assert job.done and job.why == "user" and job.progress == [] and job not in JOBS.waiting()  # never ran


def test_a_queued_label_audit_shows_its_place_and_can_be_cancelled(full_slots, drawn):
    JOBS = full_slots
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["checkpoint"] = "minilm"
    give_csv(at, planted().to_csv(index=False).encode(), "planted.csv")
    at.run()
    at.switch_page("pages/audit.py").run()
    run = threading.Thread(target=lambda: at.button(key="audit_run").click().run())
    run.start()
    try:
        job = _wait_in_line(JOBS, "audit", run, drawn)
        assert job.place() == 1 and job.estimate() > 0
    finally:
        job.stop()
        run.join(60)
    assert not run.is_alive() and not at.exception, at.exception
    assert job.done and job.progress == [] and "audit_result" not in at.session_state


def test_heavy_is_past_one_batch_of_the_budget(monkeypatch):
    config = AutoConfig.from_pretrained(checkpoints.embedded_encoder_dir())
    assert cost.attribution_is_heavy(config, "lig", n_tokens=12)  # up to 257 gradients
    assert not cost.attribution_is_heavy(config, "lig", n_tokens=12, n_steps=16)
    assert not cost.attribution_is_heavy(config, "saliency", n_tokens=500)
    assert not cost.attribution_is_heavy(config, "ixg?", n_tokens=500)
    assert not cost.attribution_is_heavy(config, "occlusion", n_tokens=20)
    assert cost.attribution_is_heavy(config, "occlusion", n_tokens=300)
    assert cost.comparison_is_heavy(config, 12)
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", "4096")  # a larger budget: the same lig fits one batch
    assert not cost.attribution_is_heavy(config, "lig", n_tokens=12)


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread nice values are a Linux feature")
def test_a_job_thread_lowers_its_own_priority_and_not_the_servers(monkeypatch):
    monkeypatch.setenv(jobs_mod.NICE_ENV, "5")
    here = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    job = jobs_mod.Jobs(slots=1).start(
        "a", "test", "nice", lambda progress, stop: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert job.wait(5) and job.result == min(19, here + 5)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == here
    monkeypatch.setenv(jobs_mod.NICE_ENV, "0")
    job = jobs_mod.Jobs(slots=1).start(
        "a", "test", "plain", lambda progress, stop: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert job.wait(5) and job.result == here


def test_a_second_start_of_a_kind_the_session_already_runs_says_so_and_follows_the_first(monkeypatch):
    """One job per session and kind: a start refused because this session already has one (here started
    behind the page's back, as by a run cut short) shows one line and that job's progress, and takes no place."""
    from explore_helpers import open_page
    from explorer.explain import whatif
    from explorer.ui import JOBS
    from test_memory_budget import LONG

    at = open_page("lesson", text=LONG)
    me = at.session_state["_model_owner"].id

    def first_work(progress, stop):
        for k in range(20):
            progress({"frac": k / 20, "msg": "first"})
            time.sleep(0.1)  # pretend work, 2 s in all: the page must follow it to its end, whatever its length

    first = JOBS.start(me, "lesson_loo", "lesson_loo", first_work)
    ran = []
    monkeypatch.setattr(whatif, "leave_one_out", lambda *a, **kw: ran.append(1))
    at.button(key="lesson_loo_anyway").click().run()
    assert not at.exception and first.done and not ran  # followed to its end; nothing of its own started
    assert any("You already have this computation running" in i.value for i in at.info)
    assert not [j for j in JOBS.running() + JOBS.waiting() if j.owner == me]
