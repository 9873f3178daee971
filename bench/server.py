"""The app served as `head-explorer app` serves it (the very command it execs) on a free loopback port, for
the benchmarks."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator

from explorer.cli import streamlit_command

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(**env) -> Iterator[str]:
    """Start the app (127.0.0.1 only), wait until it answers, yield its URL; stop it by its process group."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        streamlit_command(["--server.port", str(port)]),
        cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1", **env), stdout=subprocess.DEVNULL,
        stderr=open(log, "ab") if (log := os.environ.get("HEAD_EXPLORER_BENCH_LOG")) else subprocess.DEVNULL,
        start_new_session=True)  # HEAD_EXPLORER_BENCH_LOG: the server's log, to read a bench's errors
    try:
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline:
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
