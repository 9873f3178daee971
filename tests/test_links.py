"""Links a teacher can share (teach.links): ?lang=, ?checkpoint=, ?text=, ?lock= set a fresh session; a bad
value is a one-line note, never an error; the quiz opened by a ?lang=vi&lock=1 link is Vietnamese and locked."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.model.analysis import MAX_TEXT_CHARS
from explorer.teach.links import class_query, read_link
from explorer.text.i18n import t

from conftest import open_link, wait_idle

ROOT = Path(__file__).resolve().parent.parent


def test_good_values_set_the_session():
    link = read_link({"lang": "vi", "checkpoint": "minilm", "text": "Một câu", "lock": "1", "x": "ignored"})
    assert link.as_dict() == {"lang": "vi", "lang_from_link": True, "checkpoint": "minilm", "text": "Một câu",
                              "quiz_lock": True, "quiz_lock_from_link": True}
    assert link.notes == ()
    assert read_link({"lock": "0"}).as_dict() == {"quiz_lock": False, "quiz_lock_from_link": False}
    assert read_link({}).as_dict() == {} and read_link({"embed": "true"}).notes == ()


@pytest.mark.parametrize("params, key", [
    ({"lang": "fr"}, "links.bad_lang"),
    ({"checkpoint": "/etc"}, "links.bad_checkpoint"),
    ({"checkpoint": "models/mine"}, "links.bad_checkpoint"),  # a folder: a link never makes the server load one
    ({"lock": "maybe"}, "links.bad_lock"),
    ({"text": "   "}, "links.empty_text"),
])
def test_a_bad_value_is_ignored_with_a_note_in_both_languages(params, key):
    link = read_link(params)
    assert link.as_dict() == {} and [n.key for n in link.notes] == [key]
    for lang in ("en", "vi"):
        line = t(key, lang, **link.notes[0].kwargs())
        assert "\n" not in line and "{" not in line


def test_a_long_text_is_cut_at_the_sidebars_limit():
    link = read_link({"text": "a" * (MAX_TEXT_CHARS + 5), "lang": "x" * 500})
    assert len(link.as_dict()["text"]) == MAX_TEXT_CHARS
    assert [n.key for n in link.notes] == ["links.bad_lang", "links.text_cut"]
    assert len(link.notes[0].kwargs()["value"]) == 40  # a hostile value is not echoed whole


def test_the_app_applies_a_link_once_and_notes_bad_values():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"lang": "vi", "checkpoint": "nowhere", "text": "Một ngày tuyệt vời"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["lang"] == "vi" and at.session_state["text"] == "Một ngày tuyệt vời"
    assert [i.value for i in at.info if "nowhere" in i.value] == [
        t("links.bad_checkpoint", "vi", value="nowhere", choices="minilm, minilm-sentiment")]
    at.session_state["lang"] = "en"  # the student's own choice afterwards is not undone by the link
    at.run()
    assert at.session_state["lang"] == "en" and not [i for i in at.info if "nowhere" in i.value]


def test_a_class_query_names_the_class_settings_only():
    assert class_query("vi", True) == {"lang": "vi", "lock": "1"} and class_query("en", False) == {"lang": "en"}
    assert class_query(None, True) == {"lock": "1"} and class_query(None, False) == {}  # no language from a link
    assert class_query("xx", False) == {}  # never a language the app does not have


def test_the_address_keeps_a_class_language_and_lock_after_the_query_is_dropped():
    """Streamlit's navigation drops the query; the next run writes the class's back, and only the class's: a
    student's own language switch afterwards is the language the address carries; a session that came without a
    language in its link keeps its pick to itself (no `lang` in its address)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"lang": "vi", "lock": "1", "embed": "true"})
    at.run()
    for key in ("lang", "lock"):
        at.query_params.pop(key)  # as a page switch leaves the address
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kept = {k: at.query_params.get(k) for k in ("lang", "lock", "embed")}
    assert kept == {"lang": "vi", "lock": "1", "embed": "true"}
    at.session_state["lang"] = "en"
    at.run()
    assert at.query_params.get("lang") == "en" and at.query_params.get("lock") == "1"
    bare = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    bare.run()
    bare.session_state["lang"] = "vi"
    bare.run()
    assert not bare.exception and dict(bare.query_params) == {}


@pytest.mark.browser
def test_a_vietnamese_locked_quiz_link_in_a_fresh_context(browser, app_url):
    ctx, pg = open_link(browser, f"{app_url}/review-quiz?lang=vi&lock=1")
    try:
        main = pg.locator("[data-testid=stMain]")
        assert main.locator("h1").first.inner_text().strip() == t("quiz.title", "vi")
        assert main.locator("[data-testid=stCheckbox]").count() == 0  # the link locks: no student's own switch
        assert t("links.locked_by_link", "vi") in main.inner_text()
        first = main.locator("[data-testid=stRadio]").first
        first.get_by_text(t("quiz.what_head.o1", "vi")).click()
        wait_idle(pg)
        assert t("quiz.locked", "vi") in main.inner_text()
        assert first.locator("label", has_text=t("quiz.what_head.o1", "vi")).locator("input").is_checked()
        assert first.locator("input").first.is_disabled()  # the first answer stays
    finally:
        ctx.close()


def test_a_query_string_the_server_dropped_is_a_note_in_both_languages():
    """Streamlit drops a query string past its limit before the session sees any of it (explorer/ui/gate.py
    notes it); the link's reader then names it, and sets nothing."""
    link = read_link({}, dropped=(600_013, 524_288))
    assert link.as_dict() == {} and [n.key for n in link.notes] == ["links.query_dropped"]
    for lang in ("en", "vi"):
        line = t("links.query_dropped", lang, **link.notes[0].kwargs())
        assert "600,013" in line and "524,288" in line and "\n" not in line
