"""The teaching fixes: a quiz not passed by length, a pipeline chain and a handout that name the
selected head, a handout chart without special tokens, and one Vietnamese word for "layer"."""
import re

import pytest

from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.teach import handout, lesson
from explorer.text.i18n import catalog, strings, t
from tests.test_lesson import _app
from explore_helpers import chain_boxes

# Picking by length: chance is 1 in N_OPTIONS; allow one question above it (12 questions: at most 4 right).
LENGTH_BOUND = len(lesson.QUIZ) / lesson.N_OPTIONS + 1


# ---- 3: the quiz ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "vi"])
@pytest.mark.parametrize("pick", [max, min], ids=["longest", "shortest"])
def test_picking_by_length_scores_no_better_than_chance(lang, pick):
    right = 0
    for q in lesson.QUIZ:
        options = [t(f"quiz.{q.key}.o{i}", lang) for i in range(lesson.N_OPTIONS)]
        right += lesson.is_correct(q, pick(range(lesson.N_OPTIONS), key=lambda i: len(options[i])))
        # and no option gives itself away by length: every distractor within 0.6-1.5 x the answer
        answer = len(options[q.correct])
        assert all(0.6 <= len(o) / answer <= 1.5 for o in options), (lang, q.key, [len(o) for o in options])
    assert right <= LENGTH_BOUND, (lang, pick.__name__, right)


def test_options_are_shuffled_per_question_and_seed():
    orders = [lesson.option_order(n, seed=7) for n in range(len(lesson.QUIZ))]
    assert all(sorted(o) == list(range(lesson.N_OPTIONS)) for o in orders)
    assert orders == [lesson.option_order(n, seed=7) for n in range(len(lesson.QUIZ))]  # a rerun keeps it
    assert orders != [lesson.option_order(n, seed=8) for n in range(len(lesson.QUIZ))]
    shown_at = {o.index(q.correct) for o, q in zip(orders, lesson.QUIZ)}
    assert len(shown_at) >= 3  # the right answer's place is not constant
    # over many sessions the right answer sits at every place about equally often
    places = [lesson.option_order(n, s).index(q.correct) for s in range(200) for n, q in enumerate(lesson.QUIZ)]
    assert all(abs(places.count(p) / len(places) - 0.25) < 0.03 for p in range(lesson.N_OPTIONS))


def test_quiz_page_shows_the_sessions_order_and_locks_first_answers():
    at = _app("en", "pages/quiz.py", quiz_seed=11)
    q0, q1 = lesson.QUIZ[0], lesson.QUIZ[1]
    radio = at.radio(key=f"quiz_{q0.key}")
    assert radio.options == [t(f"quiz.{q0.key}.o{i}") for i in lesson.option_order(0, 11)]
    assert not [w for w in at.get("toggle") if w.key == "quiz_lock"]  # no student's own switch
    assert t("quiz.lock_how") in [c.value for c in at.caption]
    at.session_state["quiz_lock"] = True  # as a teacher's ?lock=1 link sets it (teach.links)
    at.run()
    assert t("links.locked_by_link") in [c.value for c in at.caption]
    wrong = (q0.correct + 1) % lesson.N_OPTIONS
    at.radio(key=f"quiz_{q0.key}").set_value(wrong).run()
    assert at.radio(key=f"quiz_{q0.key}").disabled  # locked at once: the first answer counts
    at.radio(key=f"quiz_{q1.key}").set_value(q1.correct).run()
    at.session_state[f"quiz_{q0.key}"] = q0.correct  # a changed answer (e.g. a stale browser tab)
    at.run()
    assert at.radio(key=f"quiz_{q0.key}").value == wrong
    # Locked, the answers are the first ones: one score, shown once
    assert [(m.label, m.value) for m in at.metric] == [(t("quiz.first_score"), f"1/{len(lesson.QUIZ)}")]
    assert t("quiz.locked") in [c.value for c in at.caption]
    # unlocked, an answer can change; the first answers' score stays what the class first said
    at.session_state["quiz_lock"] = False
    at.run()
    at.radio(key=f"quiz_{q0.key}").set_value(q0.correct).run()
    assert [(m.label, m.value) for m in at.metric] == [(t("quiz.score_now"), f"2/{len(lesson.QUIZ)}"),
                                                       (t("quiz.first_score"), f"1/{len(lesson.QUIZ)}")]
    assert all(str(len(lesson.QUIZ)) not in m.label for m in at.metric)  # the score is in the value, not twice
    at.button(key="quiz_again").click().run()
    assert at.radio(key=f"quiz_{q0.key}").value is None and at.session_state["quiz_seed"] != 11
    assert [m.value for m in at.metric] == [f"0/{len(lesson.QUIZ)}", f"0/{len(lesson.QUIZ)}"]


