"""User text stays plain text in every view, in a real browser, as a hostile visitor would try it.

One server, one browser context: a tiny GPT-2-style checkpoint whose byte-level vocabulary holds
Markdown and HTML as single tokens and whose label names carry <a href> and <span style> markup; the
text, text B, an uploaded CSV (cells, a column name and the file name) carry the same payloads. Every
page is visited with them. Every URL in a payload points at a "bait" port on the loopback where nothing
listens: the test fails on any request that leaves the app's own origin (an image fetched, a link
prefetched), on any <a>, <img> or inline style in the DOM made from user text, and on a CSV download
that writes a formula cell as it came."""
from __future__ import annotations

import csv
import io
import json

import pytest

from explorer.text import i18n
from explorer.text.plain import WORD_JOINER

from conftest import _free_port, commit, open_app, open_link, upload, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
T = lambda key, **kw: i18n.t(key, "en", **kw)  # noqa: E731
BAIT = _free_port()  # nothing listens here: a request to it is only ever seen by the listener below
URL = f"http://127.0.0.1:{BAIT}"
IMG = f"![md]({URL}/md-img.png)"
WORD = f"![mdw]({URL}/word-md.png)"
LINK = f'<a href="{URL}/label-link" target="_blank">newtab</a>'
STYLE = '<span style="font-size:60px;fill:red">big</span>'
LABEL_IMG = f"![lbl]({URL}/lbl.png)"
FORMULA = f'=HYPERLINK("{URL}/csv","open")'
BARE = f"{URL}/bare www.bait-{BAIT}.example x@bait.example"  # GFM would make each of these a live link
LABELS = (LINK, STYLE, LABEL_IMG, FORMULA)
TEXT = f"hello {WORD} the cat {FORMULA} {IMG}"
TEXT_B = f"{STYLE} good movie {LINK} {BARE}"  # a GPT-2 head reads the last token: BARE
UNEXPECTED = T("errors.unexpected", kind="@").split("@")[0]
PAGES = ("attention", "pooled-vector", "dropout-effect", "probabilities", "compare-heads", "attribution",
         "inside-encoder", "what-if", "guided-lesson", "review-quiz", "labels", "label-audit", "dataset-explanations",
         "fine-tune")

# Per frame: every link off the app, and every image and inline style, that user text could have made.
_DOM = """([bait, origin]) => {
  const bad = [];
  const attr = (e, names) => names.map((n) => e.getAttribute(n) || '').join(' ').trim();
  for (const a of document.querySelectorAll('a')) {  // the app's own links are relative or on its origin
    const h = attr(a, ['href', 'xlink:href']);
    if (h.includes(bait) || (/^([a-z][a-z0-9+.-]*:|\\/\\/)/i.test(h) && !(h + '/').startsWith(origin + '/')))
      bad.push('a ' + h);
  }
  for (const i of document.querySelectorAll('img, image, source, video, audio'))
    if (attr(i, ['src', 'href', 'xlink:href', 'srcset']).includes(bait)) bad.push('img ' + i.outerHTML.slice(0, 120));
  for (const e of document.querySelectorAll('[style]'))
    if (/font-size:\\s*60px|fill:\\s*red/.test(e.getAttribute('style'))) bad.push('style ' + e.outerHTML.slice(0, 120));
  return bad;
}"""


def _hostile_checkpoint(root):
    import tiny_archs
    import tiny_tokenizers
    import torch
    from transformers import AutoModelForSequenceClassification

    tok = tiny_tokenizers.gpt2_style()
    tok.add_tokens([IMG, WORD, LINK, STYLE, FORMULA, BARE])  # whole payloads as single vocabulary entries
    tok.model_max_length = 64  # its position table
    cfg = tiny_archs.config("gpt2")
    cfg.pad_token_id = tok.pad_token_id  # as GPT-2 classifiers set it: batches of texts
    cfg.id2label, cfg.label2id = dict(enumerate(LABELS)), {n: i for i, n in enumerate(LABELS)}
    out = root / "hostile-gpt2"
    torch.manual_seed(0)
    AutoModelForSequenceClassification.from_config(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _csv() -> bytes:
    col = f"![col]({URL}/col.png)"
    cells = [FORMULA, "+1+1", "-2+3", "@SUM(1)", "\tx", IMG, LINK]
    single = [n for n in LABELS if ";" not in n]  # a ; would make the column a multi-label one
    rows = [{"text": f"{cells[i % len(cells)]} row {i}", "label": single[i % len(single)], col: cells[i % len(cells)]}
            for i in range(42)]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["text", "label", col])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode()


@pytest.fixture(scope="module")
def hostile(tiny_root, app_url):
    """The worker's served app (its allowed roots hold tiny_root) and the hostile checkpoint under tiny_root:
    no server of this file's own."""
    (tiny_root / "hostile").mkdir(exist_ok=True)
    return app_url, _hostile_checkpoint(tiny_root / "hostile")


def _fill(pg, where: str, label: str, value: str, enter: str = "Control+Enter") -> None:
    box = pg.locator(f"{where} [data-testid=stTextArea], {where} [data-testid=stTextInput]").filter(has_text=label)
    field = box.first.locator("textarea, input").first
    commit(field, value, enter)


def _goto(pg, slug: str) -> None:
    pg.locator(f"[data-testid=stSidebarNav] a[href$='/{slug}']").first.click()
    pg.wait_for_url(f"**/{slug}")
    wait_idle(pg)


def _check(pg, where: str, origin: str) -> list[str]:
    return [f"{where}: {bad}" for frame in pg.frames for bad in frame.evaluate(_DOM, [str(BAIT), origin])]


