"""What the server reports: "ready: model loaded" in its log once the default model is in memory
(and READY set, which serve.py's /healthz answers from), and every HEAD_EXPLORER_REPORT_S seconds
(60) the session count and the process's memory, after a full collection that leaves what lives frozen
(session_models.freeze_long_lived). Streamlit's /_stcore/health answers as soon as the
server listens, seconds before torch and the model are loaded."""
from __future__ import annotations

import threading
import time

from streamlit.logger import get_logger
from streamlit.runtime import Runtime

from explorer.runtime.config import env_config, env_name
from explorer.runtime.session_models import freeze_long_lived

_log = get_logger("head_explorer")
_STARTED = threading.Lock()  # held for good by the one thread a process starts
READY = threading.Event()  # the default model is loaded


def _rss_mb() -> float:
    """This process's resident memory in MB (Linux /proc; elsewhere its peak, from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux, bytes on macOS
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def _sessions() -> tuple[int, int]:
    """(sessions with a connected tab, all sessions Streamlit keeps, closed tabs' ones included)."""
    mgr = Runtime.instance()._session_mgr  # no public accessor in 1.67; SessionManager's own API below
    return mgr.num_active_sessions(), mgr.num_sessions()


HEALTH_TOKEN_ENV = env_name("health_token")


def status(full: bool = True) -> dict:
    """What /healthz answers: ready, and with `full` sessions connected and kept and resident MB."""
    if not full:
        return {"ready": READY.is_set()}
    active, kept = _sessions()
    return {"ready": READY.is_set(), "sessions": active, "sessions_kept": kept, "memory_mb": round(_rss_mb())}


def trusted(client_host: str | None, headers) -> bool:
    """Whether a /healthz request may see the numbers (how busy and how large the server is, which helps
    whoever wants to tire it): a request from this machine that no proxy forwarded, or one carrying
    `Authorization: Bearer <HEAD_EXPLORER_HEALTH_TOKEN>`. A proxy on this machine (deploy/nginx.conf)
    connects from loopback but says X-Forwarded-For, so strangers behind it see only ready or not."""
    import hmac
    import ipaddress

    token = env_config().health_token
    sent = headers.get("authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    if headers.get("x-forwarded-for") or headers.get("forwarded") or headers.get("x-real-ip"):
        return False
    try:
        return client_host is not None and ipaddress.ip_address(client_host).is_loopback
    except ValueError:  # a unix socket's peer, a test client's name: not an address we know
        return False


def _run(load, interval: int) -> None:
    from explorer.model import checkpoints

    start = time.monotonic()
    try:
        load(checkpoints.DEFAULT_CHECKPOINT)
        READY.set()
        _log.info("ready: model loaded (%s) in %.1f s", checkpoints.DEFAULT_CHECKPOINT, time.monotonic() - start)
    except Exception as err:  # noqa: BLE001 - the log says why; pages show their own error
        _log.error("not ready: the default model did not load: %s", err)
    while True:
        freeze_long_lived()  # what died since the last pass is freed; what lives stays out of per-run passes
        active, kept = _sessions()
        _log.info("sessions: %d connected, %d kept; memory: %.0f MB resident", active, kept, _rss_mb())
        time.sleep(interval)


def start(load) -> None:
    """Start the reporting thread, once per process and only inside a running server (not in AppTest
    or the CLI). `load(name)` puts a model in the shared cache, so the first visitor finds it there."""
    # AppTest installs a MagicMock(spec=Runtime) as the instance, which isinstance() would accept
    if not Runtime.exists() or type(Runtime.instance()) is not Runtime or not _STARTED.acquire(blocking=False):
        return
    threading.Thread(target=_run, args=(load, env_config().report_s),
                     name="head-explorer-report", daemon=True).start()
