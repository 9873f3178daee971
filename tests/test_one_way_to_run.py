"""One way to run work: explorer/ui/running.py (ui.run) is the only module that starts a job and draws a
run's progress bar; explorer/runtime/jobs.py is the queue itself. A page or view that started its own job
would skip what ui.run holds for every job: its place in line, Stop, the closed tab's end, the kept result."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {"explorer/ui/running.py", "explorer/runtime/jobs.py"}


def _sources() -> dict[str, str]:
    files = [*(ROOT / "explorer").rglob("*.py"), *(ROOT / "pages").glob("*.py"), *ROOT.glob("*.py")]
    return {p.relative_to(ROOT).as_posix(): p.read_text() for p in files}


def job_starts(source: str) -> list[str]:
    """The calls in `source` that start a job or draw a run's progress bar: start_job(...), the queue's
    start (JOBS.start, Jobs(...).start) and progress_to(...), each as its source text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        on_queue = (isinstance(func, ast.Attribute) and called == "start"
                    and any(word in ast.unparse(func.value) for word in ("JOBS", "Jobs")))
        if called in ("start_job", "progress_to") or on_queue:
            found.append(ast.unparse(node))
    return found


def test_the_check_sees_every_way_to_start_a_job():
    source = """
from explorer.ui import session
from explorer.runtime import jobs
session.start_job("fine-tune", "m", work)
start_job("x", "x", work)
session.JOBS.start(owner, "audit", "a", work)
jobs.Jobs(slots=1).start(owner, "a", "a", work)
report = progress_to(st.progress(0.0))
thread.start()
st.button("Start")
"""
    assert len(job_starts(source)) == 5  # the thread's and a button's are not jobs


def test_only_running_starts_jobs_and_draws_their_progress():
    sources = _sources()
    assert "explorer/ui/running.py" in sources and "pages/finetune.py" in sources
    assert job_starts(sources["explorer/ui/running.py"])  # where they are started: seen by the check
    elsewhere = {path: calls for path, source in sources.items()
                 if path not in ALLOWED and (calls := job_starts(source))}
    assert elsewhere == {}
