"""What-if: word alignment, both texts attributed to the same label, dropping a word, leave-one-out."""
import numpy as np
import pytest

from explorer.explain import whatif
from explorer.explain.whatif import Word, align
from explorer.model.analysis import analyze
from explorer.model.heads import build_head

TEXT = "Unbelievably good acting, terrible plot."


def _words(*texts):
    return tuple(Word(k, w, float(k + 1)) for k, w in enumerate(texts))


def test_align_marks_equal_replace_delete_insert():
    rows = align(_words("a", "good", "film", "indeed"), _words("a", "bad", "film", "really", "indeed", "!"))
    assert [(r.op, r.a and r.a.text, r.b and r.b.text) for r in rows] == [
        ("equal", "a", "a"), ("replace", "good", "bad"), ("equal", "film", "film"), ("insert", None, "really"),
        ("equal", "indeed", "indeed"), ("insert", None, "!")]
    assert rows[3].difference == 4.0 and rows[2].difference == 0.0  # an absent word counts 0
    gone = align(_words("x", "y"), _words("y"))
    assert [r.op for r in gone] == ["delete", "equal"] and gone[0].difference == -1.0


def test_compare_explains_text_as_prediction_in_both_texts(sentiment):
    head = build_head(sentiment)
    same = whatif.compare_texts(sentiment, head, text_a=TEXT, text_b=TEXT)
    assert all(r.op == "equal" and r.difference == 0 for r in same.rows)
    edited = "Unbelievably bad acting, terrible plot!"
    r = whatif.compare_texts(sentiment, head, text_a=TEXT, text_b=edited)
    assert r.attr_a.target == r.attr_b.target == r.target == int(np.argmax(r.a.logits))
    assert r.b.predicted != r.a.predicted  # "bad" flips the prediction, yet B still explains A's label
    np.testing.assert_allclose(r.probs[1], analyze(sentiment, head, edited).softmax)
    ops = [(x.op, x.a and x.a.text, x.b and x.b.text) for x in r.rows]
    assert ("replace", "good", "bad") in ops and ("replace", ".", "!") in ops
    assert len(r.rows) == len(whatif.words(r.attr_a))
    # word scores are the token scores summed: completeness carries over to words
    assert sum(w.score for w in whatif.words(r.attr_b)) == pytest.approx(r.attr_b.scores.sum(), abs=1e-9)


def test_drop_word_cuts_its_characters(sentiment):
    assert whatif.drop_word(sentiment, TEXT, word_id=1) == "Unbelievably acting, terrible plot."
    assert whatif.drop_word(sentiment, TEXT, word_id=3) == "Unbelievably good acting terrible plot."
    assert whatif.drop_word(sentiment, TEXT, word_id=0) == "good acting, terrible plot."
    with pytest.raises(whatif.WhatIfError, match="not in the text"):
        whatif.drop_word(sentiment, TEXT, word_id=99)


@pytest.mark.parametrize("kind", ["own", "mean-linear"])
def test_leave_one_out_equals_one_analysis_per_dropped_word(tiny, kind):
    ck = tiny["bert"]
    head = build_head(ck, kind)
    a = analyze(ck, head, TEXT)
    names, change = whatif.leave_one_out(ck, head, a=a)
    assert names == ("unbelievably", "good", "acting", ",", "terrible", "plot", ".")
    target = int(np.argmax(a.logits))
    for k, (w, c) in enumerate(zip(names, change)):
        d = analyze(ck, head, whatif.drop_word(ck, TEXT, word_id=k))  # padded batch == one text at a time
        assert c == pytest.approx(a.softmax[target] - d.softmax[target], abs=1e-5)


