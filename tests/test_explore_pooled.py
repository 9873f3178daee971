"""Pooled page: vectors, cosines, head sizes on tiny models; AppTest on the real ones."""
import numpy as np
import pytest

from explorer.explain import vectors
from explorer.model.analysis import analyze
from explorer.model.heads import HEAD_KINDS, build_head

from explore_helpers import TEXT, open_page, specs, titles, values


@pytest.mark.parametrize("kind", list(HEAD_KINDS))
def test_vectors_and_cosines(tiny, kind):
    ck = tiny["bert"]
    a = analyze(ck, build_head(ck, kind), TEXT)
    v = vectors.vectors(a)
    np.testing.assert_allclose(v["first token"], a.cls_hidden)
    np.testing.assert_allclose(v["mean pool"], a.hidden_states[-1].mean(0), rtol=1e-6)
    m = vectors.cosine_matrix(v)
    np.testing.assert_allclose(np.diag(m), 1.0, atol=1e-6)
    np.testing.assert_allclose(m, m.T, atol=1e-7)
    if kind == "bert":  # tanh of the pooler: bounded, and not the raw first token
        assert np.abs(v["head pooled"]).max() <= 1 and m[0, 1] < 0.999
    if kind == "cls-linear":
        np.testing.assert_allclose(v["head pooled"], v["first token"])


def test_head_rows_and_lm_size(sentiment, minilm):
    hd = build_head(sentiment)
    rows = vectors.head_rows(hd)
    assert [r["step"] for r in rows] == ["first token", "bert.pooler.dense", "tanh", "dropout", "classifier"]
    cls = rows[-1]
    assert cls["shape"] == "384×3+3" and cls["params"] == 384 * 3 + 3 and cls["pretrained"]
    assert not vectors.head_rows(build_head(minilm))[-1]["pretrained"]  # minilm's classifier is new
    assert vectors.lm_head_params(30522, 384) == 30522 * 384 + 30522


def test_pooled_page_apptest():
    at = open_page("pooled")
    s = specs(at)
    assert len(s) == 4 and not at.error
    strips = s[0]["data"][0]
    assert len(strips["y"]) == 3 and values(strips["z"]).shape == (3, 384)
    size = s[3]
    lm_bar = size["data"][-1]
    assert values(lm_bar["y"])[0] == 30522 * 384 + 30522
    assert any("Cosine" in x for x in titles(at))
    assert "dimension %{x}" in strips["hovertemplate"]  # the axis's own word, translated below
    at.session_state["lang"] = "vi"
    at.run()
    assert "chiều %{x}" in specs(at)[0]["data"][0]["hovertemplate"]
    at.session_state["lang"] = "en"
    at.session_state["checkpoint"], at.session_state["head"] = "minilm", "roberta"
    at.run()
    assert not at.exception and at.warning  # random head flagged
