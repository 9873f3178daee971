"""Issue 20's UI gaps for token heads: the Attributions page explains one token (or an entity's token) of a
token classifier, with lig's completeness check and "every label at this token" as a grid; the Fine-tune
page trains a token head on token data and the new model works on the Pipeline page; the Data page checks
token data against a token checkpoint."""
from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.explain.attribution import attribute
from explorer.explain.token_attribution import entity_token, every_label
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.token_analysis import analyze_tokens
from explorer.text import i18n

from conftest import ROOT
from test_token_page import TEXT, _array


def _attributions(folder, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(folder), "text": TEXT, **state}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/attributions.py").run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    return at


def test_entity_token_is_the_carrier_under_each_strategy(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT, strategies=("none", "simple", "first", "max"))
    maria = a.entities["first"][0]  # "Maria Kowalczyk": Maria is one token, the first of its word
    assert entity_token(a, maria, "first") == a.words[a.token_word[1]].first == 1
    kowal = next(w for w in a.words if w.text == "Kowalczyk")
    for e in a.entities["none"]:  # a token of its own: pipeline()'s index
        assert entity_token(a, e, "none") == e.index
    for e in a.entities["max"]:
        w = next(w for w in a.words if w.start == e.start)
        assert entity_token(a, e, "max") == w.max
    assert len(kowal.tokens) > 1  # the fixture's names split, so first and max can differ


def test_attributions_page_explains_one_token_with_complete_lig(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    head = build_head(ck)
    a = analyze_tokens(ck, head, TEXT, aggregation="first")
    at = _attributions(token_checkpoint, tokenhead_aggregation="first")
    options = at.selectbox(key="attr_token_pick").options
    assert options[0].startswith("entity") and "maria" in options[0].lower()  # entities first, then every token
    picked = next(o for o in options if o.startswith("token #3 "))
    at.selectbox(key="attr_token_pick").set_value(picked).run()
    assert not at.exception and not at.error
    (ok,) = [s.value for s in at.success]
    error = float(ok.split("within ")[1].rstrip("%."))
    assert error <= 1.0  # lig's completeness within 1% for a token's logit
    want = attribute(ck, head, TEXT, "lig", int(a.predicted[3]), target_token=3)
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert sorted(np.round(_array(bars["x"]), 4)) == sorted(np.round(want.scores, 4))
    assert f"#3 {a.shown[3]}" in " ".join(c.value for c in at.caption)
    at.button(key="attr_grid_run").click().run()
    assert not at.exception and not at.error
    grid = json.loads(at.get("plotly_chart")[1].proto.spec)["data"][0]
    assert list(grid["y"]) == list(a.labels)
    np.testing.assert_allclose(_array(grid["z"]), every_label(ck, head, TEXT, 3).scores, atol=1e-4)


def test_attributions_page_in_vietnamese(token_checkpoint):
    at = _attributions(token_checkpoint, lang="vi")
    assert at.selectbox(key="attr_token_pick").label == i18n.t("tokenhead.attr_token", "vi")
    assert any("Giải thích" in c.value for c in at.caption) and at.success