# ---- 10: the chain names the selected head ----------------------------------------------------------

def _chain(at) -> dict[str, str]:
    return dict(chain_boxes(at))


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_chain_names_mean_pooling_and_the_heads_modules(lang):
    at = _app(lang, "pages/home.py", head="mean-linear")
    chain = _chain(at)
    assert t("home.pooled_mean", lang) in chain and t("home.step_cls", lang) not in chain
    assert chain[t("home.step_head", lang)] == "dropout → classifier"
    assert "[CLS]" not in t("home.intro", lang) and "first token" not in t("home.intro", lang)


def test_chain_names_the_checkpoints_own_modules_not_its_architecture():
    at = _app("en", "pages/home.py", head="own")
    chain = _chain(at)
    assert chain[t("home.step_head")] == "bert.pooler.dense → tanh → dropout → classifier"
    assert chain[t("home.pooled_first", token="[CLS]")] == t("home.vector", n=384)  # plain text in the diagram


# ---- 10, 11: the handout ----------------------------------------------------------------------------

VI_DOC = handout.handout_strings(strings("vi"))


@pytest.fixture(scope="module")
def vi_handout(sentiment):
    head = build_head(sentiment, "mean-linear")
    a = analyze(sentiment, head, "I love this wonderful car")
    return handout.handout_with_model(sentiment, head, a, [], VI_DOC)


def test_handout_names_the_head_by_its_steps_in_the_language(vi_handout):
    assert "mean-linear" not in vi_handout and "mean pool" not in vi_handout
    assert f"{t('app.step_mean', 'vi')} (384) → dropout (384) → classifier (3)" in vi_handout


def test_handout_word_chart_lists_words_only_with_room_for_labels(sentiment, vi_handout):
    from explorer.explain.whatif import leave_one_out
    from explorer.teach.figures import step_figures

    head = build_head(sentiment)
    a = analyze(sentiment, head, "Awful. I love it")
    [(_, lesson_fig)] = step_figures("ablation", a, lambda k, **kw: t(k, "vi", **kw),
                                     drops=leave_one_out(sentiment, head, a=a))
    fig = handout.for_paper(lesson_fig)  # as the handout draws it
    labels = list(fig.data[0].y)
    assert sorted(y.split(" #")[0] for y in labels) == sorted(["awful", ".", "i", "love", "it"])  # no [CLS], [SEP]
    assert fig.layout.yaxis.automargin is True and fig.layout.yaxis.title.text == t("lesson.panel.word", "vi")
    assert "wonderful #" in vi_handout and '"[CLS] #' not in vi_handout and '"automargin":true' in vi_handout


# ---- 14: one Vietnamese word for "layer" ------------------------------------------------------------

def test_vietnamese_says_tang_for_layer_everywhere():
    vi = catalog("vi").messages
    layer = [k for k, m in vi.items() if re.search(r"\blayers?\b", m.id if isinstance(m.id, str) else m.id[0], re.I)]
    assert len(layer) > 20
    assert [k for k in layer if "lớp" in str(vi[k].string).lower()] == []
    assert t("encoder.layer", "vi") == "Tầng"


# ---- 4: presenter view ------------------------------------------------------------------------------

def test_presenter_figures_are_laid_out_at_the_larger_type():
    from explorer.plots import label_bars
    from explorer.plots.common import PRESENTER_FONT, PRESENTER_TITLE, PRESENTER_TITLE_CHARS, presenter

    title = "Logits per label (raw scores, not probabilities), and a title long enough to wrap"
    fig = label_bars(["a", "b"], [1.0, 2.0], title=title, x_title="label", y_title="logit")
    big = presenter(fig)
    assert fig.layout.title.text == title  # the original is untouched
    lines = big.layout.title.text.split("<br>")
    assert len(lines) > 1 and all(len(line) <= PRESENTER_TITLE_CHARS for line in lines)
    assert big.layout.font.size == PRESENTER_FONT and big.layout.title.font.size == PRESENTER_TITLE
    assert big.layout.height > fig.layout.height and big.layout.margin.t > fig.layout.margin.t
    assert big.layout.xaxis.automargin and big.layout.yaxis.automargin


def test_turning_presenter_view_on_opens_the_lesson_at_step_one():
    at = _app("en", "pages/lesson.py", lesson_step=9)
    at.toggle(key="presenter").set_value(True).run()
    assert [s.value for s in at.subheader] == [t(f"lesson.{lesson.STEPS[0]}.title")]
