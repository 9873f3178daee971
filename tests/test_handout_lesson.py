"""Item 9: the handout is the lesson on paper. Each step's text beside its chart, a glossary, the
review questions with their answers and a print stylesheet, in English and Vietnamese, read from the HTML."""
from html.parser import HTMLParser

import pytest

from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.teach import handout, lesson
from explorer.text.i18n import strings, t

VOID = {"meta", "br", "img", "hr", "input", "link"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent=None):
        self.tag, self.attrs, self.parent, self.children, self.parts = tag, attrs, parent, [], []  # parts: text and children in order

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def all(self, tag: str | None = None, cls: str | None = None) -> list["Node"]:
        out = []
        for c in self.children:
            if (tag is None or c.tag == tag) and (cls is None or cls in c.classes()):
                out.append(c)
            out += c.all(tag, cls)
        return out

    def words(self) -> str:
        return " ".join(" ".join(p if isinstance(p, str) else p.words() for p in self.parts).split())


class Tree(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.root = self.at = Node("root", {})
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.at)
        self.at.children.append(node)
        self.at.parts.append(node)
        if tag not in VOID:
            self.at = node

    def handle_endtag(self, tag):
        node = self.at
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.at = node.parent

    def handle_data(self, data):
        if self.at.tag not in ("script", "style"):
            self.at.parts.append(data)


@pytest.fixture(scope="module", params=["en", "vi"])
def doc(request, sentiment):
    lang = request.param
    head = build_head(sentiment)
    a = analyze(sentiment, head, "I love this wonderful car")
    html = handout.handout_with_model(sentiment, head, a, [], handout.handout_strings(strings(lang)))
    return lang, html, Tree(html).root


def test_each_step_has_its_text_beside_its_chart(doc):
    lang, _, root = doc
    steps = root.all("section", "step")
    assert len(steps) == len(lesson.STEPS)
    charts = 0
    for section, step in zip(steps, lesson.STEPS):
        words, panel = section.children  # side by side: the text's box and the panel's box
        assert "words" in words.classes() and "panel" in panel.classes()
        assert words.all("h2")[0].words() == " ".join(t(f"lesson.{step}.title", lang).split())
        assert words.all("p")[0].words() == " ".join(t(f"lesson.{step}.body", lang).split())
        assert panel.children, step  # every step shows something of the text's own numbers
        charts += len(panel.all("div", "plotly-graph-div"))
    assert charts >= 7  # encoder, cls, probabilities, fine-tuning, token heads, layers, the word chart


def test_a_step_that_speaks_of_a_table_shows_one(doc, sentiment):
    """The handout says only what it shows: a step whose text speaks of a table has one in its panel; step 6's
    is the lesson's table of the head's layers, with its columns and one row per layer."""
    lang, _, root = doc
    word = {"en": "table", "vi": "bảng"}[lang]
    steps = root.all("section", "step")
    speaking = [step for section, step in zip(steps, lesson.STEPS) if word in section.children[0].words().lower()]
    assert "new_head" in speaking
    assert [step for section, step in zip(steps, lesson.STEPS)
            if step in speaking and not section.children[1].all("table")] == []
    rows = steps[lesson.STEPS.index("new_head")].all("table")[0].all("tr")
    assert [th.words() for th in rows[0].all("th")] == [
        t(f"lesson.panel.{c}", lang) for c in ("name_col", "shape_col", "params_col", "pretrained_col")]
    layers = build_head(sentiment).parameters_table()
    assert [[td.words() for td in tr.all("td")][:3] for tr in rows[1:]] == [
        [r["name"], r["shape"], str(r["params"])] for r in layers]


def test_glossary_review_questions_and_answers(doc):
    lang, _, root = doc
    terms = root.all("dl", "glossary")[0]
    assert [d.words() for d in terms.all("dt")] == [t(f"handout.term.{k}", lang) for k in handout.GLOSSARY]
    assert all(d.words() for d in terms.all("dd"))
    review = root.all("ol", "review")[0]
    questions = [li for li in review.children if li.tag == "li"]
    assert len(questions) == len(lesson.QUIZ)
    for li, q in zip(questions, lesson.QUIZ):
        assert li.all("p")[0].words() == " ".join(t(f"quiz.{q.key}.question", lang).split())
        options = sorted(o.words() for o in li.all("ol", "options")[0].children)
        assert options == sorted(" ".join(t(f"quiz.{q.key}.o{i}", lang).split()) for i in range(lesson.N_OPTIONS))
    answers = [li.words() for li in root.all("ol", "answers")[0].children]
    assert len(answers) == len(lesson.QUIZ)
    assert all(a[0] in handout.LETTERS for a in answers)


def test_answers_name_the_right_option(doc):
    lang, _, root = doc
    review = [li for li in root.all("ol", "review")[0].children if li.tag == "li"]
    answers = root.all("ol", "answers")[0].children
    for li, ans, q in zip(review, answers, lesson.QUIZ):
        picked = li.all("ol", "options")[0].children[handout.LETTERS.index(ans.words()[0])].words()
        assert picked == " ".join(t(f"quiz.{q.key}.o{q.correct}", lang).split())


def test_print_stylesheet_and_language(doc):
    lang, html, root = doc
    style = html[html.index("<style>"):html.index("</style>")]
    assert "@media print" in style and "break-inside:avoid" in style and "modebar" in style
    assert html.count("Plotly.newPlot") >= 7 and html.count('<script type="text/javascript">/**') <= 1
    if lang == "vi":
        assert t("handout.glossary", "vi") in html and "Glossary" not in html
