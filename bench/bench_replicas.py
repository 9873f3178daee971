"""Replicas: N sessions editing the sidebar text through nginx, 2 replicas against 1 (deploy/replicas.py).

No browser (on 2 cores Chromium would measure itself): each session speaks Streamlit's own websocket
protocol with its protobuf messages: connect with its own sticky cookie, run the page, find the text
box's widget id in the page's deltas, then send changed text and wait for the run to finish, EDITS times
back to back (a bounded loop, loopback only). Throughput = edits finished per second over the whole
class. Baseline: the same class through the same nginx to one replica (one app process), same run.
Target: ≥ 1.6× with 2 replicas on 2 cores.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Iterator

from bench.server import ROOT, free_port
from bench.timing import row

SESSIONS = 30
EDITS = 2  # per session, after its first run
WARM = 6  # sessions in the warm-up class: enough that every replica loads its model
TIMEOUT = 120.0


def _run_msg(text_id: str | None = None, text: str = ""):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    if text_id is not None:
        w = msg.rerun_script.widget_states.widgets.add()
        w.id, w.string_value = text_id, text
    return msg.SerializeToString()


async def _until_finished(ws, seen: dict) -> None:
    """Read ForwardMsgs until the script run ends; remember text areas' ids by their label."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    while True:
        raw = await asyncio.wait_for(ws.read_message(), TIMEOUT)
        if raw is None:
            raise ConnectionError("websocket closed")
        fm = ForwardMsg.FromString(raw)
        kind = fm.WhichOneof("type")
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            el = fm.delta.new_element
            if el.WhichOneof("type") == "text_area":
                seen.setdefault("text_area", el.text_area.id)
            if el.WhichOneof("type") == "exception":
                seen["errors"] = seen.get("errors", 0) + 1
        elif kind == "script_finished":
            return


async def _session(url: str, who: int, edits: int, done: list[float]) -> None:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    # Its own he_replica cookie: nginx hashes it to one replica, as it would a browser's.
    req = HTTPRequest(url.replace("http", "ws") + "/_stcore/stream",
                      headers={"Cookie": f"he_replica={uuid.uuid4().hex}"},
                      connect_timeout=TIMEOUT, request_timeout=TIMEOUT)  # 30 connect at once to a busy process
    ws = await websocket_connect(req, max_message_size=1 << 28)
    seen: dict = {}
    ws.write_message(_run_msg(), binary=True)
    await _until_finished(ws, seen)
    for i in range(edits):
        ws.write_message(_run_msg(seen["text_area"], f"student {who} finds edit {i} rather lovely today."), binary=True)
        await _until_finished(ws, seen)
        done.append(time.perf_counter())
    if seen.get("errors"):
        raise RuntimeError(f"session {who}: {seen['errors']} exception boxes")
    ws.close()


async def _class(url: str, sessions: int, edits: int) -> tuple[float, int]:
    """(edits finished per second, failed sessions)."""
    done: list[float] = []
    t0 = time.perf_counter()
    results = await asyncio.gather(*(_session(url, k, edits, done) for k in range(sessions)), return_exceptions=True)
    for err in results:
        if err is not None:
            print("  replicas: a session failed:", type(err).__name__, err)
    return len(done) / (time.perf_counter() - t0), sum(err is not None for err in results)


@contextlib.contextmanager
def proxied(replicas: int, prefix: Path) -> Iterator[str]:
    """deploy/replicas.py with `replicas` app processes behind nginx (files under `prefix`, its access log
    prefix/access.log), until nginx answers; yields the proxy's URL and stops it all afterwards."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "deploy/replicas.py", "--replicas", str(replicas), "--port", str(port),
                             "--dir", str(prefix)], cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"deploy/replicas.py did not start; see {prefix}/replica-*.log")
                time.sleep(0.3)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _through_proxy(replicas: int, prefix: Path) -> tuple[tuple[float, int], list[int]]:
    """((edits per second, failed sessions), sessions per replica) for the measured class."""
    with proxied(replicas, prefix) as url:
        asyncio.run(_class(url, WARM, 1))  # warm-up: every replica loads its model and imports
        warm = len((prefix / "access.log").read_text().splitlines())
        rate = asyncio.run(_class(url, SESSIONS, EDITS))
    streams = [line.split()[1] for line in (prefix / "access.log").read_text().splitlines()[warm:]
               if "/_stcore/stream" in line]  # one line per websocket, written when it closes
    return rate, sorted(collections.Counter(streams).values())


def nginx_installed() -> bool:
    """Debian puts nginx in /usr/sbin, which is not on an unprivileged user's PATH."""
    return shutil.which("nginx") is not None or os.path.exists("/usr/sbin/nginx")


def run() -> list[dict]:
    if not nginx_installed():
        return []
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (one, failed_one), _ = _through_proxy(1, Path(tmp) / "one")
        (two, failed_two), spread = _through_proxy(2, Path(tmp) / "two")
    failed = failed_one + failed_two
    return [row(f"replicas: edits/s, {SESSIONS} sessions through nginx, 2 replicas (sessions {'/'.join(map(str, spread))}) "
                f"/ 1 (on {os.cpu_count()} cores, {failed} failed sessions)",
                two, one, "≥ 1.6×, 0 failed", two >= 1.6 * one and not failed, unit="/s")]


if __name__ == "__main__":
    print(run())
