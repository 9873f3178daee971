"""The Scan page against a baseline checkpoint in Chromium, in English and Vietnamese: a tiny model picked as a
folder in the sidebar, a CSV uploaded on the Data page, another tiny model picked as a folder in "compare with";
the McNemar line on screen is the library's (explorer.scan with baseline=) word for word, and the first row of the
disagreement table opens on the Logits page with a note of the baseline's prediction."""
import re

import pytest

import explorer
from conftest import commit, upload, wait_idle
from explorer.model.checkpoints import load_checkpoint
from explorer.text.i18n import t
from tests.baseline_models import frame, side_by_side_of, spread_models

JOINERS = "\u2060"  # plain() puts these between characters a browser would link


def _shown(locator) -> str:
    return locator.inner_text().replace(JOINERS, "")


def _go(page, slug: str) -> None:
    page.locator(f"[data-testid=stSidebarNav] a[href*='/{slug}']").first.evaluate("a => a.click()")
    wait_idle(page)


def _folder(page, where: str, label: str, folder, lang: str) -> None:
    """`folder` typed as the "other…" path of the selectbox labelled `label` in `where` (sidebar or main)."""
    area = page.locator(f"[data-testid={where}]")
    area.locator("[data-testid=stSelectbox]").filter(has_text=label).first.click()
    page.get_by_role("option", name=t("app.other", lang), exact=True).click()
    wait_idle(page)
    box = area.get_by_label(t("app.other_checkpoint", lang))
    commit(box, str(folder), "Enter")


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_scan_against_a_baseline_in_chromium(page, app_url, tiny_root, lang):
    models = spread_models(tiny_root)
    df = frame(60)
    expected = explorer.scan(df, load_checkpoint(str(models["b"])), baseline=load_checkpoint(str(models["a"])))
    if lang == "vi":
        page.goto(f"{app_url}/?lang=vi")
        wait_idle(page)
    _folder(page, "stSidebar", t("app.checkpoint", lang), models["b"], lang)
    _go(page, "labels")
    page.get_by_text(t("data.source_upload", lang), exact=True).click()
    wait_idle(page)
    upload(page, [{"name": "rows.csv", "mimeType": "text/csv", "buffer": df.to_csv(index=False).encode()}],
           "rows.csv")
    _go(page, "scan-report")
    _folder(page, "stMain", t("scan_baseline.compare_with", lang), models["a"], lang)
    page.get_by_role("button", name=t("scan.run", lang), exact=True).click()
    verdict = page.locator("[data-testid=stMain] [data-testid=stAlert]").filter(has_text="McNemar p =").first
    verdict.wait_for(timeout=180_000)
    wait_idle(page)
    c = expected.baseline
    assert _shown(verdict) == c.summary(expected.checkpoint).message(lang)
    heading = t("scan_baseline.title", lang, baseline=str(models["a"]))
    assert any(_shown(h) == heading for h in page.locator("[data-testid=stMain] h3").all())
    agreement = t("scan_baseline.agreement", lang, baseline=c.checkpoint, agreement=f"{c.agreement:.1%}",
                  n=len(c.disagreements))
    assert agreement in _shown(page.locator("[data-testid=stMain]"))
    # the first row of the table (a fix or a regression) opens on Logits with the scanned checkpoint
    page.get_by_role("button", name=t("scan_baseline.open_row", lang)).click()
    page.wait_for_url(re.compile(r"/probabilities(\?|$)"), timeout=60_000)
    wait_idle(page)
    note = page.locator("[data-testid=stMain] [data-testid=stAlert]").filter(has_text=str(models["a"])).first
    note.wait_for(timeout=90_000)
    row = c.ordered_rows()[0]
    assert f"{row}" in _shown(note) and c.predicted_baseline[row] in _shown(note)
    assert page.locator("[data-testid=stSidebar] textarea").first.input_value() == df["text"][row]
    # beside it, the baseline on the same text: the chart of both checkpoints' scores and their top labels in words
    want = side_by_side_of(models, df["text"][row])
    title = t("side_by_side.chart", lang, function=want.functions)
    page.locator("[data-testid=stMain] .gtitle", has_text=title).first.wait_for(timeout=60_000)
    top = t("side_by_side.top", lang, name=want.checkpoint, b=want.labels[want.predicted],
            pb=f"{want.scores[want.predicted]:.4f}", baseline=want.baseline,
            a=want.baseline_labels[want.baseline_predicted],
            pa=f"{want.baseline_scores[want.baseline_predicted]:.4f}")
    assert top in _shown(page.locator("[data-testid=stMain]"))


def test_after_a_fine_tune_compare_with_where_it_started_in_chromium(page, app_url, tiny_root):
    """A head-mode fine-tune of one epoch on the uploaded rows, then its "compare with the checkpoint it started
    from" button: the Scan page opens on the fine-tuned model with the starting folder picked in "compare with",
    and the scan run there reports against it."""
    models = spread_models(tiny_root)
    df = frame(60)
    _folder(page, "stSidebar", t("app.checkpoint", "en"), models["b"], "en")
    _go(page, "labels")
    page.get_by_text(t("data.source_upload", "en"), exact=True).click()
    wait_idle(page)
    upload(page, [{"name": "rows.csv", "mimeType": "text/csv", "buffer": df.to_csv(index=False).encode()}],
           "rows.csv")
    _go(page, "fine-tune")
    epochs = page.locator("[data-testid=stMain] [data-testid=stNumberInput]").filter(
        has_text=t("finetune.epochs", "en")).locator("input")
    commit(epochs, "1", "Enter")
    page.locator(".st-key-ft_start button").click()
    compare = page.locator(".st-key-ft_compare_origin button")
    compare.wait_for(timeout=180_000)  # shown with the fine-tune's result
    assert str(models["b"]) in _shown(compare)
    compare.click()
    page.wait_for_url(re.compile(r"/scan-report(\?|$)"), timeout=60_000)
    wait_idle(page)
    page.get_by_role("button", name=t("scan.run", "en"), exact=True).click()
    heading = t("scan_baseline.title", "en", baseline=str(models["b"]))
    page.locator("[data-testid=stMain] h3").filter(has_text=heading[:20]).first.wait_for(timeout=180_000)
    wait_idle(page)
    assert any(_shown(h) == heading for h in page.locator("[data-testid=stMain] h3").all())
