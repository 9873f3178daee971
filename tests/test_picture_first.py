"""As a designer would: a page opens with its picture. Attributions shows its chart
before any method note (the notes are in an expander after it); the Tokens page shows its heatmaps before
the token table (in an expander after them)."""
from streamlit.testing.v1 import AppTest

from explorer.text.i18n import t

from conftest import ROOT
from explore_helpers import open_page


def _walk(node):
    """The page's elements in the order they are drawn, each with the expanders it sits in."""
    def go(n, inside):
        yield n, inside
        for child in getattr(n, "children", {}).values():
            yield from go(child, inside + ((n.label,) if getattr(n, "type", "") == "expander" else ()))
    yield from go(node, ())


def _order(at: AppTest) -> list[tuple[str, str, tuple]]:
    """(type, text, expanders it is in) of every element of the main area, in order."""
    out = []
    for node, inside in _walk(at.main):
        kind = getattr(node, "type", "")
        if kind in ("plotly_chart", "caption", "metric", "html", "dataframe", "table", "expander", "alert"):
            value = getattr(node, "value", "") if kind in ("caption", "metric", "alert") else ""
            out.append((kind, str(value or ""), inside))
    return out


def test_attributions_opens_with_its_chart_and_keeps_method_notes_in_an_expander():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["text"] = "I love this movie"
    at.run()
    at.switch_page("pages/attributions.py").run()
    assert not at.exception and not at.error
    order = _order(at)
    first_chart = next(i for i, (kind, _, _) in enumerate(order) if kind in ("plotly_chart", "html"))
    notes = t("attributions.notes", "en")
    before = [(k, v) for k, v, inside in order[:first_chart] if k == "caption"]
    assert before == [("caption", t("attributions.intro", "en"))]  # the page's one line, then the picture
    explains = [inside for k, v, inside in order if k == "caption" and v.startswith("Explaining")]
    assert explains == [(notes,)]
    assert all(inside == (notes,) for k, _, inside in order if k == "metric")  # the completeness numbers too
    assert [s.value for s in at.success]  # the verdict stays in view, under the chart


def test_tokens_page_shows_its_heatmaps_before_the_token_table():
    at = open_page("tokens")
    order = _order(at)
    first_chart = next(i for i, (kind, _, _) in enumerate(order) if kind == "plotly_chart")
    assert not any(kind in ("table", "dataframe", "expander") for kind, _, _ in order[:first_chart])
    tables = [inside for kind, _, inside in order if kind in ("table", "dataframe")]
    assert tables and all(inside and inside[0].startswith("Token table") for inside in tables)
