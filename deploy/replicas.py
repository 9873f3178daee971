"""Serve Head Explorer from N replicas behind nginx, unprivileged: one command, stopped with Ctrl+C.

    python deploy/replicas.py --replicas 2 --port 8080 [--dir /tmp/head-explorer-proxy]

Starts N `streamlit run serve.py` (the container's entry: app.py, its shared links opening their page
even for a replica's first visitor, and /healthz) on free loopback ports, writes deploy/nginx.conf's
template with those upstreams into --dir (config, pid, temp paths, logs: nothing under /etc/nginx), runs nginx in the
foreground on --port (loopback unless --listen says otherwise), and stops everything when nginx or any
replica exits, or on SIGINT/SIGTERM. Replica k logs to DIR/replica-k.log; nginx's access log
(DIR/access.log) names the replica each request reached.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(prefix: Path, listen: str, ports: list[int]) -> Path:
    """The template filled in for these upstreams; returns the config's path."""
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    upstreams = "\n        ".join(f"server 127.0.0.1:{p};" for p in ports)
    conf = prefix / "nginx.conf"
    text = TEMPLATE.read_text()
    for key, value in (("@PREFIX@", str(prefix)), ("@LISTEN@", listen), ("@UPSTREAMS@", upstreams)):
        text = text.replace(key, value)
    conf.write_text(text)
    return conf


def _healthy(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
        return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=max(1, os.cpu_count() or 1))
    ap.add_argument("--port", type=int, default=8080, help="the port nginx listens on")
    ap.add_argument("--listen", default="127.0.0.1", help="the address nginx listens on")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/head-explorer-proxy"),
                    help="nginx's prefix: config, pid, temp files and logs")
    ap.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args, extra = ap.parse_known_args(argv)  # the rest goes to every `streamlit run`
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    if not Path(args.nginx).exists():
        print("replicas: nginx is not installed (Debian: apt-get install nginx)", file=sys.stderr)
        return 2
    prefix = args.dir.resolve()
    prefix.mkdir(parents=True, exist_ok=True)
    ports = [free_port() for _ in range(args.replicas)]
    # One cookie secret for all replicas, through the environment (not argv, which `ps` shows), so an
    # XSRF token stays valid if a browser is ever moved to another replica.
    env = dict(os.environ, HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "1"),
               STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_hex(32))
    procs: list[subprocess.Popen] = []

    def stop(*_) -> None:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        for k, port in enumerate(ports):
            log = open(prefix / f"replica-{k}.log", "wb")
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(port),
                 "--server.address", "127.0.0.1", "--server.headless", "true",
                 "--browser.gatherUsageStats", "false", *extra],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 180
        while not all(_healthy(p) for p in ports):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                print(f"replicas: a replica did not start; see {prefix}/replica-*.log", file=sys.stderr)
                return 1
            time.sleep(0.2)
        listen = f"{args.listen}:{args.port}"
        conf = write_config(prefix, listen, ports)
        procs.append(subprocess.Popen([args.nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]))
        print(f"replicas: {args.replicas} replicas on {', '.join(map(str, ports))} behind http://{listen}", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        print(f"replicas: {'nginx' if procs[-1].poll() is not None else 'a replica'} exited; "
              f"see {prefix}/error.log and {prefix}/replica-*.log", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(main())
