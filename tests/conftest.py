"""Shared fixtures: tiny random models built in code (hidden 32, 2 layers) and the real embedded model."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch.set_num_threads(1)  # 2-core machines: avoids contention outliers

from transformers import (  # noqa: E402
    AutoTokenizer, BertConfig, BertForSequenceClassification, DistilBertConfig,
    DistilBertForSequenceClassification, RobertaConfig, RobertaForSequenceClassification,
)
from transformers.utils import logging as hf_logging  # noqa: E402

from explorer.model.checkpoints import embedded_encoder_dir, load_checkpoint  # noqa: E402

hf_logging.set_verbosity_error()
hf_logging.disable_progress_bar()

ROOT = Path(__file__).resolve().parent.parent
TINY_LABELS = ("alpha", "beta", "gamma")

# Fixtures that mean a test drives Chromium against a served app: such a test is `browser` and `server`
# whether or not its file says so, so `make test-fast` (-m "not browser and not server ...") leaves it out.
# Told by the fixture a name resolves to, not by the name: an AppTest test parametrized over an argument it
# calls `page` (a page's path) drives no browser, and `make test-fast` must run it.
_BROWSER_FIXTURES = {"browser", "page", "app_url", "served"}


def uses_browser(item) -> bool:
    """Whether `item` requests one of this file's browser fixtures (directly or through another fixture)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # not a Python test function (a doctest item): no fixtures of ours
        return False
    for name in _BROWSER_FIXTURES & set(info.names_closure):
        defs = info.name2fixturedefs.get(name) or ()
        # the closest definition wins; a parametrized argument's stand-in fixture is pytest's, not this file's
        code = getattr(defs[-1].func, "__code__", None) if defs else None
        if code is not None and Path(code.co_filename) == Path(__file__):
            return True
    return False
# Files are run heaviest first, so that under pytest-xdist (`make test`: whole files per worker, --dist
# loadfile) the long ones start at once and the short ones fill in around them, instead of one long file
# starting last and running alone.
# A file's weight is its last recorded time (tests/durations.json, seconds, written by a run with
# HEAD_EXPLORER_RECORD_DURATIONS=tests/durations.json); a file not recorded yet is weighed by its markers.
_WEIGHT = {"soak": 4, "server": 3, "browser": 2, "slow": 1}
_MARKER_SECONDS = 30  # a marker's weight in seconds, for files without a recorded time
_DURATIONS = Path(__file__).with_name("durations.json")
_RECORDED: dict[str, float] = json.loads(_DURATIONS.read_text()) if _DURATIONS.exists() else {}
_TIMES: dict[str, float] = {}
COLLECTED: dict[str, list[str]] = {}  # test id -> its markers (pytest_collection_modifyitems)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    # `cuda` tests need a CUDA device: skipped without one, unless HEAD_EXPLORER_REQUIRE_CUDA=1 (the GPU machine's
    # run, bench/device_run.sh) makes its absence a failure instead of a quiet skip.
    no_cuda = not torch.cuda.is_available() and os.environ.get("HEAD_EXPLORER_REQUIRE_CUDA") != "1"
    for item in items:
        if uses_browser(item):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.server)
        if no_cuda and item.get_closest_marker("cuda"):
            item.add_marker(pytest.mark.skip(reason="no CUDA device here"))
    # every collected test's markers, before -m deselects: tests/test_suite_split.py reads how `make test` and
    # `make soak` split the suite from a run that collected it whole, without collecting it again
    COLLECTED.update({item.nodeid: sorted({m.name for m in item.iter_markers()}) for item in items})
    weight: dict[str, float] = {}
    for item in items:
        name = Path(item.fspath.strpath).name
        w = _RECORDED.get(name, _MARKER_SECONDS * max((_WEIGHT.get(m.name, 0) for m in item.iter_markers()),
                                                      default=0))
        weight[item.fspath.strpath] = max(weight.get(item.fspath.strpath, 0), w)
    items.sort(key=lambda item: -weight[item.fspath.strpath])  # stable: a file's tests keep their order


def pytest_runtest_logreport(report):
    """Each file's time (setup, call and teardown of its tests), summed where the reports arrive: on the xdist
    controller, every worker's."""
    if os.environ.get("HEAD_EXPLORER_RECORD_DURATIONS"):
        name = Path(report.nodeid.split("::")[0]).name
        _TIMES[name] = _TIMES.get(name, 0.0) + report.duration


def pytest_sessionfinish(session):
    target = os.environ.get("HEAD_EXPLORER_RECORD_DURATIONS")
    if target and _TIMES and not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        Path(target).write_text(json.dumps({k: round(v, 1) for k, v in sorted(_TIMES.items())}, indent=0) + "\n")


