"""The "Add a page" guide's example is a page of this app: its three blocks (the library function, the view, the
page) dropped into the library's folders as they stand, run with AppTest on a tiny checkpoint and the Data page's
data: the page is a thin entry, shows what comes before the first run, runs the job on a click and draws one bar
per label whose counts are those of a plain forward pass; its messages and its line in app.py's PAGES have the shape
the app reads."""
from __future__ import annotations

import json
import re
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

import explorer.data
import explorer.ui.views
from conftest import ROOT, TINY_LABELS
from explorer.ui.session import DATA_KEY, DataSource

GUIDE = ROOT / "docs" / "add-a-page.md"
MODULES = ("explorer.data.predicted", "explorer.ui.views.predicted")


def guide_blocks() -> tuple[list[str], str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S), text


@pytest.fixture
def example_page(tmp_path, monkeypatch):
    """The page block as a script, its library and view blocks importable where the page imports them from."""
    (library, view, page), _ = guide_blocks()
    for folder, code in (("data", library), ("views", view)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "predicted.py").write_text(code, encoding="utf-8")
    monkeypatch.setattr(explorer.data, "__path__", [*explorer.data.__path__, str(tmp_path / "data")])
    monkeypatch.setattr(explorer.ui.views, "__path__", [*explorer.ui.views.__path__, str(tmp_path / "views")])
    path = tmp_path / "predicted_page.py"
    path.write_text(page, encoding="utf-8")
    yield path
    for name in MODULES:
        sys.modules.pop(name, None)


def test_the_guides_example_page_runs_as_a_page_of_the_app(example_page, tiny_root, tiny):
    assert len(example_page.read_text().splitlines()) <= 30  # a thin entry, as tests/test_layout.py holds pages/
    texts = [f"row {i} says {w}" for i, w in enumerate(["good", "bad", "fine", "awful", "great", "poor"] * 3)]
    data = pd.DataFrame({"text": texts, "label": ["x", "y"] * 9})
    at = AppTest.from_file(str(example_page), default_timeout=120)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(tiny_root / "tiny-bert"),
                       DATA_KEY: DataSource(data.to_csv(index=False).encode(), "rows.csv", "text", "label",
                                            columns=("text", "label"))}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [i.value for i in at.info] == ["predicted.what_comes"] and not at.get("plotly_chart")  # before a run
    at.button(key="predicted_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (chart,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bars = chart["data"][0]
    ck = tiny["bert"]
    with torch.inference_mode():  # the numbers on screen against a plain forward pass
        enc = ck.tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        ids = ck.model(**enc).logits.argmax(-1).numpy()
    assert bars["x"] == list(TINY_LABELS)
    assert [int(v) for v in bars["text"]] == np.bincount(ids, minlength=len(TINY_LABELS)).tolist()
    assert at.session_state["predicted_result"].found == dict(zip(TINY_LABELS, np.bincount(ids, minlength=3).tolist()))
    at.run()  # a rerun reads the kept run: the chart without a button
    assert not at.exception and at.get("plotly_chart") and not [b for b in at.button if b.key == "predicted_run"]


def test_the_guides_messages_and_app_line_are_what_the_page_reads():
    (_, view, page), text = guide_blocks()
    what = re.search(r'ui\.open_data_page\("(\w+)"\)', page).group(1)
    assert re.search(rf'ui\.run_on_data\("{what}"', page)
    # the keys open_data_page and run_on_data read for `what` (explorer/ui/datapage.py), and those the view reads
    read = {f"{what}.{k}" for k in ("title", "intro", "data", "run", "starting", "stop")}
    read |= set(re.findall(r't\("([\w.]+)"\)', view))
    assert set(re.findall(r'^msgctxt "([\w.]+)"$', text, re.M)) == read
    datapage = (ROOT / "explorer" / "ui" / "datapage.py").read_text()
    assert all(f'f"{{what}}.{k}"' in datapage for k in ("intro", "data", "run", "starting", "stop"))
    line = re.search(r'^\("pages/\w+\.py".*\),$', text, re.M).group(0)
    app_line = re.compile(r'\("pages/(\w+)\.py", "(\w+)", "([\w-]+)", "[^"]+", (True|False)\)')
    assert app_line.fullmatch(line[:-1]) and app_line.search((ROOT / "app.py").read_text())
    stem, key, slug, _ = app_line.fullmatch(line[:-1]).groups()
    assert (stem, key) == (what, what) and slug != stem  # url_path differs from the file's stem (app.py says why)