def test_whatif_page_apptest(sentiment):
    from explore_helpers import open_page, titles

    at = open_page("whatif")
    assert not at.error and at.text_area(key="whatif_text").value == TEXT
    at.text_area(key="whatif_text").set_value("Unbelievably bad acting, terrible plot!").run()
    assert [m.value for m in at.metric] == ["positive", "neutral"]
    assert any("good" in h.proto.body and "line-through" in h.proto.body for h in at.get("html"))
    at.selectbox(key="whatif_drop").set_value(1).run()  # what a click on the bar of "good" sets
    assert at.code[0].value == "Unbelievably acting, terrible plot."
    want = analyze(sentiment, build_head(sentiment), "Unbelievably acting, terrible plot.").predicted
    assert at.metric[-1].value == want and "without the word" in titles(at)[-1]
    at.session_state["text_pair"] = "I disagree."  # the sidebar's text B of a sentence pair
    at.run()
    assert not at.exception and not at.error and "text B stays the same" in at.info[0].value
    assert at.selectbox(key="whatif_drop").value is None and not at.code  # the pick was for the other text
    at.text_area(key="whatif_text").set_value("   ").run()
    assert len(at.error) == 1 and "empty" in at.error[0].value and not at.exception


def test_leave_one_out_of_a_pair_drops_words_of_text_a_only(sentiment):
    head = build_head(sentiment)
    a = analyze(sentiment, head, "A fine film.", text_pair="I disagree.")
    names, drop = whatif.leave_one_out(sentiment, head, a=a)
    assert names == ("a", "fine", "film", ".")
    target = int(np.argmax(a.logits))
    d = analyze(sentiment, head, "A film.", text_pair="I disagree.")
    assert drop[1] == pytest.approx(a.softmax[target] - d.softmax[target], abs=1e-5)


def test_compare_a_pair_changes_text_a_and_keeps_text_b(sentiment):
    head = build_head(sentiment)
    r = whatif.compare_texts(sentiment, head, text_a="A fine film.", text_b="A dull film.", text_pair="I disagree.")
    assert r.a.text_pair == r.b.text_pair == "I disagree."
    assert [(x.op, x.a.text, x.b.text) for x in r.rows] == [
        ("equal", "a", "a"), ("replace", "fine", "dull"), ("equal", "film", "film"), ("equal", ".", ".")]
    np.testing.assert_allclose(r.b.logits, analyze(sentiment, head, "A dull film.", text_pair="I disagree.").logits)


def test_diff_html_marks_changes_and_escapes():
    from explorer.plots.whatif import diff_html

    html = diff_html(align(_words("a", "<b>", "film", "!"), _words("a", "great", "film", "!")))
    assert "&lt;b&gt;" in html and "<b>" not in html and "line-through" in html and ">great<" in html
    assert html.count(" !") == 0 and "film!" in html  # no space before punctuation


def test_diff_text_keeps_spaces_between_words():
    import re

    from explorer.plots.whatif import diff_html

    words = lambda s: tuple(Word(k, w, 0.0) for k, w in enumerate(s.split()))  # noqa: E731
    html = diff_html(align(words("I love this flight but"), words("I hate this flight and")))
    assert re.sub("<[^>]+>", "", html) == "I love hate this flight but and"
    html = diff_html(align(words("i love this flight"), words("terrible flight !")))
    assert re.sub("<[^>]+>", "", html) == "i love this terrible flight!"


def test_whatif_follows_the_sidebar_until_edited(sentiment):
    from explore_helpers import open_page

    at = open_page("whatif", text="I love this flight.")
    assert any("Following the sidebar" in c.value for c in at.caption)
    for text in ("The food was cold.", "Great crew, smooth landing."):  # the sidebar's text moves on twice
        at.session_state["text"] = text
        at.run()
        assert at.text_area(key="whatif_text").value == text
        assert not any("line-through" in h.proto.body for h in at.get("html"))  # compares the text with itself
    at.text_area(key="whatif_text").set_value("Rude crew, late landing.").run()
    assert not any("Following the sidebar" in c.value for c in at.caption)
    at.session_state["text"] = "Another sentence."
    at.run()  # an edit is kept while the sidebar moves on, and the button offers following again
    assert at.text_area(key="whatif_text").value == "Rude crew, late landing."
    at.button(key="whatif_copy").click().run()
    assert at.text_area(key="whatif_text").value == "Another sentence."
    assert any("Following the sidebar" in c.value for c in at.caption)


