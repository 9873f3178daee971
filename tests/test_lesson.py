"""Teaching mode: lesson and quiz pages in both languages, quiz feedback, presenter view, handout."""
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.plots import label_bars
from explorer.teach import lesson
from explorer.teach.handout import handout_html
from explorer.text.i18n import t

ROOT = Path(__file__).resolve().parent.parent


def _app(lang: str, page: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_lesson_shows_every_step_with_live_panels(lang):
    at = _app(lang, "pages/lesson.py")
    titles = [s.value for s in at.subheader]
    assert titles == [t(f"lesson.{s}.title", lang) for s in lesson.STEPS]
    charts = at.get("plotly_chart")
    assert len(charts) >= 5
    # the probabilities panel shows the live softmax: sums to 1
    spec = [json.loads(c.proto.spec) for c in charts]
    titles = [s["layout"]["title"]["text"] for s in spec]
    assert t("home.probs_title", lang) in titles
    # the two inside-the-encoder steps: the head at every layer, and leave-one-word-out
    assert t("encoder.readout_chart", lang, kind=t("encoder.kind_softmax", lang)) in titles
    assert t("lesson.panel.drop_title", lang, label="positive") in titles


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_quiz_gives_correct_feedback(lang):
    at = _app(lang, "pages/quiz.py")
    assert len(lesson.QUIZ) >= 7
    q_right, q_wrong = lesson.QUIZ[0], lesson.QUIZ[1]
    at.radio(key=f"quiz_{q_right.key}").set_value(q_right.correct)
    at.radio(key=f"quiz_{q_wrong.key}").set_value((q_wrong.correct + 1) % 4)
    at.run()
    assert [s.value for s in at.success] == [f"{t('quiz.correct', lang)} {t(f'quiz.{q_right.key}.why', lang)}"]
    assert [e.value for e in at.error] == [f"{t('quiz.wrong', lang)} {t(f'quiz.{q_wrong.key}.why', lang)}"]
    assert at.metric[0].value == f"1/{len(lesson.QUIZ)}"


def test_a_locked_quiz_restarts_with_its_first_answers():
    at = _app("en", "pages/quiz.py", quiz_lock=True)
    q = lesson.QUIZ[0]
    wrong = (q.correct + 1) % lesson.N_OPTIONS
    at.radio(key=f"quiz_{q.key}").set_value(wrong).run()
    at.button(key="quiz_again").click().run()  # locked: a new order, the first answers kept
    assert at.radio(key=f"quiz_{q.key}").value == wrong and at.radio(key=f"quiz_{q.key}").disabled
    assert [m.value for m in at.metric] == [f"0/{len(lesson.QUIZ)}"]  # the first answers' score, still 0


def test_first_answers_come_back_from_a_cookie_and_a_forged_one_is_cut():
    first = {lesson.QUIZ[0].key: 2, lesson.QUIZ[5].key: 0}
    text = lesson.first_answers_text(first | {"nope": 1})
    assert lesson.read_first_answers(text) == first
    assert set(text) <= set("abcdefghijklmnopqrstuvwxyz_-.0123456789")  # a cookie's value, unquoted
    forged = f"{lesson.QUIZ[1].key}-{lesson.N_OPTIONS}.{lesson.QUIZ[2].key}-x.nope-1.;{lesson.QUIZ[3].key}-1"
    assert lesson.read_first_answers(forged) == {} and lesson.read_first_answers("") == {}


def test_presenter_view_shows_one_step_with_next_and_previous():
    at = _app("en", "pages/lesson.py", presenter=True)
    assert [s.value for s in at.subheader] == [t("lesson.tokenizer.title")]
    at.button(key="lesson_next").click().run()
    assert [s.value for s in at.subheader] == [t("lesson.encoder.title")]
    at.button(key="lesson_prev").click().run()
    assert [s.value for s in at.subheader] == [t("lesson.tokenizer.title")]
    assert not at.exception


def test_cls_vector_tracks_the_sentence_not_the_first_word(sentiment):
    a = analyze(sentiment, build_head(sentiment), "Terrible service, but the food was wonderful and cheap.")
    sims = lesson.cls_similarity(a.hidden_states, a.special)
    assert sims["to_mean"].shape == (a.hidden_states.shape[0],)
    # the last layer's [CLS] is closer to the mean of the words than to the first word
    assert sims["to_mean"][-1] > sims["to_first_word"][-1]


def test_token_head_scores_every_token_and_is_seeded(sentiment):
    a = analyze(sentiment, build_head(sentiment), "one two three")
    s = lesson.token_head_logits(a.hidden_states[-1], 3, seed=0)
    assert s.shape == (len(a.tokens), 3)
    np.testing.assert_array_equal(s, lesson.token_head_logits(a.hidden_states[-1], 3, seed=0))
    assert not np.allclose(s, lesson.token_head_logits(a.hidden_states[-1], 3, seed=1))


def test_parameter_counts_separate_head_from_encoder(minilm):
    counts = lesson.parameter_counts(minilm.model, build_head(minilm))
    assert counts["head"] == 384 * 384 + 384 + 384 * 2 + 2
    assert counts["encoder"] + 384 * 384 + 384 == sum(p.numel() for p in minilm.model.base_model.parameters())


def test_handout_is_standalone_html(sentiment):
    a = analyze(sentiment, build_head(sentiment), "I <b>love</b> it")
    doc = handout_html(a, [label_bars(a.labels, a.softmax, title="p", x_title="x", y_title="y")],
                       {k: k for k in ("title", "text", "checkpoint", "head", "prediction", "tokens", "label")})
    assert doc.startswith("<!doctype html>") and "&lt;b&gt;love" in doc
    assert "<script src=\"http" not in doc and "plotly" in doc.lower() and a.predicted in doc


def test_handout_adds_the_word_chart_for_the_prediction(sentiment):
    from explorer.teach.handout import handout_strings, handout_with_model
    from explorer.text.i18n import strings, t

    a = analyze(sentiment, build_head(sentiment), "I love this wonderful car")
    html = handout_with_model(sentiment, build_head(sentiment), a, [], handout_strings(strings("vi")))
    title = t("lesson.panel.drop_title", "vi", label=a.predicted)  # the lesson's step-10 chart: leave-one-out
    assert json.dumps(title)[1:-1] in html  # plotly embeds the figure as JSON
    assert "wonderful" in html and html.count(json.dumps(title)[1:-1]) == 1  # once, beside the lesson's last step
