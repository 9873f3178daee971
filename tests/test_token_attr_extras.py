"""Token Attributions: the word view (the sentence page's word merge), the two downloads and the
faithfulness table for the explained token, whose probability is read wherever deletions move it."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from explorer.explain import faithfulness
from explorer.explain.attribution import METHODS, attribute
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.text import i18n

from test_token_page import TEXT, _array
from test_token_ui import _attributions

pytestmark = [pytest.mark.slow]
TOKEN = 3  # a subword of "Kowalczyk" in the fixture's tokenizer: its word has several tokens


def _pick(at, token: int = TOKEN):
    picked = next(o for o in at.selectbox(key="attr_token_pick").options if o.startswith(f"token #{token} "))
    at.selectbox(key="attr_token_pick").set_value(picked).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_word_view_merges_the_token_scores_as_the_sentence_page_does(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    head = build_head(ck)
    want = attribute(ck, head, text=TEXT, method="lig", target=None, target_token=TOKEN)
    words, scores = want.words()
    assert len(words) < len(want.tokens)  # some word has several subwords: merging changes the view
    at = _pick(_attributions(token_checkpoint))
    at.radio(key="attr_level").set_value("word").run()
    assert not at.exception and not at.error
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)
    shown = [y.rsplit(" #", 1) for y in bars["data"][0]["y"]]  # each bar: "word #position"
    assert sorted(w for w, _ in shown) == sorted(words)
    got = {int(k): x for (_, k), x in zip(shown, _array(bars["data"][0]["x"]))}
    np.testing.assert_allclose([got[k] for k in range(len(words))], scores, atol=1e-4)
    assert bars["layout"]["yaxis"]["title"]["text"] == i18n.t("attributions.level_word", "en")


def test_token_page_offers_the_csv_and_the_html(token_checkpoint):
    at = _pick(_attributions(token_checkpoint))
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == [i18n.t("attributions.csv", "en"), i18n.t("attributions.html", "en")]
    assert all(d.proto.ignore_rerun for d in at.get("download_button"))  # on_click="ignore"


def _by_hand(ck, head, a, fractions=faithfulness.FRACTIONS) -> tuple[float, float]:
    """AOPC read straight from the HF model: delete (or keep only) the top tokens, never the special ones
    nor the explained token, and read softmax of its logits where the token now sits."""
    ids, special, token = list(a.token_ids), list(a.special), a.target_token
    ranked = sorted((i for i, s in enumerate(special) if not s and i != token), key=lambda i: -float(a.scores[i]))

    def prob(keep: list[int]) -> float:
        with torch.inference_mode():
            logits = ck.model(input_ids=torch.tensor([[ids[i] for i in keep]])).logits[0]
        return float(torch.softmax(logits[keep.index(token)].double(), -1)[a.target])

    full = prob(list(range(len(ids))))
    comp, suff = [], []
    for f in fractions:
        top = set(ranked[:max(1, math.ceil(f * len(ranked) - 1e-9))])
        comp.append(full - prob([i for i in range(len(ids)) if i not in top]))
        suff.append(full - prob([i for i in range(len(ids)) if special[i] or i == token or i in top]))
    return float(np.mean(comp)), float(np.mean(suff))


def test_faithfulness_of_a_token_target_matches_the_hf_model(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    head = build_head(ck)
    a = attribute(ck, head, text=TEXT, method="saliency", target=None, target_token=TOKEN)
    np.testing.assert_allclose(faithfulness.of(ck, head, a=a), _by_hand(ck, head, a), atol=1e-5)
    rows = faithfulness.compare_methods(ck, head, text=TEXT, target_token=TOKEN, methods=("saliency", "lig"))
    assert [r.method for r in rows] == ["saliency", "lig"] and rows[1].completeness_error is not None


def test_token_page_draws_the_faithfulness_table(token_checkpoint):
    at = _pick(_attributions(token_checkpoint))
    at.button(key="attr_token_faith_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    comp = i18n.t("attributions.comprehensiveness_col", "en")
    (table,) = [d.value for d in at.dataframe if comp in d.value.columns]
    assert len(table) == len(METHODS) and np.isfinite(table[comp]).all()  # one row per method
    assert i18n.t("tokenhead.faith_intro", "en") in [c.value for c in at.caption]


def test_lesson_steps_about_heads_use_the_token_head(token_checkpoint):
    from test_token_page import _lesson

    ck = load_checkpoint(str(token_checkpoint))
    at = _lesson(token_checkpoint)
    titles = [h.value for h in at.subheader]
    assert titles == [i18n.t(f"lesson.{s}.title", "en") for s in ("head", "new_head", "token_heads")]
    size = i18n.t("lesson.panel.size_col", "en")
    (steps,) = [d.value for d in at.dataframe if size in d.value.columns]
    # the token head's steps (every token's state, dropout, classifier): the hidden size, then the labels
    hidden = ck.model.config.hidden_size
    assert steps[size].tolist() == [hidden] * (len(build_head(ck).steps) - 1) + [len(ck.labels)]
    assert len(steps) == 3
    name = i18n.t("lesson.panel.name_col", "en")
    (params,) = [d.value for d in at.dataframe if name in d.value.columns]
    assert params[name].tolist() == ["classifier"]  # HF's token head: one linear layer on every token
    assert params[i18n.t("lesson.panel.params_col", "en")].tolist() == [
        sum(p.numel() for p in ck.model.classifier.parameters())]
    assert [s.value for s in at.success] == [i18n.t("lesson.panel.all_pretrained", "en")]  # a trained head


def test_lesson_on_a_token_checkpoint_in_vietnamese(token_checkpoint):
    from test_token_ui import _open

    at = _open(token_checkpoint, "lesson", lang="vi")
    assert not at.error and i18n.t("tokenhead.lesson_head_body", "vi") in [m.value for m in at.markdown]
