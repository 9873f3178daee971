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


class Served(str):
    """The served app's URL, with the server's process id (for its CPU time and its core)."""
    pid: int


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far, from /proc (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


@contextlib.contextmanager
def serve(cpus: set[int] | None = None, **env) -> Iterator[Served]:
    """Start the app (127.0.0.1 only), wait until it answers, yield its URL; stop it by its process group.
    `cpus`: the cores the server may run on (its threads inherit them), so a bench's clients can have the others."""
    port = free_port()
    url = Served(f"http://127.0.0.1:{port}")
    proc = subprocess.Popen(
        streamlit_command(["--server.port", str(port)]),
        cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1", **env), stdout=subprocess.DEVNULL,
        stderr=open(log, "ab") if (log := os.environ.get("HEAD_EXPLORER_BENCH_LOG")) else subprocess.DEVNULL,
        start_new_session=True,  # HEAD_EXPLORER_BENCH_LOG: the server's log, to read a bench's errors
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    url.pid = proc.pid
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
