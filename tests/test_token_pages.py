"""Item 4: a token classifier is a first-class state on the pages built for a sentence classifier.
Done here: Pipeline (no "each box below" without boxes), Pooled vector (every token's vector, the head applied
to each) and Inside the encoder (the head read out per layer for a picked token, the attention views)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.token_analysis import analyze_tokens, token_encoder, token_pipeline_scores
from explorer.text.i18n import t

from conftest import ROOT, commit
from explore_helpers import values

TEXT = "Maria Kowalczyk visited Hanoi last week."
DONE = ("pages/home.py", "pages/pooled.py", "pages/encoder.py", "pages/dropout.py", "pages/compare.py",
        "pages/whatif.py", "pages/tokens.py")


def _page(folder, page: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(folder), "text": TEXT, "lang": lang}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page).run()
    return at


@pytest.mark.parametrize("page", DONE)
def test_token_checkpoint_pages_render_without_error(token_checkpoint, page):
    at = _page(token_checkpoint, page)
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    assert t("home.intro", "en") not in [c.value for c in at.caption]  # its boxes are a sentence classifier's


def test_pooled_page_shows_every_token_vector(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    e = token_encoder(ck, TEXT)
    at = _page(token_checkpoint, "pages/pooled.py")
    strips = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(strips["data"][0]["y"]) == len(e.shown)  # one strip per token
    cos = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert len(cos["data"][0]["x"]) == len(e.shown)
    # the last layer's vector of each token is the head's input: the head on it gives analyze_tokens' logits
    a = analyze_tokens(ck, build_head(ck), TEXT)
    with torch.inference_mode():
        got = ck.model.classifier(torch.as_tensor(e.hidden_states[-1])).numpy()
    np.testing.assert_allclose(got, a.logits, atol=1e-4)


def test_encoder_page_reads_the_head_out_per_token(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    at = _page(token_checkpoint, "pages/encoder.py")
    k = next(i for i, sp in enumerate(a.special) if not sp)
    at.selectbox(key="encoder_token").set_value(k + 1).run()
    assert not at.exception and not at.error
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)

    lines = np.array([values(tr["y"]) for tr in spec["data"]]).T  # (layers+1, labels)
    np.testing.assert_allclose(lines, token_pipeline_scores(a.layer_logits[:, k + 1]), atol=1e-6)
    assert at.get("iframe") and len(at.get("plotly_chart")) == 2  # the head view and the model view


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_token_pages_in_both_languages(token_checkpoint, lang):
    for page in DONE[1:]:
        at = _page(token_checkpoint, page, lang)
        assert not at.exception and not at.error
        assert all(not c.value.startswith("tokenpages.") for c in at.caption)
        assert all(not i.value.startswith("tokenpages.") for i in at.info)


def test_dropout_page_samples_the_picked_tokens_tag(token_checkpoint):
    from explorer.explain import dropout

    ck = load_checkpoint(str(token_checkpoint))
    head, e = build_head(ck), token_encoder(ck, TEXT)
    a = analyze_tokens(ck, head, TEXT)
    at = _page(token_checkpoint, "pages/dropout.py")
    k = 3
    at.selectbox(key="dropout_token").set_value(k).run()
    assert not at.exception and not at.error
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    p, n = at.slider(key="dropout_p").value, at.slider(key="dropout_n").value
    mc = dropout.mc_dropout(head, e.hidden_states[-1][k:k + 1], p=p, samples=n, seed=0,
                            ptype="single_label_classification")
    assert len(spec["data"]) == len(a.labels) + 1  # a strip per tag, and the eval point
    for j in range(len(a.labels)):
        np.testing.assert_allclose(values(spec["data"][j]["y"]), mc.logits[:, j], atol=1e-5)
    np.testing.assert_allclose(values(spec["data"][-1]["y"]), a.logits[k], atol=1e-4)
    assert len(at.get("plotly_chart")) == 3  # samples of logits and probabilities, and one mask


def test_compare_page_runs_every_token_head_on_the_picked_token(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    a = analyze_tokens(ck, build_head(ck), TEXT)
    at = _page(token_checkpoint, "pages/compare.py")
    at.selectbox(key="compare_token").set_value(1).run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert len(table) == 2  # the checkpoint's own head and linear-per-token
    logits = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    own = next(tr for tr in logits if tr["name"].startswith("own"))
    np.testing.assert_allclose(values(own["y"]), a.logits[1], atol=1e-4)  # the own head on token 1: its tag's logits


def test_whatif_compares_the_tags_word_by_word(token_checkpoint):
    at = _page(token_checkpoint, "pages/whatif.py")
    at.text_area(key="whatif_text").set_value("Maria Kowalczyk visited Paris last week.").run()
    assert not at.exception and not at.error
    html = " ".join(h.proto.body for h in at.get("html"))
    assert html.count('data-legend="PER"') == 2  # both texts' entities, each with its legend
    rows = at.dataframe[0].value if at.dataframe else None
    table = rows if rows is not None else at.table[0].value
    cols = {k: t(f"tokenpages.col_{k}", "en") for k in ("word_a", "word_b", "tag_a", "tag_b", "changed")}
    swapped = table[table[cols["word_a"]] == "Hanoi"]
    assert list(swapped[cols["word_b"]]) == ["Paris"] and list(swapped[cols["tag_a"]]) == ["B-LOC"]
    kept = table[table[cols["word_a"]] == "visited"]
    assert list(kept[cols["tag_b"]]) == list(kept[cols["tag_a"]]) and not kept[cols["changed"]].any()


@pytest.mark.browser
def test_browser_reads_the_five_pages_for_a_token_checkpoint(browser, app_url, token_checkpoint):
    """The five pages as drawn for the NER checkpoint: no error box, and each one's own view (charts, the
    head view's frame, the tag table)."""
    from conftest import open_app, wait_idle

    ctx, pg = open_app(browser, app_url)
    try:
        side = pg.locator("[data-testid=stSidebar]")
        side.locator("[data-testid=stSelectbox]").filter(has_text=t("app.checkpoint", "en")).first.click()
        pg.get_by_role("option", name=t("app.other", "en"), exact=True).click()
        wait_idle(pg)
        field = side.locator("[data-testid=stTextInput]").filter(has_text=t("app.other_checkpoint", "en")).locator("input")
        commit(field, str(token_checkpoint), "Enter")
        seen = {}
        for slug, want in (("pooled-vector", ".js-plotly-plot"), ("dropout-effect", ".js-plotly-plot"),
                           ("compare-heads", ".js-plotly-plot"), ("inside-encoder", "iframe"),
                           ("what-if", "[data-testid=stDataFrame]")):
            side.locator(f"[data-testid=stSidebarNav] a[href$='/{slug}']").click()
            pg.wait_for_url(f"**/{slug}")
            wait_idle(pg)
            main = pg.locator("[data-testid=stMain]")
            main.locator(want).first.wait_for()
            seen[slug] = (main.locator("[data-testid=stAlertContentError]").count(), main.locator(want).count())
        assert all(errors == 0 and n > 0 for errors, n in seen.values()), seen
    finally:
        ctx.close()


def test_tokens_page_shows_a_token_classifiers_attention(token_checkpoint):
    at = _page(token_checkpoint, "pages/tokens.py")
    assert not at.exception and not at.error
    frame = at.get("iframe")[0].proto.srcdoc
    assert "plotly_hover" in frame and "maria" in frame.lower()  # the head view of the text's tokens
    assert len(at.get("plotly_chart")) == 1  # and the model view
