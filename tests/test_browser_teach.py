"""Real browser, a class's tools in English and Vietnamese: the quiz's lock cannot be undone by a student, and
the handout draws each lesson step's chart as the lesson page does."""
import contextlib

import pytest

from explorer.teach import lesson
from explorer.text.i18n import t

from conftest import PlaywrightTimeout, open_link, wait_idle

pytestmark = pytest.mark.browser


def _first_score(page) -> str:
    metric = page.locator("[data-testid=stMetric]").filter(has_text=t("quiz.first_score", page.lang))
    return metric.locator("[data-testid=stMetricValue]").inner_text().strip()


def _pick(page, question: int, option: int) -> None:
    """Click option `option` (the catalog's index) of question number `question`, as a student would; a
    disabled option takes no click (a short wait, then on)."""
    q = lesson.QUIZ[question]
    label = page.locator("[data-testid=stRadio]").nth(question).locator("label").filter(
        has_text=t(f"quiz.{q.key}.o{option}", page.lang))
    with contextlib.suppress(PlaywrightTimeout):
        label.click(timeout=3_000)
    wait_idle(page)


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_a_locked_quiz_keeps_first_answers_through_start_again(browser, app_url, lang):
    """The walk of the issue: on a teacher's locked link, Q1 answered wrong, "start again", Q1 answered right.
    The first answer stays picked and locked, and the first-answer score stays 0."""
    ctx, page = open_link(browser, f"{app_url}/review-quiz?lang={lang}&lock=1")
    page.lang = lang
    try:
        n, q1 = len(lesson.QUIZ), lesson.QUIZ[0]
        wrong = next(i for i in range(lesson.N_OPTIONS) if i != q1.correct)
        _pick(page, 0, wrong)
        assert _first_score(page) == f"0/{n}"
        again = page.get_by_role("button", name=t("quiz.again", lang))
        if again.count():  # where restarting is offered, a student uses it
            again.click()
            wait_idle(page)
        _pick(page, 0, q1.correct)
        assert _first_score(page) == f"0/{n}"
        options = page.locator("[data-testid=stRadio]").first.locator("[data-testid=stRadioOption]")
        shown = [(o.inner_text().strip(), o.get_attribute("data-selected"), o.get_attribute("data-disabled"))
                 for o in options.all()]
        assert [text for text, selected, _ in shown if selected == "true"] == [t(f"quiz.{q1.key}.o{wrong}", lang)]
        assert [disabled for *_, disabled in shown] == ["true"] * lesson.N_OPTIONS, shown  # still locked
    finally:
        ctx.close()
