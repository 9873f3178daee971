"""Tokens page: token helpers on tiny models, attention invariants on the real model, AppTest."""
from functools import partial

import numpy as np
import pytest

from explorer import plots
from explorer.model import attention
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.tokens import cls_vs_mean, rollout_off_cls, token_rows, without_special
from explorer.text import i18n

from explore_helpers import TEXT, open_page, specs, titles, values

T = partial(i18n.t, lang="en")


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_token_rows_mark_special_and_subwords(tiny, arch):
    ck = tiny[arch]
    a = analyze(ck, build_head(ck), TEXT)
    rows = token_rows(a)
    assert [r["token"] for r in rows] == list(a.tokens)
    assert rows[0]["special"] and rows[-1]["special"] and not rows[1]["special"]
    # "Unbelievably" splits into pieces with the same word id
    assert any(r["continues_word"] for r in rows)
    assert not any(r["continues_word"] for r in rows if r["special"])


def test_without_special_renormalises():
    v = np.array([[0.5, 0.2, 0.2, 0.1]])
    out = without_special(v, (True, False, False, True))
    np.testing.assert_allclose(out, [[0.5, 0.5]])


def test_attention_rows_sum_to_one_and_mixing_panel(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    np.testing.assert_allclose(a.attentions.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(a.rollout.sum(-1), 1.0, atol=1e-9)
    off = rollout_off_cls(a.rollout)
    assert off.shape == (6,) and np.all((off > 0) & (off < 1))
    assert np.all(np.diff(off) > -1e-9) or off[-1] > off[0]  # mixing grows with depth
    cos = cls_vs_mean(a.hidden_states)
    assert cos.shape == (7,) and np.all(np.abs(cos) <= 1 + 1e-6)


def test_page_figures_hide_special_renormalised(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT, flow=True)
    figs = plots.attention.tokens_page(a, 6, head=None, hide_special=True, t=T)
    assert set(figs) == {"cls", "rollout", "flow", "highlight", "mixing"}
    z = np.array(figs["rollout"].data[0].z)
    assert z.shape == (6, len(a.tokens) - 2)
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-9)
    assert "renormalised" in figs["cls"].layout.title.text
    for f in figs.values():
        assert f.layout.title.text and f.layout.xaxis.title.text and f.layout.yaxis.title.text
    one_head = plots.attention.tokens_page(a, 2, head=3, hide_special=False, t=T)["cls"]
    np.testing.assert_allclose(np.array(one_head.data[0].z), a.cls_attention[:, 3], atol=1e-6)


def test_tokens_page_apptest():
    at = open_page("tokens")
    # The token table showed None as a special token's word, and three checkbox columns
    table = at.dataframe[0].value
    assert list(table.columns) == ["position", "token", "id", "word", "kind"]
    assert table["word"].tolist()[0] == "" and "None" not in table["word"].astype(str).tolist()
    assert table["kind"].tolist()[0] == "special" and "continues word" not in table["kind"].tolist()[:2]
    assert any("per head" in x for x in titles(at)) and not any("max-flow from" in x for x in titles(at))
    at.toggle(key="tokens_hide_special").set_value(False).run()  # hidden by default (test_heatmap_scale.py)
    n = len(specs(at)[0]["data"][0]["x"])
    at.toggle(key="tokens_flow").set_value(True).run()
    flow = next(sp for sp in specs(at) if "max-flow from" in sp["layout"]["title"]["text"])
    ck = load_checkpoint("minilm-sentiment")
    want = attention.flow(analyze(ck, build_head(ck), TEXT).attentions)  # (layers, seq)
    np.testing.assert_allclose(values(flow["data"][0]["z"]), want, atol=1e-6)
    at.selectbox(key="tokens_head").set_value(2).run()
    assert not at.exception and not at.error
    assert any("max-flow from [CLS]" in x for x in titles(at))
    assert "head 2, per layer" in titles(at)[0]
    at.toggle(key="tokens_hide_special").set_value(True).run()
    assert len(specs(at)[0]["data"][0]["x"]) == n - 2
    for ck, kind in (("minilm", "roberta"), ("minilm-sentiment", "mean-linear")):
        at.session_state["checkpoint"], at.session_state["head"] = ck, kind
        at.run()
        assert not at.exception and not at.error and len(specs(at)) == 5
