"""The Scan page in Chromium: the Data page's demo with its label names swapped is
scanned as one job (its progress shown, Stop ends it); then a CSV with its labels rotated and two rows copied under
other labels is scanned to the end: the mapping is the first major finding under its human title, the downloaded
HTML report shows the mapping table, the config to paste and the pointed rows' text, and each "open in…" link lands
on a page that shows its finding (Logits' true label is the row's given label, What-if's text B the perturbed text,
a pair as What-if's two texts, the Label audit already run). In English: the same pages' Vietnamese wording (the
findings' titles, the report, the landing notes) is text that AppTest reads (tests/test_scan_page.py)."""
import io
import re

import pandas as pd
import pytest

from conftest import PlaywrightTimeout, click_and_await, commit, upload, wait_idle
from explorer.scan.transforms import TRANSFORMS
from explorer.text.i18n import t
from explorer.text.plain import html as escape_html
from test_scan_page import ROTATION, TITLES, rotated_csv


def _text(page) -> str:
    """Text A in the sidebar, once it shows its value (in either language)."""
    from playwright.sync_api import expect

    box = page.locator("[data-testid=stSidebar] textarea").first
    expect(box).not_to_have_value("", timeout=90_000)
    return box.input_value()


def _go(page, slug: str) -> None:
    """Open a page from the sidebar's navigation, as a click: the link may sit below the sidebar's fold."""
    page.locator(f"[data-testid=stSidebarNav] a[href*='/{slug}']").first.evaluate("a => a.click()")  # ?lang= may follow
    wait_idle(page)


def _to_scan(page) -> None:
    _go(page, "scan-report")


def _demo_swapped(page, per_class: int) -> None:
    _go(page, "labels")
    box = page.locator("[data-testid=stMain] [data-testid=stNumberInput] input").first  # Tweets per label
    commit(box, str(per_class), "Enter")
    swap = page.locator("[data-testid=stMain] [data-testid=stCheckbox] input").first  # Swap the label names
    if not swap.is_checked():
        page.locator("[data-testid=stMain] [data-testid=stCheckbox] label").first.click()
        wait_idle(page)


def _finding(page, check: str):
    """The expander of `check`'s finding (found by the check id in its small print), opened."""
    exp = page.locator("[data-testid=stExpander]").filter(
        has=page.locator("[data-testid=stCaptionContainer]", has_text=re.compile(rf"^{re.escape(check)}$"))).first
    if not exp.locator("details").first.evaluate("d => d.open"):
        exp.locator("summary").first.click()
    return exp


def _land(page, check: str, slug: str, lang: str) -> str:
    """Open `check`'s first row (or pair) on its page; the scan's note there."""
    _to_scan(page)
    exp = _finding(page, check)
    click_and_await(exp.get_by_role("button", name=re.compile(f"^({re.escape(t('scan.open_row', lang, page='@'))}|"
                                                              f"{re.escape(t('scan.open_pair', lang, page='@'))})"
                                                              .replace("@", ".*"))))
    try:
        page.wait_for_url(re.compile(rf"/{slug}(\?|$)"), timeout=60_000)  # a class's ?lang= stays in the address
    except PlaywrightTimeout:
        raise AssertionError(f"still on {page.url} after opening {check}'s row; runs {page.he_runs.events[-8:]}; "
                             f"page: {page.locator('[data-testid=stMain]').inner_text()[-1500:]}") from None
    wait_idle(page)
    note = page.locator("[data-testid=stMain] [data-testid=stAlert]").filter(
        has_text=t("scan.landed_pair", lang, a=0, b=0, given_a="", given_b="").split(":")[0]).first
    note.wait_for(timeout=90_000)
    return note.inner_text()


def _main_texts(page) -> list[str]:
    boxes = page.locator("[data-testid=stMain] textarea")
    return [boxes.nth(i).input_value() for i in range(boxes.count())]