@pytest.fixture(scope="session", autouse=True)
def _own_cache_folder(tmp_path_factory):
    """The app's one writable folder (resources.cache_dir) under this run's temporary folder, for the tests
    and every server they start: parallel workers and runs never share scratch space or the user's cache."""
    os.environ["HEAD_EXPLORER_CACHE"] = str(tmp_path_factory.mktemp("cache"))


def _tiny_model(arch: str):
    common = dict(vocab_size=30522, num_labels=3, id2label=dict(enumerate(TINY_LABELS)),
                  label2id={n: i for i, n in enumerate(TINY_LABELS)})
    if arch == "bert":
        cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, **common)
        return BertForSequenceClassification(cfg)
    if arch == "distilbert":
        cfg = DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64, **common)
        return DistilBertForSequenceClassification(cfg)
    cfg = RobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=130, pad_token_id=0, **common)
    return RobertaForSequenceClassification(cfg)


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory) -> Path:
    """A models root holding tiny-bert, tiny-distilbert and tiny-roberta, with trained-looking
    (random but saved) heads, so loading them reports no new weights."""
    root = tmp_path_factory.mktemp("models")
    tok = AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))
    for arch in ("bert", "distilbert", "roberta"):
        torch.manual_seed(1)
        model = _tiny_model(arch)
        model.save_pretrained(root / f"tiny-{arch}")
        tok.save_pretrained(root / f"tiny-{arch}")
    os.environ["HEAD_EXPLORER_ROOTS"] = os.pathsep.join(
        [str(root), str(embedded_encoder_dir()), str(ROOT / "models")])
    return root


@pytest.fixture(scope="session")
def tiny(tiny_root):
    """{arch: Checkpoint} for the tiny models."""
    return {arch: load_checkpoint(str(tiny_root / f"tiny-{arch}")) for arch in ("bert", "distilbert", "roberta")}


def _trained_once(module, name: str, tiny_root: Path, tmp_path_factory, train=None) -> Path:
    """`module.train(folder)`'s checkpoint (or `train(folder)`'s, a function of `module`) under the allowed
    roots, trained once per run, not once per xdist
    worker: into the folder this run's workers share (the parent of each worker's temporary folder), under a
    lock, named by the source that builds it; each worker copies it under its own allowed root."""
    import hashlib

    from filelock import FileLock

    key = hashlib.sha1(Path(module.__file__).read_bytes()).hexdigest()[:12]
    run = tmp_path_factory.getbasetemp()
    shared = (run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run) / f"{name}-{key}"
    with FileLock(str(shared) + ".lock"):
        if not shared.exists():  # renamed in whole once trained: its presence means complete
            (train or module.train)(tmp_path_factory.mktemp("train") / name).rename(shared)
    out = tiny_root / name
    if not out.exists():
        shutil.copytree(shared, out)
    return out


@pytest.fixture(scope="session")
def token_checkpoint(tiny_root, tmp_path_factory) -> Path:
    """The folder (under the allowed roots) of a real NER checkpoint: BertForTokenClassification fine-tuned
    from the embedded MiniLM with Trainer on BIO sentences, id2label tests.token_model.TAGS (about 5 s)."""
    from tests import token_model

    return _trained_once(token_model, "token-ner", tiny_root, tmp_path_factory)


@pytest.fixture(scope="session")
def shortcut_checkpoint(tiny_root, tmp_path_factory) -> Path:
    """The folder (under the allowed roots) of a two-layer MiniLM classifier trained with Trainer on data where
    every positive row holds "zqx" (tests/shortcut_model.py, a few seconds)."""
    from tests import shortcut_model

    return _trained_once(shortcut_model, "shortcut", tiny_root, tmp_path_factory)


def accelerate_two() -> list[str]:
    """`accelerate launch` of two processes. On a machine without GPUs, --multi_gpu is what makes accelerate start
    N processes (torchrun, gloo); with --cpu it would start one (the scale-out tests: test_audit_scale,
    test_explain_data). Each launch gets its own free port, so two launches from two xdist workers at once
    cannot meet on the default 29500."""
    return [str(Path(sys.executable).parent / "accelerate"), "launch", "--multi_gpu", "--num_processes", "2",
            "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
            "--main_process_port", str(_free_port())]


@pytest.fixture(scope="session")
def minilm():
    return load_checkpoint("minilm")


@pytest.fixture(scope="session")
def sentiment():
    return load_checkpoint("minilm-sentiment")


# ---- real-browser fixtures (Debian chromium + Playwright; never `playwright install`) ----

import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

