"""The UI gaps for token heads: the Attributions page explains one token (or an entity's token) of a
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
from explorer.ui.running import HELD
from explorer.ui.views.finetune import FINETUNE

from conftest import ROOT
from test_token_page import TEXT, _array

FT_JOB = HELD.format(FINETUNE)  # where ui.run holds the session's fine-tune, as (inputs, job)


pytestmark = [pytest.mark.slow]


def _open(folder, page: str, upload=None, **state) -> AppTest:
    """The app on `folder`'s checkpoint ("other…") and TEXT, `upload` ((bytes, name)) as the Data page's file,
    switched to pages/`page`.py."""
    from explorer.ui.session import Upload

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if upload is not None:
        state = {"data_source": "upload", "data_uploaded": Upload(*upload), **state}
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(folder), "text": TEXT, **state}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    return at


def _attributions(folder, **state) -> AppTest:
    at = _open(folder, "attributions", **state)
    assert not at.error, [e.value for e in at.error]
    return at


def test_entity_token_is_the_carrier_under_each_strategy(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT, strategies=("none", "simple", "first", "max"))
    maria = a.entities["first"][0]  # "Maria Kowalczyk": Maria is one token, the first of its word
    assert entity_token(a, maria, strategy="first") == a.words[a.token_word[1]].first == 1
    kowal = next(w for w in a.words if w.text == "Kowalczyk")
    for e in a.entities["none"]:  # a token of its own: pipeline()'s index
        assert entity_token(a, e, strategy="none") == e.index
    for e in a.entities["max"]:
        w = next(w for w in a.words if w.start == e.start)
        assert entity_token(a, e, strategy="max") == w.max
    assert len(kowal.tokens) > 1  # the fixture's names split, so first and max can differ


def test_attributions_page_explains_one_token_with_complete_lig(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    head = build_head(ck)
    a = analyze_tokens(ck, head, TEXT, aggregation="first")
    at = _attributions(token_checkpoint, tokenhead_aggregation="first")
    (ok,) = [s.value for s in at.success]  # the default pick, the first entity's token: lig complete within 1%
    assert float(ok.split("within ")[1].rstrip("%.")) <= 1.0
    options = at.selectbox(key="attr_token_pick").options
    assert options[0].startswith("entity") and "maria" in options[0].lower()  # entities first, then every token
    picked = next(o for o in options if o.startswith("token #3 "))
    at.selectbox(key="attr_token_pick").set_value(picked).run()
    assert not at.exception and not at.error
    (ok,) = [s.value for s in at.success]
    error = float(ok.split("within ")[1].rstrip("%."))
    assert error <= 1.0  # lig's completeness within 1% for a token's logit
    want = attribute(ck, head, text=TEXT, method="lig", target=int(a.predicted[3]), target_token=3)
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert sorted(np.round(_array(bars["x"]), 4)) == sorted(np.round(want.scores, 4))
    assert f"#3 {a.shown[3]}" in " ".join(c.value for c in at.caption)
    at.button(key="attr_grid_run").click().run()
    assert not at.exception and not at.error
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    # the grid's numbers are every label's attribution at the token its title names
    assert "#3 " in spec["layout"]["title"]["text"], spec["layout"]["title"]
    grid = spec["data"][0]
    assert list(grid["y"]) == list(a.labels)
    np.testing.assert_allclose(_array(grid["z"]), every_label(ck, head, text=TEXT, token=3).scores, atol=1e-4)


def test_attributions_page_in_vietnamese(token_checkpoint):
    at = _attributions(token_checkpoint, lang="vi")
    assert at.selectbox(key="attr_token_pick").label == i18n.t("tokenhead.attr_token", "vi")
    assert any("Giải thích" in c.value for c in at.caption) and at.success


def _conll(n: int = 16) -> bytes:
    from token_model import sentences

    return "\n\n".join("\n".join(f"{w} {tag}" for w, tag in zip(*s)) for s in sentences(n, seed=3)).encode() + b"\n"


def test_finetune_page_trains_a_token_head_that_the_pipeline_page_reads(token_checkpoint):
    at = _open(token_checkpoint, "data", (_conll(), "ner.conll"))
    assert not at.error, [e.value for e in at.error]
    at.switch_page("pages/finetune.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "ner.conll, 7 tags" in captions and "seqeval" in captions
    assert not any(s.key == "data_pair_column" for s in at.selectbox)  # no sentence pairs for token data
    at.number_input(key="ft_epochs_head").set_value(4).run()
    at.button(key="ft_start").click().run()
    job = at.session_state[FT_JOB][1]
    assert job.wait(120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    metrics = {m.label: float(m.value) for m in at.metric}
    assert {"entity precision", "entity recall", "entity F1"} <= set(metrics), metrics
    assert job.result.problem_type == "token-classification" and job.result.metrics["f1"] > 0.5
    assert metrics["entity F1"] == pytest.approx(job.result.metrics["f1"], abs=1e-3)
    assert at.session_state["ft_registered"] == job.name
    # the new model, picked in the sidebar, is a token classifier on every page
    at.session_state["checkpoint"] = job.name
    at.switch_page("pages/home.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "data-legend=\"PER\"" in " ".join(h.proto.body for h in at.get("html"))
    at.switch_page("pages/logits.py").run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 2


def test_data_page_checks_token_data_against_a_token_checkpoint(token_checkpoint):
    from token_model import TAGS

    swap = {"B-PER": "B-LOC", "B-LOC": "B-PER", "I-PER": "I-LOC", "I-LOC": "I-PER"}  # PER and LOC swapped
    raw = _conll(24).decode()
    permuted = "\n".join(" ".join([ln.split()[0], swap.get(ln.split()[1], ln.split()[1])]) if ln.strip() else ""
                         for ln in raw.splitlines()).encode() + b"\n"
    at = _open(token_checkpoint, "data", (permuted, "swapped.conll"))
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    before, after = (float(metrics[k].rstrip("%")) for k in ("Agreement as named", "Agreement with the best mapping"))
    assert after == 100.0 and before < 80  # the permutation undone
    assert "Permuted labels" in " ".join(w.value for w in at.warning)
    mapping = at.table[0].value
    suggested = dict(zip(mapping.iloc[:, 0], mapping.iloc[:, 1]))
    assert suggested == {tag: swap.get(tag, tag) for tag in TAGS}


def test_data_page_refuses_mismatched_kinds_in_one_line(token_checkpoint):
    csv = b"text,label\ngood film,pos\nbad film,neg\n" * 4
    at = _open(token_checkpoint, "data", (csv, "tweets.csv"))
    (err,) = at.error  # a token classifier given sentence data
    assert "token" in err.value and "\n" not in err.value


def test_cli_every_label_at_a_token(token_checkpoint, tiny_root, capsys):
    from explorer.cli import main

    ck = load_checkpoint(str(token_checkpoint))
    code = main(["analyze", "--checkpoint", str(token_checkpoint), "--text", TEXT, "--json", "--attributions", "lig",
                 "--target-token", "1", "--every-label"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["every_label"]["labels"] == list(ck.labels) and out["every_label"]["token"] == 1
    np.testing.assert_allclose(out["every_label"]["scores"], every_label(ck, build_head(ck), text=TEXT, token=1).scores,
                               atol=1e-5)
    assert max(out["every_label"]["errors"]) <= 0.01
    for argv, words in ((["--checkpoint", str(tiny_root / "tiny-bert"), "--every-label"], "--every-label applies"),
                        (["--checkpoint", str(token_checkpoint), "--every-label"], "add --attributions")):
        assert main(["analyze", "--text", TEXT, *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err


def test_costly_occlusion_waits_for_the_run_button(token_checkpoint, monkeypatch):
    from explorer.explain import attribution as attr

    monkeypatch.setattr(attr, "occlusion_is_costly", lambda n, window=1: True)
    at = _attributions(token_checkpoint, attr_method="occlusion")
    assert at.warning and not at.get("plotly_chart")  # asked first, nothing computed
    at.button(key="attr_token_run").click().run()
    assert not at.exception and not at.error and at.get("plotly_chart") and not at.metric  # no completeness


def test_heavy_token_attributions_go_through_the_job_queue(token_checkpoint, monkeypatch):
    from explorer.explain import cost
    from explorer.ui import running

    started, real = [], running.start_job
    monkeypatch.setattr(cost, "attribution_is_heavy", lambda *a, **k: True)
    monkeypatch.setattr(running, "start_job", lambda kind, *a: started.append(kind) or real(kind, *a))
    at = _attributions(token_checkpoint)
    assert at.success and started == ["attr_token"]  # lig's completeness, computed in the queue
    at.button(key="attr_grid_run").click().run()
    assert not at.exception and not at.error and started == ["attr_token", "attr_grid"]
    assert len(at.get("plotly_chart")) == 2


def test_finetune_page_with_token_data_in_vietnamese(token_checkpoint):
    at = _open(token_checkpoint, "data", (_conll(), "ner.conll"))
    at.session_state["lang"] = "vi"  # after the Data page: AppTest formats its radio outside the run, in English
    at.switch_page("pages/finetune.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "Dữ liệu token: ner.conll, 7 nhãn" in captions and "seqeval" in captions
    assert at.button(key="ft_start").label == i18n.t("finetune.start", "vi")
