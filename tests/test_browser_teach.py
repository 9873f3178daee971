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


# Each chart as drawn: its title's words (a wrapped title's lines joined, bold or not), each trace's kind, categories, colour scale
# and its range, and the fill of every bar: what a student compares between the screen and the paper.
CHART = """gd => ({
    title: (gd._fullLayout.title.text || '').replace(/<br>/g, ' ').replace(/<[^>]*>/g, '').replace(/\\s+/g, ' ').trim(),
    traces: gd._fullData.map(tr => ({type: tr.type, x: tr.type === 'bar' ? [...tr.x].map(String) : null,
        y: tr.type === 'bar' || tr.type === 'heatmap' ? [...tr.y].map(String) : null,
        colorscale: JSON.stringify(tr.colorscale || (tr.marker && tr.marker.colorscale) || null),
        range: [tr.zmin, tr.zmax, tr.marker && tr.marker.cmin, tr.marker && tr.marker.cmax].map(v => v === undefined ? null : +(+v).toPrecision(6))})),
    fills: [...gd.querySelectorAll('.trace.bars .point path')].map(p => getComputedStyle(p).fill)})"""
N_CHARTS = 8  # encoder, cls, logits and probabilities, fine-tuning, token heads, layers, leave-one-out


def _charts(page, within: str) -> list[dict]:
    page.wait_for_function(f"document.querySelectorAll('{within} .js-plotly-plot .main-svg').length >= {N_CHARTS}",
                           timeout=120_000)
    return [gd.evaluate(CHART) for gd in page.locator(f"{within} .js-plotly-plot").all()]


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_the_handout_draws_each_step_chart_as_the_lesson_does(browser, app_url, lang, tmp_path):
    """The lesson page's charts and the downloaded handout's, step by step: the same titles, the same bars in
    the same colours, the same colour scales; step 10 is leave-one-out in both."""
    ctx, page = open_link(browser, f"{app_url}/guided-lesson?lang={lang}")
    try:
        screen = _charts(page, "[data-testid=stMain]")
        with page.expect_download(timeout=180_000) as got:
            page.get_by_role("button", name=t("lesson.handout", lang)).click()
        path = tmp_path / "handout.html"
        got.value.save_as(path)
        paper = ctx.new_page()
        paper.goto(path.as_uri())
        on_paper = _charts(paper, ".step")
        step10 = paper.locator(f"#step-{lesson.STEPS.index('ablation') + 1} .js-plotly-plot").evaluate(CHART)
    finally:
        ctx.close()
    assert len(screen) == N_CHARTS and [c["title"] for c in on_paper] == [c["title"] for c in screen]
    assert all(c["fills"] for c in screen if c["traces"][0]["type"] == "bar")  # bars' colours were read
    for drawn, handed in zip(screen, on_paper):
        assert handed == drawn, drawn["title"]
    before_label = t("lesson.panel.drop_title", lang, label="\0").split("\0")[0]
    assert step10 == screen[-1] and step10["title"].startswith(before_label)  # step 10: leave-one-out
