"""The server run the way the container runs it: the Dockerfile's own CMD (parsed from it, so the two
cannot drift), as an unprivileged user, over a read-only copy of the checkout, bound to 0.0.0.0 and
reached on loopback. Its first visitor comes by a shared link (/guided-lesson) and sees that page; every
page, the head view's iframe with plotly.js loaded from app/static/, an upload, a download, /healthz and
the server's report lines; afterwards the code tree is unchanged and whatever was written lies under
HEAD_EXPLORER_CACHE."""
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from explorer import resources
from explorer.text import i18n

from conftest import ROOT, _free_port, first_visit, open_app, upload, wait_idle, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
USER = "nobody"
HEALTH_TOKEN = "a-health-token-for-this-test"


def dockerfile_cmd() -> list[str]:
    """The container's entry command, from the Dockerfile's exec-form CMD."""
    found = re.findall(r"^CMD\s+(\[.*\])\s*$", (ROOT / "Dockerfile").read_text(), flags=re.M)
    assert len(found) == 1, "the Dockerfile has one exec-form CMD"
    return json.loads(found[0])


def _grant_traverse(paths) -> list[tuple[Path, int]]:
    """o+x on the folders above the interpreter that others cannot pass (here /root, where pyenv
    lives); returns what to restore. Only as root: the test's own change, undone after it."""
    changed = []
    for path in paths:
        for folder in [*reversed(Path(path).parents)]:
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                os.chmod(folder, mode | stat.S_IXOTH)
                changed.append((folder, mode))
    return changed


