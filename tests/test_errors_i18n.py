"""Every message the core raises or returns is a key with parameters, in every language."""
import re
import string
from pathlib import Path

import pytest

from explorer.text.errors import ExplorerError, Message
from explorer.text.i18n import LANGUAGES, strings

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in (ROOT / "explorer").rglob("*.py") if p.name != "i18n.py")  # i18n can't use itself
KEY_SITE = re.compile(r"\b(?:\w*Error|Message)\(\s*[\"']([A-Za-z0-9_]+)[\"']")
ENGLISH_SITE = re.compile(r"\b(?:raise\s+\w+|Message|Issue\(\s*\"\w+\",)\(?\s*f?[\"'][^\"']*\s[^\"']*[\"']")


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


@pytest.mark.slow
def test_every_error_key_is_in_every_language_with_the_same_parameters():
    used = {m for p in SOURCES for m in KEY_SITE.findall(p.read_text())}
    assert len(used) > 40  # the pattern still finds the raise sites
    for lang in LANGUAGES:
        missing = sorted(k for k in used if f"errors.{k}" not in strings(lang))
        assert not missing, f"{lang} lacks errors.{missing}"
    english = strings("en")
    for lang in [lang for lang in LANGUAGES if lang != "en"]:
        translated = strings(lang)
        for key in [k for k in english if k.startswith("errors.")]:
            assert _fields(english[key]) == _fields(translated[key]), (lang, key)
            assert english[key] != translated[key], f"{key} is not translated into {lang}"


def test_no_raise_site_passes_literal_english():
    offenders = [f"{p.name}: {m.group(0)}" for p in SOURCES for m in ENGLISH_SITE.finditer(p.read_text())]
    assert offenders == []


def test_messages_translate_and_print_english():
    err = ExplorerError("data_empty", name="x.csv")
    assert str(err) == "'x.csv' is empty" and "trống" in err.message("vi")
    note = Message("note_latin1", name="x.csv", byte=3)
    assert "latin-1" in note and note.message("vi") != str(note)
