"""deploy/nginx.conf, rendered as deploy/replicas.py renders it, in front of a stand-in upstream that records
what reaches it: `nginx -t` accepts it; no version, no metrics, a CSP whose connect-src is this origin only,
the replica cookie taken only in nginx's own form, X-Forwarded-For said to the app, and the per-address
connection and request limits answering 429. (tests/test_proxy.py runs the real app behind it in Chromium.)"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from bench.bench_replicas import nginx_installed
from conftest import ROOT, _free_port, wait_until

sys.path.insert(0, str(ROOT / "deploy"))
import replicas  # noqa: E402

pytestmark = pytest.mark.server
HELD_S = 3.0  # how long the stand-in holds a /slow request: connections then overlap


class _Upstream(BaseHTTPRequestHandler):
    seen: list[dict] = []
    inflight = 0
    most = 0
    lock = threading.Lock()

    def do_GET(self):  # noqa: N802 - http.server's name
        cls = type(self)
        with cls.lock:
            cls.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            cls.inflight += 1
            cls.most = max(cls.most, cls.inflight)
        try:
            if self.path == "/slow":
                time.sleep(HELD_S)  # the stand-in's slow answer itself (held open), not a wait for something
            body = b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            with cls.lock:
                cls.inflight -= 1

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    if not nginx_installed():
        pytest.skip("nginx is not installed (Debian: apt-get install nginx)")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    prefix = tmp_path_factory.mktemp("nginx")
    port = _free_port()
    conf = replicas.write_config(prefix, f"127.0.0.1:{port}", [upstream.server_address[1]])
    check = subprocess.run([nginx, "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "test is successful" in check.stderr, check.stderr
    proc = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")])
    url = f"http://127.0.0.1:{port}"
    try:
        def answers() -> bool:
            try:
                requests.get(url + "/", timeout=2)
                return True
            except requests.ConnectionError:
                assert proc.poll() is None, (prefix / "error.log").read_text()
                return False

        wait_until(answers, 30, "nginx's first answer", every=0.1)
        yield url, conf.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        upstream.shutdown()


def _replica_cookie(response) -> str:
    found = re.findall(r"he_replica=([^;]*);", response.headers.get("Set-Cookie", ""))
    assert len(found) == 1, response.headers
    return found[0]


def test_headers_cookie_metrics_and_forwarding(proxy):
    url, _ = proxy
    first = requests.get(url + "/", timeout=10)
    assert first.status_code == 200 and first.headers["Server"] == "nginx"  # server_tokens off: no version
    csp = first.headers["Content-Security-Policy"]
    assert "connect-src 'self';" in csp and "ws:" not in csp and "wss:" not in csp, csp
    mine = _replica_cookie(first)
    assert re.fullmatch(r"[0-9a-f]{32}", mine), mine
    again = requests.get(url + "/", cookies={"he_replica": mine}, timeout=10)
    assert _replica_cookie(again) == mine  # nginx's own form: kept, so the browser stays on its replica
    for evil in ("abc, Domain=evil.example", "abc", "A" * 32, mine + "0", "x" * 5000):
        got = requests.get(url + "/", headers={"Cookie": f"he_replica={evil}"}, timeout=10)
        fresh = _replica_cookie(got)
        assert fresh != evil and re.fullmatch(r"[0-9a-f]{32}", fresh), (evil, got.headers)
    assert "evil.example" not in json.dumps([dict(r.headers) for r in (first, again)])
    _Upstream.seen.clear()
    assert requests.get(url + "/_stcore/metrics", timeout=10).status_code == 404
    assert requests.get(url + "/healthz", timeout=10).status_code == 200
    assert [s["path"] for s in _Upstream.seen] == ["/healthz"]  # metrics never reached the app
    assert _Upstream.seen[0]["x-forwarded-for"] == "127.0.0.1"  # so the app answers it as a stranger's


def test_connections_per_address_are_limited(proxy):
    url, conf = proxy
    limit = int(re.search(r"limit_conn he_conn (\d+);", conf).group(1))
    _Upstream.most = 0
    with ThreadPoolExecutor(limit + 24) as pool:
        codes = list(pool.map(lambda _: requests.get(url + "/slow", timeout=60).status_code, range(limit + 24)))
    assert codes.count(429) >= 1 and set(codes) <= {200, 429}, codes
    assert _Upstream.most <= limit and codes.count(200) >= limit // 2, (_Upstream.most, codes.count(200))


@pytest.mark.slow  # ~20 s: the bucket drains first, then twice its burst is sent
def test_requests_per_address_are_limited(proxy):
    url, conf = proxy
    burst = int(re.search(r"limit_req zone=he_req burst=(\d+)", conf).group(1))
    rate = int(re.search(r"rate=(\d+)r/s", conf).group(1))
    # The earlier tests' requests drain from the bucket: it drains with time alone, and a request to see whether
    # it has would go into it, so there is no condition to wait on.
    time.sleep(burst / rate + 1)  # the bucket drains with time alone: no condition to ask (above)
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: requests.get(url + "/", timeout=30).status_code, range(burst * 2)))
    assert codes.count(429) >= 1 and codes.count(200) >= burst, (codes.count(200), codes.count(429))
    # a moment later (within 10 s), served again
    wait_until(lambda: requests.get(url + "/", timeout=10).status_code == 200, 10, "an answer after the burst",
               every=0.5)
