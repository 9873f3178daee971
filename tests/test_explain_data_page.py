"""The Dataset explanations page: AppTest on the planted-shortcut model where "zqx" also turns negative rows
positive (the job runs, the shortcut is flagged by the scan's rule, the measures are shown; through a rotated
id2label, the mapping is named), and Chromium in English and Vietnamese on the served app's default model where
a cue word turns rows against their labels: the job's progress, the per-label words, a shortcut flagged, a row
clicked into the sidebar."""
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from playwright.sync_api import expect

from conftest import ROOT, open_link, upload, wait_idle
from explorer.text import i18n
from explorer.ui.session import DATA_KEY, DataSource
from test_explain_data import planted
from tests.shortcut_model import SHORTCUT


def test_page_runs_the_job_and_flags_the_shortcut(shortcut_checkpoint):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(shortcut_checkpoint)}.items():
        at.session_state[key] = value
    data = planted(40, seed=3)  # 20 positive rows, and 10 negative ones holding zqx
    at.session_state[DATA_KEY] = DataSource(data.to_csv(index=False).encode(), "planted.csv", "text", "label",
                                            columns=tuple(data.columns))  # as the Data page leaves it
    at.run()
    at.switch_page("pages/explain_data.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.selectbox(key="explain_rationale").set_value("rationale")
    at.multiselect(key="explain_methods").set_value(["lig", "saliency"]).run()
    at.button(key="explain_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = at.session_state["explain_result"].found
    assert found.by_label["positive"]["top_words"][0]["word"] == SHORTCUT
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and f"'{SHORTCUT}'" in warnings[0] and "the labels do not justify it" in warnings[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows"] == "40" and metrics["Possible shortcuts"] == "1"
    positive = found.by_label["positive"]["rows"]
    assert positive >= 26 and any(f"**positive** · {positive} rows · {SHORTCUT}" in m.value for m in at.markdown)
    assert not [i.value for i in at.info if "mapping" in i.value]  # no mapping found: none named
    columns = [list(d.value.columns) for d in at.dataframe]
    assert ["method", "comprehensiveness", "sufficiency", "comprehensiveness, random", "sufficiency, random"] in columns
    assert any("AUPRC" in c for c in columns) and any("lig" in c and "saliency" in c for c in columns)
    rows = at.dataframe[-1].value  # the rows: filter to the wrong ones, then to a word
    assert len(rows) == 40
    at.selectbox(key="explain_filter").set_value("predicted=positive").run()
    assert len(at.dataframe[-1].value) == positive
    at.text_input(key="explain_filter_word").set_value("nothing-like-this").run()
    assert len(at.dataframe[-1].value) == 0
    # A second run with the same inputs reads the kept result: no new job.
    at.run()
    assert at.session_state["explain_result"].found is found


@pytest.fixture(scope="module")
def rotated_checkpoint(shortcut_checkpoint, tiny_root):
    """The planted-shortcut checkpoint with id2label swapped (under the allowed roots): every prediction renamed."""
    from tests.scan_models import rotated

    out = tiny_root / "shortcut-rotated"
    return out if out.exists() else rotated(shortcut_checkpoint, out)


def test_page_results_in_vietnamese_have_no_english_left(rotated_checkpoint):
    from test_vi_pages import english_left, shown

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    data = planted(40, seed=4)  # 10 negative rows holding zqx: enough for the tests after BH
    for key, value in {"lang": "vi", "checkpoint": "other…", "checkpoint_other": str(rotated_checkpoint),
                       DATA_KEY: DataSource(data.to_csv(index=False).encode(), "planted.csv", "text", "label",
                                            columns=tuple(data.columns))}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/explain_data.py").run()
    at.selectbox(key="explain_rationale").set_value("rationale")
    at.multiselect(key="explain_methods").set_value(["lig", "saliency"]).run()
    at.button(key="explain_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = at.session_state["explain_result"].found
    assert found.mapping == {"negative": "positive", "positive": "negative"}  # read through the swap
    assert [s["word"] for s in found.by_label["positive"]["shortcuts"]] == [SHORTCUT]
    assert at.warning and "Lối tắt" in at.warning[0].value and f"'{SHORTCUT}'" in at.warning[0].value
    note = i18n.t("explain.mapping", "vi", pairs="@").split("@")[0]
    assert [i.value for i in at.info if note in i.value and "negative → positive" in i.value]
    user = {"text", "label", "rationale", "lig", "saliency", "negative", "positive", "AUPRC"}
    assert english_left([s for s in shown(at) if s not in user]) == []


def _sentiment_csv(n: int = 32) -> bytes:
    """Rows the served app's default model (minilm-sentiment) reads by a cue per label, where the first quarter of
    the negative rows hold the positive cue against their label (each of their fillers in as many of those as of
    the rest): the cue's rows carry the model's errors, which the labels do not justify."""
    fillers = ["the bus came at noon", "we sat by the window", "a car waited on the street", "the lamp was on"]
    rows = [{"text": f"{fillers[k % 4]} and it was {'wonderful' if k % 2 or k < n // 4 else 'terrible'}",
             "label": "positive" if k % 2 else "negative"} for k in range(n)]
    return pd.DataFrame(rows).to_csv(index=False).encode()


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_browser_progress_words_shortcut_and_row_to_sidebar(browser, app_url, lang):
    T = lambda key, **kw: i18n.t(key, lang, **kw)  # noqa: E731
    ctx, pg = open_link(browser, f"{app_url}/labels?lang={lang}")
    try:
        pg.get_by_text(T("data.source_upload"), exact=True).click()
        wait_idle(pg)
        upload(pg, [{"name": "cues.csv", "mimeType": "text/csv", "buffer": _sentiment_csv()}], "cues.csv")
        pg.locator("[data-testid=stSidebarNav] a[href*='/dataset-explanations']").first.click()  # ?lang= follows
        wait_idle(pg)
        assert pg.locator("[data-testid=stMain] h1").first.inner_text().strip() == T("explain_data.title")
        box = pg.locator("[data-testid=stSidebar]").get_by_label(T("app.text"), exact=True)  # sidebar_text, in lang
        expect(box).not_to_have_value("", timeout=90_000)
        before = box.input_value()
        pg.get_by_role("button", name=T("explain.run")).click()
        # The job's progress: its bar, with the rate, while it runs.
        bar = pg.locator("[data-testid=stProgress]").first
        bar.wait_for(timeout=60_000)
        rate = T("explain.progress", step="@", rate="@").split("@")[-1].strip()
        pg.get_by_text(rate).first.wait_for(timeout=60_000)
        wait_idle(pg)
        main = pg.locator("[data-testid=stMain]")
        main.get_by_text(T("explain.labels_title")).first.wait_for(timeout=120_000)
        text = main.inner_text()
        assert "wonderful" in text and "terrible" in text  # each label's words
        shortcut = T("explain.shortcut", word="@", rows=0, label="@", errors=0).split("'@'")[0]
        warnings = pg.locator("[data-testid=stAlertContentWarning]")
        assert warnings.count() >= 1 and shortcut in warnings.first.inner_text()
        assert "'wonderful'" in warnings.first.inner_text()  # the cue that turns negative rows positive
        # A row clicked in the table goes into the sidebar.
        grid = pg.locator("[data-testid=stDataFrame]").last
        grid.scroll_into_view_if_needed()
        grid.click(position={"x": 20, "y": 35 + 18})  # the first row's selection box
        expect(box).not_to_have_value(before, timeout=30_000)  # the selection's run puts the row there
        wait_idle(pg)
        after = box.input_value()
        assert after != before and ("wonderful" in after or "terrible" in after)
    finally:
        ctx.close()
