"""The server enforces every limit the browser does: a client speaking Streamlit's websocket protocol
(bench/ws_client.py) sends what no browser would (a 12 MB text, a NaN seed, numbers out of range, an odd
query string, an oversized upload); each gets one line, and the session's next run works."""
from __future__ import annotations

import http.client
import math

import pytest
import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.ws_client import Session, run_apart
from conftest import serve_app
from explorer.model.analysis import MAX_TEXT_CHARS
from explorer.teach.lesson import QUIZ
from explorer.text import i18n
from explorer.text.plain import markdown as plain

pytestmark = pytest.mark.server
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
KEPT = "the garden was quiet"  # "garden" is one token: the attention page's chart names it


@pytest.fixture(scope="module")
def url():
    # XSRF off: the upload test speaks to the upload route without a browser's cookie (a separate check).
    with serve_app({"STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}) as (url, _):
        yield url


def _go(url: str, steps) -> None:
    async def main():
        s = Session(url)
        await s.connect()
        try:
            await s.run()
            await s.run()  # the first run goes through the legacy pages/ path; later ones name every widget
            await steps(s)
        finally:
            await s.close()

    run_apart(main)


def _set(s: Session, key: str, **value) -> None:
    wid = s.widgets[key]
    s.values[wid] = WidgetState(id=wid, **value)


def _one_line(run, expected: str) -> None:
    assert run.errors == [expected], run.errors


@pytest.mark.parametrize("key", ["text", "text_pair"])
def test_an_over_long_text_is_one_line_and_the_session_keeps_its_text(url, key):
    async def steps(s):
        s.set_text("text", KEPT)
        assert (await s.run("attention", needle="garden")).found
        for n in (MAX_TEXT_CHARS + 1, 12_000_000):
            s.set_text(key, "zebra " * (n // 6) + "z" * (n % 6))
            run = await s.run(needle="garden")  # refused on arrival: the page still shows the kept text
            _one_line(run, T("errors.input_too_long", widget=key, n=n, limit=MAX_TEXT_CHARS))
            assert run.found
        s.set_text(key, "a short text at the end" if key == "text" else "")
        run = await s.run(needle="short" if key == "text" else "garden")
        assert run.errors == [] and run.found

    _go(url, steps)


@pytest.mark.parametrize("value, expected", [
    (dict(double_value=math.nan), T("errors.input_not_finite", widget="seed", value="nan")),
    (dict(double_value=math.inf), T("errors.input_not_finite", widget="seed", value="inf")),
    (dict(int_value=-7), T("errors.input_out_of_range", widget="seed", value="-7", lo="0", hi="2,147,483,647")),
    (dict(int_value=2**40), T("errors.input_out_of_range", widget="seed", value=f"{2**40:,}", lo="0",
                                hi="2,147,483,647")),
])
def test_a_bad_seed_is_one_line_and_the_next_run_works(url, value, expected):
    """A NaN seed once broke the session: Streamlit's int(nan) raised before the script ran, on every run."""
    async def steps(s):
        _set(s, "seed", **value)
        _one_line(await s.run(), expected)
        _set(s, "seed", int_value=3)
        run = await s.run()
        assert run.errors == []

    _go(url, steps)


def test_a_slider_value_out_of_range_is_one_line(url):
    async def steps(s):
        await s.run("probabilities")
        _set(s, "logits_temperature", double_array_value={"data": [1e9]})
        _one_line(await s.run(), T("errors.input_out_of_range", widget="logits_temperature", value="1,000,000,000",
                                   lo="0.1", hi="5"))
        _set(s, "logits_temperature", double_array_value={"data": [2.0]})
        assert (await s.run()).errors == []

    _go(url, steps)


def test_odd_query_strings_leave_the_session_working(url):
    """The app reads no query parameter; Streamlit's own (embed options) are sanitised."""
    async def steps(s):
        for query in ("seed=nan&text=" + "x" * 100_000, "embed_options=%00%ff&&&==", "a=" + "%" * 5000):
            assert (await s.run(query=query)).errors == []

    _go(url, steps)


def test_an_upload_past_the_limit_is_refused_before_it_is_read(url):
    """server.maxUploadSize (50 MB, the Data page's limit) is Streamlit's own server-side check: a body
    announced too large is refused before any of it is read; the app's byte check is the second line."""
    async def steps(s):
        small = requests.put(f"{url}/_stcore/upload_file/{s.session_id}/f0", files={"file": ("a.csv", b"text,label\n")},
                         timeout=30)
        assert small.status_code == 204, (small.status_code, small.text[:200])  # the route takes a real upload
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)  # requests would fix the length
        conn.putrequest("PUT", f"/_stcore/upload_file/{s.session_id}/f1")
        conn.putheader("Content-Type", "multipart/form-data; boundary=x")
        conn.putheader("Content-Length", str(51 * 2**20))
        conn.endheaders(b"--x\r\n" + b"x" * 1024)
        big = conn.getresponse()
        assert big.status == 413, (big.status, big.read()[:200])
        conn.close()
        assert (await s.run()).errors == []

    _go(url, steps)


@pytest.mark.parametrize("page, key, value, reason", [
    (None, "seed", dict(string_value="abc"), "input_wrong_type"),
    (None, "text", dict(int_value=5), "input_wrong_type"),
    ("fine-tune", "ft_lr_head", dict(double_value=1e-3), "input_wrong_type"),
    ("attention", "tokens_layer", dict(string_value="abc"), "input_not_an_option"),
    ("attention", "tokens_layer", dict(string_value="99"), "input_not_an_option"),
    ("review-quiz", f"quiz_{QUIZ[0].key}", dict(string_value="no such answer"), "input_not_an_option"),
])
def test_a_value_its_widget_does_not_take_is_one_line_and_the_session_goes_on(url, page, key, value, reason):
    """Streamlit stores a value of another type, or an option its widget lacks, as it came; the page's code
    then failed on every later run of that page. The gate refuses it: one line, and the next run works."""
    async def steps(s):
        await s.run(page)
        _set(s, key, **value)
        _one_line(await s.run(), T(f"errors.{reason}", widget=key))
        del s.values[s.widgets[key]]  # as a browser would, which shows the value the session kept
        assert (await s.run()).errors == []

    _go(url, steps)


def _first_run(url: str, query: str, then=None):
    """The infos of a fresh session's first run, whose address has `query`; `then(s)` after it, if given."""
    async def main():
        s = Session(url)
        await s.connect()
        try:
            first = await s.run(query=query)
            return first, (await then(s) if then is not None else None)
        finally:
            await s.close()

    return run_apart(main)


def test_a_link_too_long_for_the_server_is_a_note(url):
    """Streamlit drops a query string past 512 Ki characters whole, without a word; the app says so."""
    query = "lang=vi&text=" + "a" * 600_000
    first, _ = _first_run(url, query)
    assert first.errors == []
    assert plain(T("links.query_dropped", chars=len(query), limit=512 * 1024)) in first.infos, first.infos
    shorter, _ = _first_run(url, "text=" + "a" * 200_000)  # arrives, and is cut at the sidebar's limit
    assert [i for i in shorter.infos if "200,000" in i or "200000" in i], shorter.infos


def test_a_clients_clear_cache_clears_nothing(url):
    """Streamlit answers a client's clear_cache by emptying every session's caches and the sender's state;
    the server ignores it (and logs it): the session keeps its state, so its link's note is not shown again."""
    async def then(s):
        msg = BackMsg()
        msg.clear_cache = True
        await s.ws.send(msg.SerializeToString())
        return await s.run(query="lang=fr")

    first, after = _first_run(url, "lang=fr", then)
    note = plain(T("links.bad_lang", value="fr", choices="en, vi"))
    assert note in first.infos, first.infos
    assert after.errors == [] and note not in after.infos, after.infos
