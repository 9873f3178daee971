"""What a shared link's query parameters set for a fresh session: a teacher's link for a class.

`?lang=vi` (or `en`) picks the language, `?checkpoint=` one of the registry's names (never a folder or a hub
id: a link must not make the server load something), `?text=` the sidebar's text (cut at the sidebar's
limit), `?lock=1` (or `0`) the quiz's lock-answers mode. A bad value is ignored and named in a note; a
parameter this module does not know is left alone (Streamlit's own, `?embed=true`, or a page's). A query
string past Streamlit's own limit (512 Ki characters) never arrives: the server drops it whole, and the
note says so, as the link's text was the likeliest part to make it that long.

A class's two settings, its language and the lock, then travel on: class_query is what every address the app
shows carries (the address bar after each page's run, the sidebar's and the pages' links), so a reload, a link
opened in a new tab or one a student copies keeps the class's language and its lock. A session that came
without them keeps its language to itself: a reload of a bare address opens in English, as it always has.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from explorer.model.analysis import MAX_TEXT_CHARS
from explorer.model.checkpoints import REGISTRY
from explorer.text.i18n import LANGUAGES

PARAMETERS = ("lang", "checkpoint", "text", "lock")
_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


@dataclass(frozen=True)
class LinkNote:
    """One ignored or changed parameter: an i18n key under "links." and its fields."""
    key: str
    fields: tuple[tuple[str, str | int], ...] = ()

    def kwargs(self) -> dict:
        return dict(self.fields)


@dataclass(frozen=True)
class Link:
    """What a link sets: session-state keys (as app.py and the quiz name them) and the notes for the rest."""
    settings: tuple[tuple[str, object], ...]
    notes: tuple[LinkNote, ...]

    def as_dict(self) -> dict:
        return dict(self.settings)


def _shown(value: str, width: int = 40) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def read_link(params: Mapping[str, str], dropped: tuple[int, int] | None = None) -> Link:
    """The settings a link's query parameters ask for; every bad value a note, never an error.
    `dropped`: (its length, the limit) of a query string the server dropped before the session saw it."""
    settings: list[tuple[str, object]] = []
    notes: list[LinkNote] = []
    if dropped is not None:
        notes.append(LinkNote("links.query_dropped", (("chars", dropped[0]), ("limit", dropped[1]))))
    if (lang := params.get("lang")) is not None:
        if lang in LANGUAGES:
            settings += [("lang", lang), ("lang_from_link", True)]
        else:
            notes.append(LinkNote("links.bad_lang", (("value", _shown(lang)), ("choices", ", ".join(LANGUAGES)))))
    if (name := params.get("checkpoint")) is not None:
        if name in REGISTRY:
            settings.append(("checkpoint", name))
        else:
            notes.append(LinkNote("links.bad_checkpoint", (("value", _shown(name)), ("choices", ", ".join(REGISTRY)))))
    if (text := params.get("text")) is not None:
        if len(text) > MAX_TEXT_CHARS:  # as the sidebar's text area, which takes no more
            notes.append(LinkNote("links.text_cut", (("chars", len(text)), ("limit", MAX_TEXT_CHARS))))
            text = text[:MAX_TEXT_CHARS]
        if text.strip():
            settings.append(("text", text))
        else:
            notes.append(LinkNote("links.empty_text"))
    if (lock := params.get("lock")) is not None:
        if lock.lower() in _BOOLEANS:
            # On: the quiz's toggle is drawn locked too, so every student of that link scores first answers.
            settings += [("quiz_lock", _BOOLEANS[lock.lower()]), ("quiz_lock_from_link", _BOOLEANS[lock.lower()])]
        else:
            notes.append(LinkNote("links.bad_lock", (("value", _shown(lock)),)))
    return Link(tuple(settings), tuple(notes))


CLASS_PARAMETERS = ("lang", "lock")  # what class_query writes, and takes out of an address when not set


def class_query(lang: str | None, locked: bool) -> dict[str, str]:
    """The query parameters a class's addresses carry: the session's language `lang` where a link set one (None
    where none did: then no `lang`, even if the student picked one), and `lock` while the quiz is `locked`."""
    out = {"lang": lang} if lang in LANGUAGES else {}
    return out | ({"lock": "1"} if locked else {})
