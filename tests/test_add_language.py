"""docs/add-a-language.md holds: its steps, followed in a copy of the catalogs, give a language that the
catalog tests accept, and every file and name the page points at exists."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import test_errors_i18n
import test_i18n
from explorer.text import i18n
from explorer.text.i18n import catalog_files, read_catalog, write_catalog

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "add-a-language.md"
# The catalog tests the page lists as holding for every language (the ones that read the code stay out: they
# read files beside the catalogs, which the copy has not).
CHECKS = ("test_every_key_exists_in_every_language", "test_catalogs_read_and_vietnamese_differs",
          "test_english_is_the_source_language", "test_fragments_merge_into_each_language",
          "test_plural_forms_follow_each_language", "test_every_message_has_the_same_placeholders_in_every_language",
          "test_msgfmt_checks_every_catalog")


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def copied_catalogs(tmp_path, monkeypatch):
    """The catalogs in a folder of their own, read from there; the catalog cache is emptied on both sides."""
    shutil.copytree(i18n.LOCALE_DIR, tmp_path / "locale")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path / "locale")
    i18n.catalog.cache_clear()
    yield tmp_path / "locale"
    monkeypatch.undo()
    i18n.catalog.cache_clear()


def _run_the_catalog_tests() -> None:
    for name in CHECKS:
        getattr(test_i18n, name)()


def _translate(text: str) -> str:
    """A stand-in translator: other words around the same placeholders."""
    return f"«{text}»"


def test_the_guides_steps_give_a_language_the_tests_accept(copied_catalogs, monkeypatch):
    naming, writing, _ = _python_blocks()
    # step 1, the line the page shows, applied to the dict everything reads
    languages = eval(naming.split("=", 1)[1])  # a dict literal
    assert set(languages) - set(i18n.LANGUAGES) == {"fr"} and languages["vi"] == i18n.LANGUAGES["vi"]
    monkeypatch.setitem(i18n.LANGUAGES, "fr", languages["fr"])
    # step 2, the page's code as it stands
    exec(compile(writing, str(GUIDE), "exec"), {})
    assert [p.name for p in catalog_files("fr")] == [p.name for p in catalog_files("en")]
    i18n.catalog.cache_clear()
    assert i18n.catalog("fr").translations.info()["plural-forms"] == "nplurals=2; plural=(n > 1);"
    with pytest.raises(AssertionError, match="fr lacks keys"):  # nothing translated yet: the tests say so
        test_i18n.test_every_key_exists_in_every_language()
    assert i18n.t("home.title", "fr") == i18n.t("home.title", "en")  # meanwhile the English shows

    # step 3, a translator fills every msgstr (both plural forms of French)
    for path in catalog_files("fr"):
        entries = {}
        for key, (english, _) in read_catalog(path, "fr").items():
            forms = english if isinstance(english, tuple) else None
            entries[key] = (english, tuple(_translate(f) for f in forms) if forms else _translate(english))
        write_catalog(path, "fr", path.stem, entries)
    i18n.catalog.cache_clear()
    # step 4: the catalog tests, over every language, French included
    _run_the_catalog_tests()
    test_errors_i18n.test_every_error_key_is_in_every_language_with_the_same_parameters()
    # step 5: it shows
    assert i18n.t("home.title", "fr") == _translate(i18n.t("home.title", "en"))
    assert i18n.n("home.n_tokens", 1, "fr") == "«1 token»" and i18n.n("home.n_tokens", 2, "fr") == "«2 tokens»"

    # rerun after the English changed: the unchanged translations stay, the changed message is empty again
    en = i18n.LOCALE_DIR / "en" / "LC_MESSAGES" / "explorer.po"
    english = read_catalog(en, "en")
    title = english["home.title"][0]
    english["home.title"] = (title + "!", title + "!")
    write_catalog(en, "en", "explorer", english)
    exec(compile(writing, str(GUIDE), "exec"), {})
    french = read_catalog(i18n.LOCALE_DIR / "fr" / "LC_MESSAGES" / "explorer.po", "fr")
    assert french["home.title"] == (title + "!", "")
    assert french["app.language"][1] == _translate(i18n.t("app.language", "en"))


def test_the_guide_names_what_exists():
    text = GUIDE.read_text(encoding="utf-8")
    for path in set(re.findall(r"`((?:tests|explorer|docs|assets)/[\w/.-]+\.(?:py|md))`", text)):
        assert (ROOT / path).exists(), path
    for test in re.findall(r"`(test_\w+)\.py::(test_\w+)`", text):
        module = {"test_i18n": test_i18n, "test_errors_i18n": test_errors_i18n}[test[0]]
        assert hasattr(module, test[1]), test
    listed = set(re.findall(r"test_i18n\.py::(test_\w+)", text))
    per_language = set(CHECKS) - {"test_english_is_the_source_language"}  # English's alone, not the new one's
    assert per_language <= listed, per_language - listed
    assert [name for name in re.findall(r"`(\w+)\(", text) if not hasattr(i18n, name)] == []
    assert "add-a-language.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_cli_offers_every_language(monkeypatch):
    import argparse

    from explorer.cli import scan
    monkeypatch.setitem(i18n.LANGUAGES, "fr", "Français")
    parser = argparse.ArgumentParser()
    scan.add_parser(parser.add_subparsers())
    args = parser.parse_args(["scan", "--checkpoint", "c", "--csv", "d.csv", "--lang", "fr"])
    assert args.lang == "fr"
