"""The public API (explorer.load/analyze/attribute/inspect/audit and explorer.figures) on the embedded
sentiment model and a tiny one: results round-trip through JSON and display themselves in a notebook."""
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import explorer
from explorer.runtime.device import resolve_device
from explorer.results import HTML
from explorer.text.errors import ExplorerError
from tests.conftest import ROOT

TEXT = "What a wonderful, moving film."


def _round_trip(result) -> dict:
    d = result.to_dict()
    assert json.loads(result.to_json()) == d  # JSON-safe: nothing numpy left in it
    assert isinstance(result._repr_html_(), str) and result._repr_html_()
    return d


@pytest.mark.server
def test_importing_explorer_stays_light():
    out = subprocess.run([sys.executable, "-c", "import sys, explorer; print(sorted(explorer.__all__)); "
                          "print([m for m in ('torch', 'transformers', 'plotly') if m in sys.modules])"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["['analyze', 'analyze_tokens', 'attribute', 'attribute_many', 'audit', 'counterfactual', "
                   "'explain_data', 'figures', 'inspect', 'load', 'scan']", "[]"]


@pytest.mark.server
def test_loading_prints_no_transformers_load_report_and_names_new_weights_itself():
    """explorer.load("minilm-sentiment") once printed transformers' LOAD REPORT ("classifier.weight |
    MISSING ... Consider training") although its head then comes from the project's assets."""
    code = ("import explorer; explorer.load('minilm-sentiment', device='cpu'); print('---', flush=True); "
            "import sys; print('---', file=sys.stderr, flush=True); explorer.load('minilm', device='cpu')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={k: v for k, v in __import__("os").environ.items() if k != "TRANSFORMERS_VERBOSITY"})
    sentiment, minilm = done.stderr.split("---\n")
    assert "LOAD REPORT" not in done.stderr and "MISSING" not in done.stderr, done.stderr
    assert "new, random weights" not in sentiment  # its head is the project's trained one
    assert "minilm: new, random weights (classifier.bias, classifier.weight) drawn from seed" in minilm, minilm


def test_load_a_folder_on_the_cpu(tiny_root):
    ck = explorer.load(str(tiny_root / "tiny-bert"), device="cpu")
    assert ck.labels == ("alpha", "beta", "gamma")
    assert next(ck.model.parameters()).device.type == "cpu"
    assert resolve_device("cpu").type == "cpu"  # "auto" is tested in test_device.py


def test_an_unknown_device_is_one_line():
    with pytest.raises(ExplorerError, match="Unknown device 'tpu9'") as err:
        explorer.load("minilm-sentiment", device="tpu9")
    assert "\n" not in str(err.value) and err.value.message("vi") != str(err.value)


def test_analyze_matches_the_core_and_the_cli_json(sentiment):
    from explorer.model.analysis import analyze
    from explorer.model.heads import build_head

    a = explorer.analyze(sentiment, TEXT, head="own", text_pair=None)
    core = analyze(sentiment, build_head(sentiment, "own"), TEXT)
    assert a.predicted == core.predicted == "positive"
    np.testing.assert_allclose(a.logits, core.logits, rtol=0, atol=1e-6)
    d = _round_trip(a)
    assert d["predicted"] == "positive" and d["labels"] == ["negative", "neutral", "positive"]
    assert len(d["attention"]["rollout"]) == a.attentions.shape[0]
    html = a._repr_html_()
    assert "<b>positive</b>" in html and "<table>" in html


def test_analyze_a_pair_and_a_head_kind_on_a_tiny_model(tiny):
    a = explorer.analyze(tiny["bert"], "first text", head="mean-linear", text_pair="second text", seed=3)
    assert a.head_kind == "mean-linear" and 1 in a.segments and a.text_pair == "second text"
    assert _round_trip(a)["text_pair"] == "second text"


def test_bad_input_is_an_explorer_error(sentiment):
    with pytest.raises(ExplorerError):
        explorer.analyze(sentiment, "   ")
    with pytest.raises(ExplorerError, match="expected a checkpoint"):
        explorer.analyze("minilm-sentiment", TEXT)
    with pytest.raises(ExplorerError, match="expected a pandas DataFrame"):
        explorer.inspect([{"text": "a", "label": "b"}])


def test_attribute_lig_completes_and_round_trips(tiny):
    r = explorer.attribute(tiny["bert"], "a small test sentence", method="lig", target=None)
    assert r.converged and r.method == "lig" and r.target_label in tiny["bert"].labels
    d = _round_trip(r)
    assert len(d["scores"]) == len(r.tokens) and d["target"] == r.target_label
    assert "<span" in r._repr_html_()
    occ = explorer.attribute(tiny["bert"], "a small test sentence", method="occlusion", target=1)
    assert occ.target == 1 and occ.converged is None


def test_every_view_is_a_figure_or_a_page(tiny):
    a = explorer.analyze(tiny["bert"], "a test of the views", text_pair="and a second text")
    v = explorer.figures
    for fig in (v.rollout(a), v.rollout(a, layer=1, hide_special=True), v.cls_attention(a, head=2),
                v.readout(a), v.model_view(a)):
        assert isinstance(fig, go.Figure) and fig.layout.title.text and fig.data
    assert v.rollout(a, lang="vi").layout.title.text != v.rollout(a).layout.title.text
    r = explorer.attribute(tiny["bert"], "a test of the views", method="saliency")
    assert isinstance(v.attribution(r, level="word"), go.Figure)
    page = v.highlight(r)
    assert isinstance(page, HTML) and page.page.startswith("<!DOCTYPE html>") and "<iframe" in page._repr_html_()
    with pytest.raises(ExplorerError, match="layer 3 is out of range"):
        v.rollout(a, layer=3)
    with pytest.raises(ExplorerError, match="head 4 is out of range"):
        v.head_view(a, head=4)
    with pytest.raises(ExplorerError, match="level must be"):
        v.attribution(r, level="sentence")


def test_head_view_saves_a_standalone_offline_page(tiny, tmp_path):
    a = explorer.analyze(tiny["bert"], "a test of the head view")
    page = explorer.figures.head_view(a, layer=2)
    path = page.save(tmp_path / "head.html")
    text = path.read_text(encoding="utf-8")
    assert text == page.page and "plotly_hover" in text and "Layer 2" in page.title
    assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", text)  # plotly.js inlined, no CDN
    assert _round_trip(page)["html"] == text


def _frame() -> pd.DataFrame:
    texts = ["I love it", "Terrible service", "It is a chair", "Best day ever", "I hate waiting", "At noon"]
    return pd.DataFrame({"text": texts * 4, "label": ["2", "0", "1", "2", "0", "1"] * 4, "extra": range(24)})


def test_inspect_a_dataframe(sentiment):
    report = explorer.inspect(_frame(), sentiment, text="text", label="label")
    d = _round_trip(report)
    assert d["rows"] == 24 and d["text_column"] == "text" and d["label_columns"] == ["label"]
    assert {"name": "2", "count": 8} in d["labels"]
    assert list(report.issues.columns) == ["kind", "message"]
    alone = explorer.inspect(_frame().assign(label=["1", "2", "3", "1", "2", "3"] * 4))  # columns guessed
    assert "one_based_ids" in set(alone.issues["kind"])


def test_audit_a_dataframe(tiny):
    df = _frame()
    df.loc[3, "label"] = "0"  # one row mislabelled
    found = explorer.audit(df, tiny["bert"], text="text", label="label", folds=2)
    d = _round_trip(found)
    assert d["label_issue_summary"]["folds"] == 2
    assert list(found.issues.columns) == ["row", "text", "given", "suggested", "score", "p_given"]
    assert len(found.issues) == d["label_issue_summary"]["flagged"]


def test_a_dataframe_reads_as_its_csv_would():
    """explorer.inspect(df) checks the frame itself (no CSV text in between): every cell, missing value, NA
    spelling, number and column name comes out as the reader gives the frame written as a CSV."""
    from explorer.data.dataset import checked_table, frame_cells, read_csv
    df = pd.DataFrame({"text": ["a", " b ", "NA", "null", None, "x\ny"], "label": [1.0, 2.5, np.nan, 0.1, 3.0, 1e20],
                       7: [1, 2, 3, 4, 5, 6], "flag": [True, False, True, True, False, True]},
                      index=[10, 11, 12, 13, 14, 15])
    data = df.to_csv(index=False).encode("utf-8")
    want = read_csv(data, max_bytes=len(data) + 1, name="DataFrame").frame
    got = checked_table(frame_cells(df), "DataFrame").frame
    pd.testing.assert_frame_equal(got, want)
    twice = pd.DataFrame([["a", "b"]], columns=["text", "text "])
    with pytest.raises(ExplorerError, match="duplicate column names: text"):
        checked_table(frame_cells(twice), "DataFrame")
    with pytest.raises(ExplorerError):
        checked_table(frame_cells(df.iloc[:0]), "DataFrame")
