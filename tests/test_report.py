"""The reporter starts only inside a running server: AppTest's mock Runtime (and the CLI, with no
runtime at all) never gets a thread that loads a model and logs. The server side is in
tests/test_readonly_server.py (its "ready" and "sessions" lines, and /healthz)."""
import threading
from unittest.mock import MagicMock

from streamlit.runtime import Runtime

from explorer.ui import report


def _started() -> bool:
    return any(t.name == "head-explorer-report" for t in threading.enumerate())


def test_no_reporter_without_a_real_runtime(monkeypatch):
    loads = []
    monkeypatch.setattr(Runtime, "_instance", None)
    report.start(loads.append)
    monkeypatch.setattr(Runtime, "_instance", MagicMock(spec=Runtime))  # as AppTest sets it
    report.start(loads.append)
    assert loads == [] and not _started() and not report.READY.is_set()