def test_batched_leave_one_out_under_sdpa_equals_one_eager_analysis_at_a_time(sentiment):
    """The Lesson's leave-one-out runs padded batches under the sdpa kernel; the reference is one eager
    analysis per text without the word, as the What-if page's "drop this word" shows it. Tolerance: the two
    kernels' float32 logits agree to kernel.TOLERANCE (1e-5, measured <= 2.1e-6 on this model); a softmax
    moves by at most half a logit change, and each score is a difference of two probabilities, so 2e-5
    bounds it with room for another CPU's summation order. The `limit` keeps the first words' numbers."""
    from explorer.model.kernel import TOLERANCE, attention_kernel

    head = build_head(sentiment)
    text = ("The plot wandered, and the ending dragged; still, the acting was superb, the music lovely, "
            "and I would happily watch it again with friends.")
    a = analyze(sentiment, head, text)
    seen = []
    with attention_kernel(sentiment, "eager"):  # the caller's kernel does not leak into leave-one-out
        names, change = whatif.leave_one_out(sentiment, head, a=a, progress=lambda f, _m: seen.append(f))
    assert len(names) == whatif.loo_words(a) > 20 and seen[-1] == 1.0
    target = int(np.argmax(a.logits))
    one_by_one = np.array([a.softmax[target] - analyze(sentiment, head, whatif.drop_word(sentiment, text, word_id=k))
                           .softmax[target] for k in range(len(names))])
    np.testing.assert_allclose(change, one_by_one, atol=2 * TOLERANCE, rtol=0)
    assert np.abs(change).max() > 100 * TOLERANCE  # the words matter: the comparison is not of zeros
    first, part = whatif.leave_one_out(sentiment, head, a=a, limit=5)
    assert first == names[:5]
    np.testing.assert_allclose(part, change[:5], atol=2 * TOLERANCE, rtol=0)


@pytest.mark.parametrize("seconds_per_row, parts", [(0.3, [1, 3, 3, 1]), (0.6, [1] * 8), (0.01, [1, 7])])
def test_leave_one_out_as_a_job_reports_at_least_every_heard_s(tiny, monkeypatch, seconds_per_row, parts):
    """With progress (a job), each forward takes as many rows as the last one's seconds per row allow within
    jobs.HEARD_S (the first row alone, to measure), so a Stop is heard within about that; the numbers are the
    page's. A clock that each row moves by `seconds_per_row` stands in for a loaded CPU."""
    from explorer.model import inference
    from explorer.runtime.jobs import HEARD_S

    ck = tiny["bert"]
    head = build_head(ck, "own")
    a = analyze(ck, head, TEXT)
    want = whatif.leave_one_out(ck, head, a=a)  # no progress: the page's own forwards, whole batches
    now = [0.0]
    monkeypatch.setattr(inference.time, "perf_counter", lambda: now[0])
    seen, calls = [], []
    real = ck.tokenizer.__class__.__call__

    def tokenize(self, texts, *args, **kw):  # each forward's rows: the clock moves by their cost
        if isinstance(texts, list) and kw.get("return_tensors") == "pt":
            seen.append(len(texts))
            now[0] += seconds_per_row * len(texts)
        return real(self, texts, *args, **kw)

    monkeypatch.setattr(ck.tokenizer.__class__, "__call__", tokenize)
    got = whatif.leave_one_out(ck, head, a=a, progress=lambda frac, msg: calls.append(frac))
    assert seen == parts and HEARD_S == 1.0  # 8 texts (the text, then each of 7 words cut) in one batch
    assert calls == pytest.approx(np.cumsum(parts) / sum(parts))  # a report after each forward
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], atol=1e-6)
