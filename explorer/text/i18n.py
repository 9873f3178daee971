"""UI strings and lesson text: gettext catalogs in assets/locale/<lang>/LC_MESSAGES/<domain>.po.

Each message's msgctxt is its key (the API: `t("home.title", lang)`), its msgid the English text and its
msgstr the translation, so a translator's tool (Poedit, Weblate, msgmerge) shows the English beside it.
English is the source language: its msgstr repeats the msgid. A Vietnamese message whose msgid no longer
matches the English is stale and is not shown (gettext's own rule), the English is.
Domains let each feature own its strings in a file of its own (`explorer.po` holds the rest); a key defined
twice is an error. The .po files are read with Babel and compiled in memory to stdlib GNUTranslations, once
per language, so a fresh clone needs no build step.
Plural messages (msgid_plural) pick their form by the language's Plural-Forms header: `n(key, count, lang)`.
"""
from __future__ import annotations

import gettext
import io
import logging
import string
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Union

from babel.messages.catalog import Catalog as BabelCatalog
from babel.messages.catalog import Message
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from explorer.resources import ASSETS

LOCALE_DIR = ASSETS / "locale"
MAIN_DOMAIN = "explorer"
LANGUAGES = {"en": "English", "vi": "Tiếng Việt"}
REVISION = datetime(2026, 1, 1, tzinfo=timezone.utc)  # fixed header dates: rewriting a catalog changes no line
PLURAL_PROBE = 2  # the count whose form `strings()` reports for a plural message: the JSON era's text

log = logging.getLogger(__name__)
Text = Union[str, tuple[str, ...]]  # one string, or a plural message's forms


@dataclass(frozen=True)
class Catalog:
    messages: Mapping[str, Message]  # key (msgctxt) -> Babel message, as read from the .po files
    translations: gettext.GNUTranslations
    files: Mapping[str, Path]  # key -> the .po file that defines it


def catalog_files(lang: str) -> list[Path]:
    return sorted((LOCALE_DIR / lang / "LC_MESSAGES").glob("*.po"))


@lru_cache(maxsize=None)
def catalog(lang: str) -> Catalog:
    """Every domain of `lang`, merged. An unknown language reads as English."""
    if lang not in LANGUAGES:
        lang = "en"
    merged = BabelCatalog(locale=lang, domain=MAIN_DOMAIN)
    messages: dict[str, Message] = {}
    files: dict[str, Path] = {}
    for path in catalog_files(lang):
        with path.open("rb") as fh:
            for m in read_po(fh, locale=lang):
                if not m.id:
                    continue  # the header
                if m.context in messages:
                    raise ValueError(f"{path.name} redefines i18n key {m.context!r} (also in {files[m.context].name})")
                messages[m.context], files[m.context] = m, path
                merged.add(m.id, m.string, context=m.context, flags=m.flags)
    mo = io.BytesIO()
    write_mo(mo, merged)
    mo.seek(0)
    return Catalog(messages, gettext.GNUTranslations(mo), files)


def _english(key: str) -> Message | None:
    return catalog("en").messages.get(key)


def _current(key: str, lang: str) -> bool:
    """`lang` has a translation of `key`'s present English text."""
    m, en = catalog(lang).messages.get(key), _english(key)
    return en is not None and m is not None and m.id == en.id and bool(m.string) and all(
        m.string if isinstance(m.string, tuple) else [m.string])


@lru_cache(maxsize=None)
def _missing(key: str, lang: str) -> None:
    """Logged once per key and language: a missing string is a defect, not a silent fallback."""
    log.warning("i18n: no %s string for %r; showing %s", lang, key, "English" if _english(key) else "the key")


def _lookup(key: str, lang: str, count: int | None) -> str | None:
    en = _english(key)
    if en is None:
        return None
    tr = catalog(lang).translations
    if en.pluralizable:
        return tr.npgettext(key, en.id[0], en.id[1], PLURAL_PROBE if count is None else count)
    return tr.pgettext(key, en.id)  # a miss returns the msgid: the English


def strings(lang: str) -> dict[str, str]:
    """Flat {key: text} of what `lang` translates; a plural message gives its form for PLURAL_PROBE."""
    return {k: _lookup(k, lang, None) for k in catalog(lang).messages if _current(k, lang)}


def placeholders(text: str) -> set[str]:
    """The str.format fields of `text`."""
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def n(key: str, count: int, lang: str = "en", **fmt) -> str:
    """The text for `key` in the plural form `count` takes in `lang` (ngettext), formatted with n=count."""
    return _render(key, lang, count, {**fmt, "n": count})


def t(key: str, lang: str = "en", **fmt) -> str:
    """The text for `key` in `lang`, falling back to English, then to the key itself (each logged once).
    A plural message given `n=` takes that count's form, as `n()` does."""
    count = fmt.get("n") if isinstance(fmt.get("n"), int) else None
    return _render(key, lang, count, fmt)


def _render(key: str, lang: str, count: int | None, fmt: dict) -> str:
    if not _current(key, lang):
        _missing(key, lang)
    text = _lookup(key, lang, count) or key
    return text.format(**fmt) if fmt else text


# ---- writing catalogs (the JSON port and tests use these) -------------------------------------------

def read_catalog(path: Path, lang: str) -> dict[str, tuple[Text, Text]]:
    """{key: (English source, translation)} of one .po file, in file order."""
    with path.open("rb") as fh:
        return {m.context: (m.id, m.string) for m in read_po(fh, locale=lang) if m.id}


def write_catalog(path: Path, lang: str, domain: str, entries: Mapping[str, tuple[Text, Text]]) -> None:
    """One .po file; a message with {fields} is flagged python-brace-format for `msgfmt --check-format`."""
    cat = BabelCatalog(locale=lang, domain=domain, project="Head Explorer", version="1",
                       copyright_holder="Head Explorer", fuzzy=False, last_translator="Head Explorer",
                       language_team=LANGUAGES.get(lang, lang), creation_date=REVISION, revision_date=REVISION)
    for key, (source, text) in entries.items():
        ids = source if isinstance(source, tuple) else (source,)
        brace = any(placeholders(s) for s in ids)
        cat.add(source, text, context=key, flags=("python-brace-format",) if brace else ())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_po(fh, cat, width=0, omit_header=False, sort_output=False)