from explorer.cli import streamlit_command  # noqa: E402

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
RUNNING = "[data-testid=stApp]:not([data-test-script-state=notRunning])"
SKELETON = "[data-testid=stSkeleton]"  # the placeholder of an element whose component is still loading


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("HEAD_EXPLORER_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is required (HEAD_EXPLORER_REQUIRE_BROWSER=1) but not installed")
        pytest.skip("Debian chromium is not installed")
    return path


@contextlib.contextmanager
def serve_app(env: dict | None = None, stderr=subprocess.DEVNULL):
    """The app served as `head-explorer app` serves it (the very command it execs) on a free loopback port,
    stopped by its pid afterwards: yields (url, process). `env` adds to the environment; `stderr` is where
    its log goes."""
    port = _free_port()
    proc = subprocess.Popen(
        streamlit_command(["--server.port", str(port)]),
        cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1", **(env or {})), stdout=subprocess.DEVNULL,
        stderr=stderr, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            assert proc.poll() is None, f"streamlit exited with {proc.returncode} before it served"
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                return True
            except OSError:
                return False

        wait_until(healthy, 60, "streamlit's health answer", every=0.2)
        yield url, proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


def wait_until(condition, timeout: float = 30.0, what: str = "the condition", every: float = 0.05, *,
               page=None, required: bool = True):
    """condition()'s first true value, asked every `every` seconds; fails the test after `timeout` seconds (not
    `required`: returns None then). The way a test waits for something another thread or process does, instead
    of sleeping a fixed time. With `page`, the pause between two asks is that page's wait_for_timeout: Playwright's
    sync API delivers a page's events (its websocket's frames, which a RunLog reads) only during one of its
    calls, so a condition on them needs a Playwright call between asks, not time.sleep."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            if not required:
                return None
            pytest.fail(f"{what} did not come within {timeout:g} s")
        if page is None:
            time.sleep(every)  # the polling step between two asks: the condition itself is what is awaited
        else:
            page.wait_for_timeout(every * 1000)  # the same polling step, during which the page's events arrive


# The settings a served app is started with (added to the environment), one server per set and xdist worker.
# DEFAULT_SERVER is the served defaults (.streamlit/config.toml: no source watcher, no rerun on save).
DEFAULT_SERVER: tuple[tuple[str, str], ...] = ()
# One job slot (a second job waits in line) and no training-size cap (a full fine-tune of hundreds of epochs).
TRAINING_SERVER = (("HEAD_EXPLORER_TRAINING", "1"), ("HEAD_EXPLORER_TRAIN_TOKENS", str(10**12)))


_JOB_LINE = re.compile(r"job (started|ended): [^\n]*?slots free (\d+) of (\d+)")  # queued lines name no slots


@dataclasses.dataclass(frozen=True)
class Served:
    url: str
    log: Path  # the server's stderr: its log lines ("job ended ...") are what tests read from outside
    pid: int

    def jobs_idle(self) -> bool:
        """No job running or waiting: the last job line is an end with every slot free (a job waits in line
        only while every slot is taken)."""
        lines = _JOB_LINE.findall(self.log.read_text(errors="replace"))
        return not lines or (lines[-1][0] == "ended" and lines[-1][1] == lines[-1][2])

    def after_jobs(self) -> "Served":
        """This server once an earlier test's jobs (stopped, or their tab closed: ended after the grace) have
        ended, so a test that counts on a free slot gets one."""
        wait_until(self.jobs_idle, 60, "the end of earlier tests' jobs", every=0.2)
        return self


@pytest.fixture(scope="session")
def served(tiny_root, tmp_path_factory):
    """served(settings) -> Served: the app served with `settings` (DEFAULT_SERVER, TRAINING_SERVER), started on
    first use and shared by every later test of this worker (under --dist loadfile whole files share it), all
    stopped at the session's end. A server costs seconds to start and a model load: one a set, not one a file.
    Tests that share one read its log from where they began (len of what was there) and leave no job running."""
    _chromium()
    started: dict[tuple, Served] = {}
    with contextlib.ExitStack() as stack:  # servers stop before their logs close (last in, first out)
        def serve(settings: tuple[tuple[str, str], ...] = DEFAULT_SERVER) -> Served:
            if settings not in started:
                log = tmp_path_factory.mktemp("server") / "stderr.log"
                err = stack.enter_context(open(log, "wb"))
                url, proc = stack.enter_context(serve_app(dict(settings), stderr=err))
                started[settings] = Served(url, log, proc.pid)
            return started[settings]
        yield serve


@pytest.fixture(scope="session")
def app_url(served):
    """The app served for the browser tests with the served defaults (see served)."""
    return served(DEFAULT_SERVER).url


@pytest.fixture(scope="session")
def browser():
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def open_app(browser, url: str):
    """(context, page): a fresh browser context on the app, loaded and idle."""
    return open_link(browser, url)


@pytest.fixture
def page(browser, app_url):
    """A fresh page on the app, loaded and idle, failing the test on any stException."""
    ctx, pg = open_app(browser, app_url)
    yield pg
    ctx.close()


try:  # the GPU machine has no Playwright (/work/shared/device/README.md): its `cuda` tests still load this file
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
except ImportError:  # browser tests fail at their `browser` fixture there, as without Chromium
    PlaywrightTimeout = TimeoutError


def wait_idle(pg) -> None:
    """Wait until the script has finished its run, then fail on any exception box."""
    # A rerun that the last input triggers may not have started yet. A page that track_runs follows waits for the
    # last run it asked for by the protocol; an untracked one waits for the DOM to show a run, up to 300 ms.
    with contextlib.suppress(PlaywrightTimeout):
        pg.wait_for_selector(RUNNING, timeout=300)
    log: RunLog | None = getattr(pg, "he_runs", None)
    if log is not None:  # on a tracked page, the run asked for, however late it starts
        wait_until(lambda: not log.pending(), 90, "the end of the run the page asked for", page=pg)
    pg.wait_for_selector(IDLE, timeout=90_000)
    # The run's end is not the page's: Streamlit's frontend loads element components lazily and shows a
    # Suspense placeholder (stSkeleton) until each has loaded, on a fresh browser context (a first visit) up
    # to seconds after the run ended on a busy machine. A locator used meanwhile finds whatever is mounted:
    # "the sidebar's first text area" was Text B while Text A was still a placeholder.
    pg.wait_for_function(f"!document.querySelector('{SKELETON}')", timeout=90_000)
    assert pg.locator("[data-testid=stException]").count() == 0, pg.locator("[data-testid=stException]").first.inner_text()


class RunLog:
    """A page's script runs, in order, as its websocket carries them: "sent" for each request of a whole-app run
    the page sends (a widget's new value, a page link, a reload), "start" for each new_session of a whole-app run
    and "done" for each run that finished successfully. A fragment's runs name their fragment and are left out.
    Read from the protocol, not the DOM: the DOM's running state can come and go between two polls, or show only
    after a fixed grace period on a busy machine, and a page read before it is the page before the input."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def read(self, payload) -> None:
        """A frame from the server (ForwardMsg)."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = _parse(ForwardMsg, payload)
        kind = msg and msg.WhichOneof("type")
        if kind == "new_session" and not msg.metadata.run.fragment_ids:
            self.events.append("start")
        elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
            self.events.append("done")

    def read_sent(self, payload) -> None:
        """A frame to the server (BackMsg)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = _parse(BackMsg, payload)
        if msg and msg.WhichOneof("type") == "rerun_script" and not msg.rerun_script.fragment_id:
            self.events.append("sent")

    def finished_since(self, mark: int) -> bool:
        """Whether a run that started after event `mark` has finished."""
        later = self.events[mark:]
        return "start" in later and "done" in later[later.index("start"):]

    def pending(self) -> bool:
        """Whether the last run the page asked for has not yet started and finished. Requests sent while a run is
        on are folded into one run by the server, so the last request is the one to wait for."""
        if "sent" not in self.events:
            return False
        return not self.finished_since(len(self.events) - self.events[::-1].index("sent"))


def _parse(kind, payload):
    """The protobuf message `kind` in a binary websocket frame, or None."""
    from google.protobuf.message import DecodeError

    if isinstance(payload, str):
        return None
    try:
        return kind.FromString(payload)
    except DecodeError:
        return None


def track_runs(pg) -> None:
    """Log `pg`'s script runs (RunLog) from its websocket, so that wait_idle and await_rerun wait for the run an
    input asks for; call before the page opens its first URL."""
    log = RunLog()

    def watch(ws) -> None:
        ws.on("framereceived", log.read)
        ws.on("framesent", log.read_sent)

    pg.on("websocket", watch)
    pg.he_runs = log


def await_rerun(pg, act) -> None:
    """Do `act` (an input that reruns the script, such as committing a widget) and wait until the run it starts
    has finished and the page is idle."""
    log: RunLog | None = getattr(pg, "he_runs", None)
    assert log is not None, "open the page with open_link (or call track_runs before its goto) to await a rerun"
    mark = len(log.events)
    act()
    _await_finished(pg, log, mark)


def click_and_await(button) -> None:
    """Click `button` (a widget whose click reruns the script) and wait for the run it starts. A click that the
    page sends no request for within 10 s was lost on its way (a rerun replaced the element under the pointer):
    it is clicked once more, never again; a click that still starts no run fails here, saying so."""
    pg = button.page
    log: RunLog = pg.he_runs
    for _ in range(2):
        mark = len(log.events)
        button.click()
        if wait_until(lambda: "sent" in log.events[mark:], 10, page=pg, required=False):
            break
    _await_finished(pg, log, mark)


def _await_finished(pg, log: RunLog, mark: int) -> None:
    """Wait until a run that started after event `mark` of `log` has finished, then until the page is idle."""
    wait_until(lambda: log.finished_since(mark), 90, "the end of a run started by the input", page=pg)
    wait_idle(pg)


def commit(box, value: str, key: str = "Control+Enter") -> None:
    """Type `value` into the text area or input `box` and commit it with `key` (a text area commits on Ctrl+Enter,
    an input on Enter), then wait for the run that the new value starts. An unchanged value starts no run."""
    if box.input_value() == value:
        return
    box.fill(value)
    await_rerun(box.page, lambda: box.press(key))


def upload(pg, files, name: str) -> None:
    """Give the page's file uploader `files` (a path, or set_input_files' dicts) and wait until the page has read
    them: until `name` (the data's name, which the Data page prints) is shown outside the uploader, whose own list
    names the file before the app has it. On a busy machine the upload and the run it starts come later than
    wait_idle's window for a run to begin, and a page read then is the page before the upload."""
    pg.locator("[data-testid=stFileUploader] input[type=file]").first.set_input_files(files)
    pg.wait_for_function("""name => [...document.querySelectorAll('[data-testid=stMain] *')].some(e =>
        !e.children.length && !e.closest('[data-testid=stFileUploader]') && e.textContent.includes(name))""",
                         arg=name, timeout=90_000)
    wait_idle(pg)


def sidebar_text(pg, label: str = "app.text"):
    """The sidebar's text area labelled by i18n key `label` (Text A by default), once it shows its value: a text
    area is mounted empty and given its value a moment later, and typing in between is overwritten."""
    from playwright.sync_api import expect

    from explorer.text import i18n

    box = pg.locator("[data-testid=stSidebar]").get_by_label(i18n.t(label, "en"), exact=True)
    if label == "app.text":  # Text A always holds a text (Text B may be empty)
        expect(box).not_to_have_value("", timeout=90_000)
    return box


def pick_folder_checkpoint(pg, folder) -> None:
    """In the sidebar, the checkpoint "other…" with `folder` typed as its path (a tiny model under the allowed
    roots), as a user picks a local checkpoint: the served app's registry names only the real models."""
    from explorer.text import i18n
    from explorer.ui.session import OTHER

    side = pg.locator("[data-testid=stSidebar]")
    side.locator("[data-testid=stSelectbox]").filter(has_text=i18n.t("app.checkpoint", "en")).first.click()
    pg.get_by_role("option", name=OTHER, exact=True).click()
    wait_idle(pg)
    path = side.get_by_label(i18n.t("app.other_checkpoint", "en"))
    commit(path, str(folder), "Enter")


def open_link(browser, url: str, idle: bool = True, requests: list | None = None):
    """(context, page): a new context whose first request is `url`. Not `idle`: only until the page's title
    is drawn. A "Page not found" answer is sent before the page runs, so a dialog would be there by then.
    `requests`, if given, collects the URL of every request the context makes, from the first."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    if requests is not None:
        ctx.on("request", lambda r: requests.append(r.url))
    pg = ctx.new_page()
    pg.set_default_timeout(90_000)
    track_runs(pg)
    pg.goto(url)
    if idle:
        wait_idle(pg)
    else:
        pg.locator("[data-testid=stMain] h1").first.wait_for()
    return ctx, pg


def shown(pg) -> tuple[str, str]:
    """(the text of any dialog over the page, the page's title): ("", its own title) when a link opened its page.
    Streamlit's "Page not found" is such a dialog (streamlit#9624)."""
    dialogs = pg.locator("[role=dialog]")
    text = " | ".join(dialogs.nth(i).inner_text() for i in range(dialogs.count()))
    if "Page not found" in pg.locator("body").inner_text() and "Page not found" not in text:
        text += " | Page not found"
    return text, pg.locator("[data-testid=stMain] h1").first.inner_text().strip()


def first_visit(browser, url: str) -> tuple[str, str]:
    """What `url` showed (see shown) when opened as the first request of a new browser context, run finished."""
    ctx, pg = open_link(browser, url)
    try:
        return shown(pg)
    finally:
        ctx.close()
