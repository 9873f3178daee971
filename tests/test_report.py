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


def test_healthz_numbers_only_on_loopback_unforwarded_or_with_the_token(monkeypatch):
    """Anyone learns ready or not; how busy and how large the server is only this machine or the token's holder."""
    monkeypatch.delenv(report.HEALTH_TOKEN_ENV, raising=False)
    assert report.trusted("127.0.0.1", {}) and report.trusted("::1", {})
    for host, headers in [("203.0.113.5", {}), ("192.0.2.2", {}), (None, {}), ("testclient", {}),
                          ("127.0.0.1", {"x-forwarded-for": "203.0.113.5"}),  # nginx on this machine
                          ("127.0.0.1", {"forwarded": "for=203.0.113.5"}),
                          ("203.0.113.5", {"authorization": "Bearer "})]:  # no token set: none matches
        assert not report.trusted(host, headers), (host, headers)
    monkeypatch.setenv(report.HEALTH_TOKEN_ENV, "s3cret")
    assert report.trusted("203.0.113.5", {"authorization": "Bearer s3cret"})
    assert report.trusted("127.0.0.1", {"x-forwarded-for": "203.0.113.5", "authorization": "Bearer s3cret"})
    assert not report.trusted("203.0.113.5", {"authorization": "Bearer s3cre"})
    assert not report.trusted("203.0.113.5", {"authorization": "s3cret"})
    assert report.status(full=False) == {"ready": report.READY.is_set()}
