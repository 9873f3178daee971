"""The What-if page's "Find the smallest change that flips it" (AppTest, English and Vietnamese): a queued job, the
edited text with each edit marked, the probabilities before and after, the head's view, and "use this text"."""
from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch

import explorer
from explorer.text.i18n import t

torch.set_num_threads(1)
TEXT = "I love this movie, it is wonderful"


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_job_marks_the_edits_shows_the_head_and_uses_the_text(sentiment, lang):
    from explore_helpers import open_page, specs, titles, values

    at = open_page("whatif", text=TEXT)
    at.session_state["lang"] = lang
    at.run()
    assert t("counterfactual.title", lang) in [s.value for s in at.subheader]
    assert not at.get("html") or not any("cf-delete" in h.proto.body for h in at.get("html"))  # nothing before asked
    at.button(key="cf_find").click().run()
    assert not at.exception and not at.error
    want = explorer.counterfactual(sentiment, TEXT)  # the page's picks: the own head, seed 0, any other label
    assert want.flipped
    done = t("counterfactual.flipped", lang, edits=len(want.edits), passes=want.forward_passes,
             before=want.predicted_before, after=want.predicted_after)
    assert [s.value for s in at.success] == [done]
    marked = next(h.proto.body for h in at.get("html") if "cf-delete" in h.proto.body)
    assert marked.startswith(want.marked_html(0))
    for e in want.edits:  # each edit marked: the old word struck through, a replacement's new word beside it
        assert f">{e.old}</del>" in marked and (not e.new or f">{e.new}</ins>" in marked)
    assert t("counterfactual.legend", lang) in marked
    # without the new words and the marks, the marked text is the original
    assert html.unescape(re.sub("<[^>]+>", "", re.sub(" <ins[^>]*>.*?</ins>", "", want.marked_html(0)))) == TEXT
    probs = next(s for s in specs(at) if s["layout"]["title"]["text"] == t("counterfactual.probs_title", lang))
    np.testing.assert_allclose(values(probs["data"][0]["y"]), want.before, atol=1e-6)
    np.testing.assert_allclose(values(probs["data"][1]["y"]), want.after, atol=1e-6)
    assert [m.value for m in at.metric][-2:] == [want.predicted_before, want.predicted_after]
    # how the head saw it: its steps, the pooled vectors, each label's logit change, the last layer's split
    assert t("counterfactual.head_title", lang) in [s.value for s in at.subheader]
    steps = next(d.value for d in at.dataframe if t("counterfactual.col_step", lang) in d.value.columns)
    assert list(steps[t("counterfactual.col_step", lang)]) == [s["name"] for s in want.head["steps"]]
    changes = next(d.value for d in at.dataframe if t("counterfactual.col_logit_change", lang) in d.value.columns)
    np.testing.assert_allclose(changes[t("counterfactual.col_logit_change", lang)],
                               [want.head["logit_change"][n] for n in sentiment.labels], atol=1e-6)
    assert t("counterfactual.pooled_title", lang) in titles(at)
    assert any(x.startswith(t("counterfactual.split_title", lang, label="")[:12]) for x in titles(at))
    at.button(key="cf_use").click().run()
    assert at.session_state["text"] == want.text and not at.exception


def test_a_target_and_the_closest_result(sentiment):
    from explore_helpers import open_page

    text = "Best day ever! So happy and thankful, love you all, great friends, wonderful family, amazing food"
    at = open_page("whatif", text=text)
    assert at.selectbox(key="cf_target").options == ["any other label", "negative", "neutral"]  # not "positive"
    at.number_input(key="cf_max_edits").set_value(1).run()
    at.button(key="cf_find").click().run()
    assert not at.exception
    assert at.warning and "Nothing within 1 edit" in at.warning[-1].value  # said so, the closest shown
    assert any("cf-delete" in h.proto.body for h in at.get("html"))
