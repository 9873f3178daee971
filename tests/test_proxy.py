"""Two replicas behind nginx (deploy/replicas.py): each replica's first visitor, coming by a shared link,
sees that page; an upload, a download and a page change work through the proxy in Chromium, one browser
stays on one replica, and different browsers reach different ones."""
import collections

import pytest

from bench.bench_replicas import nginx_installed, proxied
from explorer.data.dataset import demo_csv
from explorer.text import i18n

from conftest import open_app, open_link, shown, upload, wait_idle

# soak: two replicas behind nginx, a multi-replica set-up (`make soak`)
pytestmark = [pytest.mark.browser, pytest.mark.server, pytest.mark.slow, pytest.mark.soak]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731


@pytest.fixture(scope="module")
def proxy(tmp_path_factory, browser):
    if not nginx_installed():
        pytest.skip("nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)")
    prefix = tmp_path_factory.mktemp("proxy")
    with proxied(2, prefix) as url:
        yield url, prefix / "access.log", _first_visits(browser, url, prefix / "access.log")


def _first_visits(browser, url: str, log) -> dict[str, list[tuple[str, str]]]:
    """upstream -> what /guided-lesson showed (see conftest.shown) to each new browser sent there, from the
    replicas' very first session on, until both replicas have had a first visitor (each new browser is
    hashed to one at random: 20 tries leave a chance of 1 in 500,000 that one replica is never reached;
    about 3 are needed on average, and a replica's later visitors take seconds)."""
    seen = collections.defaultdict(list)
    for k in range(20):
        lang = ("en", "vi")[k % 2]  # a teacher's link may name the class's language (teach.links)
        ctx, pg = open_link(browser, url + "/guided-lesson" + ("?lang=vi" if lang == "vi" else ""))
        try:
            outcome, cookie = (lang, *shown(pg)), _cookie(ctx)
        finally:
            ctx.close()
        (upstream,) = _replicas_by_cookie(log)[cookie]
        seen[upstream].append(outcome)
        if len(seen) == 2:
            break
    return seen


def _replicas_by_cookie(log) -> dict[str, set[str]]:
    """cookie -> the upstream replicas its requests reached (nginx's access log, deploy/nginx.conf)."""
    seen = collections.defaultdict(set)
    for line in log.read_text().splitlines():
        cookie, upstream, *_ = line.split()
        if upstream != "-":
            seen[cookie].add(upstream)
    return seen


def _cookie(ctx) -> str:
    return next(c["value"] for c in ctx.cookies() if c["name"] == "he_replica")


def test_every_replica_opens_a_shared_link_for_its_first_visitor(proxy):
    """Each replica's first session came by /guided-lesson: the lesson, with no "Page not found" over it."""
    first = proxy[2]
    assert len(first) == 2, first
    assert all(outcomes == [(lang, "", i18n.t("lesson.title", lang)) for lang, _, _ in outcomes]
               for outcomes in first.values()), {
        upstream: [f"{lang}: {dialog.splitlines()[0] if dialog else 'no dialog'}: {h1}" for lang, dialog, h1 in outcomes]
        for upstream, outcomes in first.items()}


def test_upload_download_and_page_change_through_two_replicas(browser, proxy, tmp_path):
    url, log, _ = proxy
    ctx, page = open_app(browser, url)
    try:
        page.locator("[data-testid=stSidebarNav] a[href$='/labels']").first.click()  # a page change
        page.wait_for_url("**/labels")
        wait_idle(page)
        page.get_by_role("heading", name=T("data.title")).first.wait_for()
        page.get_by_test_id("stRadioGroup").get_by_text(T("data.source_upload")).click()
        wait_idle(page)
        csv = tmp_path / "permuted.csv"
        csv.write_bytes(demo_csv(20, permuted=True))  # labels renamed in a cycle: the page offers a corrected CSV
        upload(page, str(csv), "permuted.csv")  # POST /_stcore/upload_file
        with page.expect_download(timeout=60_000) as dl:  # GET /media/...
            page.get_by_role("button", name=T("data.download_csv")).click()
        fixed = open(dl.value.path(), encoding="utf-8").read()
        assert fixed.splitlines()[0] == '"text","label"' and fixed != csv.read_text()  # comma-separated, quoted
        assert dl.value.suggested_filename == "permuted-corrected.csv"
        mine = _cookie(ctx)
    finally:
        ctx.close()
    requests = [line for line in log.read_text().splitlines() if line.startswith(mine + " ")]
    assert any("/_stcore/upload_file" in r for r in requests) and any("/media/" in r for r in requests)
    assert all(" 200 " in r or " 101 " in r or " 204 " in r or " 304 " in r for r in requests), requests
    assert len(_replicas_by_cookie(log)[mine]) == 1  # one browser, one replica, websocket included
    # Other browsers (new contexts, no cookie) are spread: one of a few lands on the other replica.
    (home,) = _replicas_by_cookie(log)[mine]
    for _ in range(12):
        other = browser.new_context()
        try:
            assert other.request.get(url + "/").ok
            again = other.request.get(url + "/_stcore/health")  # the cookie set on the first answer is kept
            assert again.ok
            theirs = _replicas_by_cookie(log)[_cookie(other)]
        finally:
            other.close()
        assert len(theirs) == 1
        if theirs != {home}:
            break
    else:
        pytest.fail("12 new browsers all reached the same replica")