def _download(pg, label: str) -> list[list[str]]:
    with pg.expect_download() as dl:
        pg.locator("[data-testid=stDownloadButton] button").filter(has_text=label).first.click()
    return list(csv.reader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))


def test_every_page_keeps_user_text_plain(browser, hostile):
    url, folder = hostile
    origin = url.rstrip("/")
    ctx, pg = open_app(browser, url)
    requests = []
    ctx.on("request", lambda r: requests.append(r.url))
    try:
        pg.reload()  # a session on the st.navigation path (see test_browser_home)
        wait_idle(pg)
        pg.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").filter(has_text=T("app.checkpoint")).first.click()
        pg.get_by_role("option", name=T("app.other"), exact=True).click()
        wait_idle(pg)
        _fill(pg, "[data-testid=stSidebar]", T("app.other_checkpoint"), str(folder), enter="Enter")
        _fill(pg, "[data-testid=stSidebar]", T("app.text"), TEXT)
        _fill(pg, "[data-testid=stSidebar]", T("arch.text_b"), TEXT_B)
        # the Pipeline page: the payloads are there, as typed
        main = pg.locator("[data-testid=stMain]").inner_text().replace("\u2060", "")  # the joiners that stop autolinks
        assert IMG in main and f"(“{BARE}”)" in main, main[:2000]  # the "head reads token N (…)" caption
        svg = " ".join(pg.locator(".js-plotly-plot .xtick text").all_text_contents())
        assert "<a href=" in svg and "<span style=" in svg, svg  # label names drawn as text on the axis
        bar = pg.locator("[data-testid=stMain] .js-plotly-plot .bars path").first
        bar.scroll_into_view_if_needed()
        box = bar.bounding_box()
        pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # its hover label
        hover = pg.locator(".hoverlayer .hovertext").first.text_content()
        assert any(label in hover for label in LABELS), hover  # drawn as typed
        bad = _check(pg, "pipeline", origin)
        for slug in PAGES:
            _goto(pg, slug)
            if slug == "what-if":  # drop the Markdown word: its section heading is built from it
                pg.locator("[data-testid=stMain] [data-testid=stSelectbox]").filter(
                    has_text=T("whatif.drop_word")).first.click()
                pg.keyboard.type("mdw")  # the selectbox filters its options
                pg.keyboard.press("Enter")
                wait_idle(pg)
                assert WORD in pg.locator("[data-testid=stMain]").inner_text().replace("\u2060", "")
            if slug == "attribution":
                rows = _download(pg, T("attributions.csv"))
                cells = [c for row in rows for c in row]
                assert f"'{FORMULA}" in cells and not any(c.startswith(("=", "@")) for c in cells), cells
            if slug == "labels":
                pg.get_by_text(T("data.source_upload"), exact=True).click()
                wait_idle(pg)
                name = f"![f](bait-file.png) www.bait-{BAIT}.example.csv"  # shown in captions on later pages
                # waited for by its tail: how the whole name reads on the pages is what this test checks
                upload(pg, [{"name": name, "mimeType": "text/csv", "buffer": _csv()}], ".example.csv")
            if slug == "label-audit":
                pg.get_by_role("button", name=T("audit.run")).click()
                wait_idle(pg)
                rows = _download(pg, T("audit.download_csv", n=0).split(" (")[0])
                assert rows[0][2] == f"![col]({URL}/col.png)" and len(rows) == 43
                starts = {row[0][:1] for row in rows[1:]} | {row[2][:1] for row in rows[1:]}
                assert not starts & {"=", "+", "-", "@", "\t"}, starts
                assert f"'{FORMULA}" in [row[2] for row in rows]
            bad += _check(pg, slug, origin)
            assert UNEXPECTED not in pg.locator("[data-testid=stMain]").inner_text(), slug  # the page really ran
    finally:
        ctx.close()
    assert bad == [], "\n".join(bad)
    outside = [u for u in requests if not u.startswith((origin + "/", "data:", "blob:", "about:"))]
    assert outside == [], outside


HOSTILE_LINKS = {  # each value fits the 40 characters a note quotes
    "lang": [f"![x]({URL}/lang.png)", f"<img src={URL}/i.png>"],
    "checkpoint": [f"[Sign in]({URL}/phish)", f"<a href={URL}/p>Go</a>"],
    "lock": [f"![l]({URL}/lock.png)", f"[Sign in]({URL}/lock)"],
}


# Ids by position: the values name BAIT's port, drawn per process, and xdist's workers must collect the same ids.
@pytest.mark.parametrize("param, value", [(p, v) for p, values in HOSTILE_LINKS.items() for v in values],
                         ids=[f"{p}-{i}" for p, values in HOSTILE_LINKS.items() for i in range(len(values))])
def test_a_shared_links_notes_are_plain_text(browser, app_url, param, value):
    """A link's bad value is quoted in its note: shown as typed, never a live link, an image or HTML, and
    nothing is fetched from outside the app."""
    from urllib.parse import urlencode

    assert len(value) <= 40  # quoted whole: the live link or image would be whole too
    origin = app_url.rstrip("/")
    requests = []
    ctx, pg = open_link(browser, f"{origin}/?{urlencode({param: value})}", requests=requests)
    try:
        note = pg.locator("[data-testid=stAlert]").filter(has_text="link")
        assert value in note.first.inner_text().replace(WORD_JOINER, "")  # quoted as typed
        assert note.locator("a, img").count() == 0
        bad = _check(pg, f"?{param}={value}", origin)
    finally:
        ctx.close()
    assert bad == [], "\n".join(bad)
    outside = [u for u in requests if not u.startswith((origin + "/", "data:", "blob:", "about:"))]
    assert outside == [], outside
