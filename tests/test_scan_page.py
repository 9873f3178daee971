"""The Scan page (AppTest): the Data page's CSV scanned as one job; the permuted mapping found as a major finding
with its rows, a row opened on the page that shows it in depth, the charts and downloads; the same in
Vietnamese with no English left."""
import json

import pandas as pd
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explore_helpers import give_csv
from explorer.data.dataset import demo_csv
from test_vi_pages import english_left, shown


def _scanned(lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["checkpoint"] = "minilm-sentiment"
    at.session_state["lang"] = lang
    give_csv(at, demo_csv(10, permuted=True), "rotated.csv")  # 30 tweets, labels renamed in a cycle
    at.run()
    at.switch_page("pages/scan.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.info  # what a scan checks, before the first one
    at.button(key="scan_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_scan_finds_the_rotation_and_opens_a_row_in_depth():
    at = _scanned()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows"] == "30" and int(metrics["Major"]) >= 1
    labels = [e.label for e in at.expander]
    assert any(label.startswith("mapping.permutation:") for label in labels), labels
    # the mapping's table: each data label with the checkpoint's name for what it predicts on those rows
    tables = [d.value for d in at.dataframe]
    mapping = next(tb for tb in tables if "Data label" in tb.columns)
    assert set(mapping["Data label"]) == {"negative", "neutral", "positive"}
    assert (mapping["Data label"] != mapping["The checkpoint's name for it"]).all()
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any("Reliability" in x for x in titles) and any("Robustness" in x for x in titles)
    assert {b.proto.label for b in at.get("download_button")} >= {"Download the report (HTML)",
                                                                   "Download the rows and their flags (CSV)"}
    # a row of the mapping finding opens on the Data page, its text in the sidebar
    key = next(b.key for b in at.button if b.key and b.key.startswith("scan_open_mapping.permutation"))
    row = at.selectbox(key=key.replace("scan_open_", "scan_row_")).value
    text = pd.read_csv(__import__("io").BytesIO(demo_csv(10, permuted=True)))["text"][row]
    at.button(key=key).click().run()
    assert not at.exception
    assert at.session_state["text"] == text


def test_scan_page_in_vietnamese_has_no_english_left():
    at = _scanned("vi")
    assert english_left(shown(at)) == []
    assert any(e.label.startswith("mapping.permutation:") and "hoán vị" in e.label for e in at.expander)
