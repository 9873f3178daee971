"""The Pipeline page for a token classifier: the entity view highlights the spans pipeline() returns, with a
legend; the token view draws the token × label heatmap and marks the subword that carries each word's label.
AppTest for the widgets and tables; Chromium reads the highlight and the heatmap as drawn, in en and vi."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.token_analysis import analyze_tokens
from explorer.text import i18n
from explorer.text.plain import markdown as plain

from conftest import ROOT, commit, open_app, wait_idle

TEXT = "Maria Kowalczyk visited Hanoi last week."


def _app(folder, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(folder), "text": TEXT, **state}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    return at


def test_entity_and_token_views(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT, aggregation="first")
    at = _app(token_checkpoint, tokenhead_aggregation="first")
    html = " ".join(h.proto.body for h in at.get("html"))
    for e in a.grouped():  # every entity pipeline() returns, highlighted with its type
        assert f'data-entity="{e.label}"' in html and TEXT[e.start:e.end] in html
    assert 'data-legend="PER"' in html and 'data-legend="LOC"' in html and not at.metric
    at.radio(key="tokenhead_view").set_value("tokens").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    rows = at.dataframe[0].value
    carries = rows[i18n.t("tokenhead.col_carries", "en")].tolist()
    assert carries == [a.token_word[i] is not None and i == a.words[a.token_word[i]].first for i in range(len(a.tokens))]


def test_a_sentence_checkpoint_keeps_its_pipeline(tiny_root):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert at.metric and all("data-entity" not in h.proto.body for h in at.get("html"))


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "vi"])
def test_browser_reads_entities_and_heatmap(browser, app_url, token_checkpoint, lang):
    from browser_plots import chart

    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    T = lambda key: i18n.t(key, lang)  # noqa: E731
    ctx, pg = open_app(browser, app_url)
    try:
        side = pg.locator("[data-testid=stSidebar]")
        if lang != "en":
            side.locator("[data-testid=stSelectbox]").first.click()
            pg.get_by_role("option", name=i18n.LANGUAGES[lang], exact=True).click()
            wait_idle(pg)
        side.locator("[data-testid=stSelectbox]").filter(has_text=T("app.checkpoint")).first.click()
        pg.get_by_role("option", name=T("app.other"), exact=True).click()
        wait_idle(pg)
        field = side.locator("[data-testid=stTextInput]").filter(has_text=T("app.other_checkpoint")).locator("input")
        commit(field, str(token_checkpoint), "Enter")
        box = side.locator("[data-testid=stTextArea]").filter(has_text=T("app.text")).locator("textarea").first
        commit(box, TEXT)
        marks = pg.locator("[data-testid=stMain] mark[data-entity]")
        drawn = [(m.get_attribute("data-entity"), m.inner_text().split("\n")[0]) for m in marks.all()]
        want = [(e.label, TEXT[e.start:e.end]) for e in a.grouped()]
        assert [(ty, text.replace(ty, "").strip()) for ty, text in drawn] == want, drawn
        legend = pg.locator("[data-testid=stMain] .he-entities").inner_text()
        assert T("tokenhead.legend") in legend and "PER" in legend
        pg.get_by_text(T("tokenhead.view_tokens"), exact=True).click()
        wait_idle(pg)
        heat = chart(pg, T("tokenhead.heatmap_title"))
        np.testing.assert_allclose(np.array(heat["data"][0]["z"], dtype=float), a.softmax.T, atol=1e-4)
        assert heat["data"][0]["y"] == list(a.labels)
    finally:
        ctx.close()


def _lesson(folder) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(folder), "text": TEXT}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/lesson.py").run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    return at


def test_lesson_step_8_uses_the_real_token_head(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    at = _lesson(token_checkpoint)
    assert i18n.t("lesson.token_heads.title", "en") in [h.value for h in at.subheader]
    vectors = i18n.t("tokenhead.col_vectors", "en")
    (rows,) = [d.value for d in at.dataframe if vectors in d.value.columns]
    assert rows[vectors].tolist() == [1, len(a.tokens)]
    caption = " ".join(c.value for c in at.caption)
    # every token with its tag, in order, as plain text (tokens are the visitor's text)
    assert plain(" ".join(f"{tok}/{tag}" for tok, tag, sp in zip(a.shown, a.tags, a.special) if not sp)) in caption


@pytest.mark.browser
def test_browser_lesson_shows_the_real_token_head(browser, app_url, token_checkpoint):
    from browser_plots import chart

    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    ctx, pg = open_app(browser, app_url)
    try:
        open_token_page(pg, token_checkpoint, "guided-lesson")
        heat = chart(pg, i18n.t("tokenhead.lesson_heatmap_title", "en"))
        np.testing.assert_allclose(np.array(heat["data"][0]["z"], dtype=float), a.logits.T, atol=1e-4)
    finally:
        ctx.close()


def open_token_page(pg, folder, path: str) -> None:
    """In a browser on the app (English): the checkpoint at `folder` and TEXT picked in the sidebar, then the
    page at `path` (its url_path) opened and idle."""
    side = pg.locator("[data-testid=stSidebar]")
    side.locator("[data-testid=stSelectbox]").filter(has_text=i18n.t("app.checkpoint", "en")).first.click()
    pg.get_by_role("option", name=i18n.t("app.other", "en"), exact=True).click()
    wait_idle(pg)
    field = side.locator("[data-testid=stTextInput]").locator("input").first
    commit(field, str(folder), "Enter")
    box = side.locator("[data-testid=stTextArea]").filter(has_text=i18n.t("app.text", "en")).locator("textarea")
    commit(box.first, TEXT)
    pg.locator(f"[data-testid=stSidebarNav] a[href$='/{path}']").first.click()
    pg.wait_for_url(f"**/{path}")
    wait_idle(pg)


def _array(v) -> np.ndarray:
    """A plotly figure's array as the spec holds it: a list, or a typed array ({dtype, bdata, shape})."""
    if isinstance(v, dict):
        shape = [int(n) for n in str(v.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).reshape(shape).astype(float)
    return np.asarray(v, dtype=float)


def test_logits_page_reads_the_head_at_every_layer(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(token_checkpoint), "text": TEXT}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/logits.py").run()
    assert not at.exception and not at.error
    logits, layers = (json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart"))
    np.testing.assert_allclose(_array(logits["z"]), a.logits.T, atol=1e-5)
    z = _array(layers["z"])  # (layers+1, seq): the last layer's row is each tag's own probability
    assert z.shape == a.layer_logits.shape[:2]
    np.testing.assert_allclose(z[-1], a.softmax.max(-1), atol=1e-5)
    assert list(layers["customdata"][-1]) == list(a.tags)  # the last layer gives the final tags


def test_tokens_page_lists_tokens_with_tags(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(token_checkpoint), "text": TEXT}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/tokens.py").run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 1 and at.get("iframe")  # no [CLS] views: the head and model views only
    rows = at.dataframe[0].value
    T = lambda k: i18n.t(f"tokenhead.col_{k}", "en")  # noqa: E731
    assert rows[T("tag")].tolist() == list(a.tags) and rows[T("special")].tolist() == list(a.special)
    assert rows[T("id")].tolist() == list(a.token_ids) and rows[T("offsets")].iloc[1] == "0–5"  # "Maria"