@pytest.mark.parametrize("lang", ["en"])
def test_scan_page_in_chromium(page, app_url, browser, lang, tmp_path):
    if lang == "vi":
        page.goto(f"{app_url}/?lang=vi")
        wait_idle(page)
    _text(page)
    _demo_swapped(page, 60)
    _to_scan(page)
    # a scan of 180 tweets runs long enough to be stopped: its progress shows, Stop ends it, nothing is reported
    page.get_by_role("button", name=t("scan.run", lang), exact=True).click()
    page.get_by_role("button", name=t("scan.stop", lang)).wait_for(timeout=60_000)
    page.locator("[data-testid=stProgress]").first.wait_for(timeout=60_000)
    page.get_by_role("button", name=t("scan.stop", lang)).click()
    page.get_by_role("button", name=t("scan.stop", lang)).wait_for(state="detached", timeout=60_000)
    wait_idle(page)
    assert page.get_by_text("mapping.permutation").count() == 0
    # a CSV that finishes: the rotation is the first major finding, under its human title
    _go(page, "labels")
    page.get_by_text(t("data.source_upload", lang), exact=True).click()
    wait_idle(page)
    upload(page, [{"name": "rotated.csv", "mimeType": "text/csv", "buffer": rotated_csv()}], "rotated.csv")
    _to_scan(page)
    page.get_by_role("button", name=t("scan.run", lang), exact=True).click()
    page.locator("[data-testid=stExpander]", has_text="mapping.permutation").first.wait_for(timeout=180_000)
    wait_idle(page)
    first = page.locator("[data-testid=stExpander] summary").first.inner_text().splitlines()[-1]  # after its icon
    assert first.startswith(TITLES[lang]["mapping.permutation"]) and "mapping.permutation" not in first
    # the HTML report, downloaded and opened on its own: the mapping table, the config, the rows' text; no script
    with page.expect_download() as got:
        page.locator("[data-testid=stDownloadButton] button").first.click()
    path = tmp_path / "report.html"
    got.value.save_as(path)
    html = path.read_text(encoding="utf-8")
    csv = pd.read_csv(io.BytesIO(rotated_csv()))
    assert "<script" not in html.lower() and "<small>mapping.permutation</small>" in html
    assert all(f"<td>{a}</td><td>{b}</td>" in html for a, b in ROTATION.items())  # data label, checkpoint's name
    assert "&quot;id2label&quot;" in html and escape_html(csv["text"][0]) in html
    other = browser.new_page()
    other.goto(path.as_uri())
    assert other.locator("h1").inner_text() == t("scan.report_title", lang)
    assert other.get_by_text(t("scan.data_label", lang), exact=True).count() >= 1
    other.close()
    # miscalibration -> Logits: its most confident wrong row, the given label as the checkpoint names it as true label
    note = _land(page, "calibration.ece", "probabilities", lang)
    row = int(csv.index[csv["text"] == _text(page)][0])
    given = csv["label"][row]
    assert f"'{given}'" in note
    target = page.locator("[data-testid=stMain] [data-testid=stSelectbox]").filter(
        has_text=t("logits.target_label", lang)).first.locator("input").input_value()
    assert target == ROTATION[given], target
    # a typo flip -> What-if: text B is the row after the typos, as the scan made it
    note = _land(page, "robustness.typos", "what-if", lang)
    a, b = _main_texts(page)[:2]
    assert a == _text(page) and b == TRANSFORMS["typos"](a, 0) and b != a and "typos" in note
    # a conflicting pair -> What-if: both rows side by side, both labels in the note
    note = _land(page, "duplicates.conflicting", "what-if", lang)
    assert _main_texts(page)[:2] == [csv["text"][0], csv["text"][30]]
    assert f"'{csv['label'][0]}'" in note and f"'{csv['label'][30]}'" in note
    # suspect rows -> Label audit, already run: its rows table without a click
    _land(page, "labels.suspect_rows", "label-audit", lang)
    flagged = page.locator("[data-testid=stMetric]").filter(has_text=t("audit.flagged", lang)).first
    flagged.wait_for(timeout=90_000)  # the audit's summary: it ran on landing, no click
    assert int(flagged.locator("[data-testid=stMetricValue]").inner_text()) >= 1
    assert page.locator("[data-testid=stMain] [data-testid=stDataFrame]").count() >= 1  # its flagged rows
