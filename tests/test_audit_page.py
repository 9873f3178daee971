"""Label audit page (AppTest), its exports and projector, and one real-browser run:
select a confusion cell, click a row, land on Attributions with that row's text and label."""
import json

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from conftest import ROOT, commit, sidebar_text, wait_idle
from explorer.data.audit import audit
from explorer.data.audit_export import relabelled_csv, report_html
from explorer.data.dataset import prepare, read_csv
from explorer.data.mapping import Target
from explorer.explain.projector import project
from explore_helpers import give_csv
from test_audit import FLIPPED, planted


def _charts(at) -> dict:
    return {json.loads(c.proto.spec)["layout"]["title"]["text"]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def test_page_audits_the_data_page_csv_and_hooks_attributions():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["checkpoint"] = "minilm"
    give_csv(at, planted().to_csv(index=False).encode(), "planted.csv")
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception and not at.error
    at.button(key="audit_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = at.session_state["audit_result"].found
    assert set(found.flagged[:len(FLIPPED)]) == set(FLIPPED)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Flagged"] == str(len(found.flagged)) and metrics["Rows"] == "96"
    # the features' long name in a caption, not a metric that cuts it off; no twin P(given label) column
    assert "Features" not in metrics and any(c.value.startswith("Features: ") for c in at.caption)
    assert "P(given label)" not in list(at.dataframe[0].value.columns)
    charts = _charts(at)
    proj = charts["Every row's features, projected to 2-D (PCA)"]
    assert sum(len(tr["x"]) for tr in proj["data"]) == 96 and {tr["name"] for tr in proj["data"]} == {"negative", "positive"}
    cells = charts["Click a cell to list its rows"]["data"][0]
    want = np.zeros((2, 2), int)
    np.add.at(want, (found.data.y, found.predicted), 1)
    assert [int(v) for v in cells["text"]] == want.ravel().tolist() and want.sum() == 96
    rows = at.dataframe[0].value
    assert list(rows.iloc[:len(FLIPPED), 0]) == list(found.flagged[:len(FLIPPED)])  # flagged, most suspicious first
    at.radio(key="audit_colour").set_value("flag").run()
    names = {tr["name"] for tr in _charts(at)["Every row's features, projected to 2-D (PCA)"]["data"]}
    assert names == {"flagged", "not flagged"}
    # the hook the page uses to open a row: Attributions picks the requested target label
    at.session_state["checkpoint"] = "minilm-sentiment"
    at.session_state["attr_target_label"] = Target("negative")
    at.switch_page("pages/attributions.py").run()
    assert not at.exception
    assert at.selectbox(key="attr_target").value == 0 and "attr_target_label" not in at.session_state


def test_relabelled_csv_changes_only_accepted_rows_and_report_escapes(minilm):
    df = planted()
    df.loc[FLIPPED[0], "text"] = "<b>bold</b> " + df.loc[FLIPPED[0], "text"]  # a flagged row: it is in the report
    table = read_csv(df.to_csv(index=False).encode())
    found = audit(minilm, prepare(table))
    accepted = set(FLIPPED[:2])
    out = pd.read_csv(__import__("io").BytesIO(relabelled_csv(table, found, accepted)), dtype=str)
    changed = set(np.flatnonzero((out["label"] != df["label"]).to_numpy()))
    assert changed == accepted and list(out["text"]) == list(df["text"])
    page = report_html(found, accepted, "planted.csv", "vi")
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold" not in page
    assert page.count("<tr>") == len(found.flagged) + 1 and page.count("chấp nhận") >= len(accepted)


def test_projector_subsamples_above_the_limit():
    x = np.random.default_rng(0).normal(size=(300, 5))
    p = project(x, max_points=100)
    assert p.subsampled and p.xy.shape == (100, 2) and len(set(p.rows)) == 100 and p.total == 300
    full = project(x)
    assert not full.subsampled and full.method == "pca"
    np.testing.assert_allclose(np.var(full.xy, 0)[0] >= np.var(full.xy, 0)[1], True)


def test_browser_confusion_cell_then_row_opens_attributions(page):
    before = sidebar_text(page).input_value()
    # The Data page's demo at 10 tweets per label is the CSV the audit page picks up.
    page.locator("[data-testid=stSidebarNav] a", has_text="Data and labels").first.click()
    wait_idle(page)
    box = page.get_by_label("Tweets per label")
    commit(box, "10", "Enter")
    page.locator("[data-testid=stSidebarNav] a", has_text="Label audit").first.click()
    wait_idle(page)
    page.get_by_role("button", name="Find label issues").click()
    wait_idle(page)
    plot = page.locator(".js-plotly-plot").nth(1)  # projector first, then the confusion matrix
    plot.locator(".scatterlayer .trace .textpoint text").first.wait_for()  # drawn: its cells and their counts
    points = plot.locator(".scatterlayer .trace .points path")
    counts = [int(x) for x in plot.locator(".scatterlayer .trace .textpoint text").all_text_contents()]
    off = next(i for i, c in enumerate(counts) if c > 0 and i % 4 != 0)  # 3x3 cells; diagonal = 0, 4, 8
    points.nth(off).click(force=True)
    wait_idle(page)
    caption = page.get_by_text("Rows labelled '").first.inner_text()
    assert caption.endswith(f": {counts[off]}")
    page.get_by_role("button", name="Clear the selected cell").click()  # the way back, named on the page
    wait_idle(page)
    page.get_by_text("Showing the flagged rows").first.wait_for(timeout=30_000)
    assert page.get_by_text("Rows labelled '").count() == 0
    plot = page.locator(".js-plotly-plot").nth(1)
    plot.locator(".scatterlayer .trace .points path").nth(off).wait_for(state="attached")  # drawn again
    plot.locator(".scatterlayer .trace .points path").nth(off).click(force=True)
    wait_idle(page)
    page.get_by_text("Rows labelled '").first.wait_for(timeout=30_000)
    grid = page.locator("[data-testid=stDataFrame]").first
    box = grid.bounding_box()
    grid.click(position={"x": 20, "y": 35 + 18})  # the first row's selection box
    page.wait_for_url("**/attribution", timeout=60_000)  # the selection's run switches page
    wait_idle(page)
    page.wait_for_selector("h1:has-text('Attributions')", timeout=60_000)
    assert page.url.endswith("/attribution")
    sidebar = sidebar_text(page).input_value()
    assert sidebar and sidebar != before  # the clicked row's text
    assert box["height"] > 0
    given = caption.split("'")[1]
    # the attribution ran for the row's given label (the page's default "Explain: the given label")
    page.get_by_text(f"of '{given}' (").first.wait_for(timeout=60_000, state="attached")  # in the method notes


def test_page_on_regression_data_ranks_residuals_without_a_confusion_matrix():
    df = planted()
    df["label"] = np.where(df["label"] == "positive", 4.5, 1.5) + np.linspace(-0.3, 0.3, len(df))
    df.loc[FLIPPED[0], "label"] = 9.75  # far off the scale the text suggests
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["checkpoint"] = "minilm"
    give_csv(at, df.to_csv(index=False).encode(), "scores.csv")
    at.run()
    at.switch_page("pages/audit.py").run()
    at.button(key="audit_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = at.session_state["audit_result"].found
    assert found.problem_type == "regression" and found.flagged[0] == FLIPPED[0]
    titles = set(_charts(at))
    assert "Click a cell to list its rows" not in titles and any(t.startswith("Every row") for t in titles)
    assert at.radio(key="audit_colour").options == ["flag"]


def test_page_bad_input_is_one_error_line():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    one_row_class = pd.DataFrame({"text": [f"text {i}" for i in range(8)], "label": ["a"] * 7 + ["b"]})
    give_csv(at, one_row_class.to_csv(index=False).encode(), "bad.csv")
    at.run()
    at.switch_page("pages/audit.py").run()
    at.button(key="audit_run").click().run()
    assert not at.exception and len(at.error) == 1 and "audit_result" not in at.session_state
    assert "'b' has only 1 row" in at.error[0].value and "\n" not in at.error[0].value