def _get(url: str, headers: dict | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture(scope="module")
def server(browser):
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed: cannot drop to an unprivileged user")
    work = Path(tempfile.mkdtemp(prefix="head-explorer-ro-"))  # in /tmp: pytest's own tmp is root-only
    code, home = work / "app", work / "home"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (code / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, code / name)
    # The image's build step, with write access: the static copy of plotly.js.
    subprocess.run([sys.executable, "-m", "explorer.resources"], cwd=code, check=True, capture_output=True)
    before = sorted(str(p.relative_to(code)) for p in code.rglob("*"))
    home.mkdir()
    work.chmod(0o755)
    subprocess.run(["chmod", "-R", "a-w", str(code)], check=True)
    changed = []
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "HF_HUB_OFFLINE": "1",
           "HEAD_EXPLORER_CACHE": str(home / ".cache" / "head-explorer"), "HEAD_EXPLORER_REPORT_S": "1",
           "LANG": "C.UTF-8", "HEAD_EXPLORER_HEALTH_TOKEN": HEALTH_TOKEN}
    port = _free_port()
    cmd = dockerfile_cmd()
    assert cmd[:4] == ["python", "-m", "streamlit", "run"] and "0.0.0.0" in cmd
    cmd = [sys.executable, *cmd[1:]]  # the venv's python, as /opt/venv/bin/python in the image
    cmd[cmd.index("--server.port") + 1] = str(port)
    if as_root:
        import pwd

        pw = pwd.getpwnam(USER)
        os.chown(home, pw.pw_uid, pw.pw_gid)
        changed = _grant_traverse([os.path.realpath(sys.executable), sys.prefix, sys.base_prefix])
        cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--", *cmd]
    log = work / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=code, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")
            return _get_or_none(url + "/healthz") == 200

        wait_until(healthy, 60, "the server's /healthz", every=0.3)
        # The server's first session, before any test's: a new browser opening a shared link.
        first = first_visit(browser, url + "/guided-lesson?lang=vi")  # a Vietnamese class's link (teach.links)
        yield url, code, home, log, before, proc, first
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=20)
        for folder, mode in reversed(changed):
            os.chmod(folder, mode)
        subprocess.run(["chmod", "-R", "u+w", str(work)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _get_or_none(url: str) -> int | None:
    try:
        return _get(url)[0]
    except OSError:
        return None


def test_first_visitor_opens_a_shared_link(server):
    """The first session of the container's server came by /guided-lesson?lang=vi: the lesson in Vietnamese, no
    "Page not found" over it."""
    assert server[-1] == ("", i18n.t("lesson.title", "vi"))


def test_runs_unprivileged_ready_and_reports(server):
    url, code, home, log, before, proc, _ = server
    import psutil

    if os.geteuid() == 0:  # setpriv execs the server in its own process: same pid
        assert psutil.Process(proc.pid).username() == USER
    status, body = _get(url + "/healthz")
    assert status == 200, body
    health = json.loads(body)
    assert health["ready"] is True and health["memory_mb"] > 100
    assert _get(url + "/_stcore/health")[0] == 200
    report = r"sessions: \d+ connected, \d+ kept; memory: \d+ MB resident"  # every HEAD_EXPLORER_REPORT_S (1 s)
    wait_until(lambda: re.search(report, log.read_text(errors="replace")), 30, "the server's report line",
               every=0.2)
    text = log.read_text(errors="replace")
    assert "ready: model loaded (minilm-sentiment)" in text
    assert re.search(report, text)
    assert os.access(code / "app.py", os.W_OK) is (os.geteuid() == 0)  # read-only to everyone but root


def _other_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (the server listens on 0.0.0.0), or None."""
    import psutil

    return next((a.address for addrs in psutil.net_if_addrs().values() for a in addrs
                 if a.family == socket.AF_INET and not a.address.startswith("127.")), None)


def test_healthz_says_ready_to_anyone_and_the_numbers_only_locally_or_with_the_token(server):
    url = server[0]
    numbers = {"ready", "sessions", "sessions_kept", "memory_mb"}
    assert set(json.loads(_get(url + "/healthz")[1])) == numbers  # loopback, not forwarded
    forwarded = {"X-Forwarded-For": "203.0.113.5"}  # as nginx on this machine says for a stranger
    assert json.loads(_get(url + "/healthz", forwarded)[1]) == {"ready": True}
    bearer = {"Authorization": f"Bearer {HEALTH_TOKEN}"}
    assert set(json.loads(_get(url + "/healthz", {**forwarded, **bearer})[1])) == numbers
    other = _other_address()
    if other is None:
        pytest.skip("this machine has no address but loopback")
    there = url.replace("127.0.0.1", other)
    assert _get(there + "/healthz") == (200, b'{"ready":true}')
    assert json.loads(_get(there + "/healthz", {"Authorization": "Bearer wrong"})[1]) == {"ready": True}
    assert set(json.loads(_get(there + "/healthz", bearer)[1])) == numbers


def test_every_page_head_view_upload_and_download(server, browser):
    url, code, home, log, before, proc, _ = server
    ctx, pg = open_app(browser, url)
    try:
        links = pg.locator("[data-testid=stSidebarNav] a")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(hrefs) == (ROOT / "app.py").read_text().count('("pages/')  # every page of app.py's PAGES
        for i in range(len(hrefs)):
            links.nth(i).click()
            wait_idle(pg)
            pg.locator("[data-testid=stMain] h1").first.wait_for()
        # The head view: its iframe loads plotly.js from the copy `make setup`/the image build made.
        pg.locator("[data-testid=stSidebarNav] a[href$='/inside-encoder']").first.click()
        wait_idle(pg)
        frame_el = pg.locator("iframe").first
        frame_el.scroll_into_view_if_needed()
        assert f'src="app/static/{resources.plotly_js_name()}"' in frame_el.get_attribute("srcdoc")
        frame = frame_el.element_handle().content_frame()
        frame.wait_for_function("() => (document.getElementById('headview') || {})._fullData !== undefined")
        with pg.expect_download(timeout=60_000) as dl:
            pg.get_by_role("button", name=T("encoder.download")).click()
        assert "plotly-graph-div" in Path(dl.value.path()).read_text(encoding="utf-8")
        # An upload on the Data page.
        csv = home / "upload.csv"
        csv.write_text("text,label\n" + "".join(f"text number {i},{'ab'[i % 2]}\n" for i in range(12)))
        pg.locator("[data-testid=stSidebarNav] a[href$='/labels']").first.click()
        wait_idle(pg)
        pg.get_by_test_id("stRadioGroup").get_by_text(T("data.source_upload")).click()
        wait_idle(pg)
        upload(pg, str(csv), "upload.csv")
        assert json.loads(_get(url + "/healthz")[1])["sessions"] >= 1  # this tab
    finally:
        ctx.close()
    assert sorted(str(p.relative_to(code)) for p in code.rglob("*")) == before  # nothing written to the code
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "PermissionError" not in text and "Read-only" not in text, text[-3000:]
