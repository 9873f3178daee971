"""Messages meant for people: a message key (under `errors.` in assets/locale) and its parameters.

The UI shows `err.message(lang)`; the CLI prints `str(err)`, which is English. Every error the
core raises for bad input is one of these, so a page can catch them all with one `except`.
Warnings and notes the core returns (label issues, traps, an encoding fallback) are `Message`s:
strings whose value is the English text, translated the same way.
"""
from __future__ import annotations

from explorer.text import i18n


def message_text(key: str, lang: str, params: dict) -> str:
    """`errors.<key>` in `lang` with its parameters. A key without a string is shown as given."""
    full = f"errors.{key}"
    if full in i18n.strings("en"):
        return i18n.t(full, lang, **params)
    return key.format(**params) if params else key


class ExplorerError(ValueError):
    def __init__(self, key: str, **params):
        self.key = key
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str = "en") -> str:
        """One line in `lang`."""
        return message_text(self.key, lang, self.params)


class Message(str):
    """A warning or note for people: the English text as a str (CLI, JSON), `message(lang)` for the UI."""

    def __new__(cls, key: str, **params):
        self = super().__new__(cls, message_text(key, "en", params))
        self.key, self.params = key, params
        return self

    def __reduce__(self):  # pickled by key, so a cached report still translates
        return (_message, (self.key, self.params))

    def message(self, lang: str = "en") -> str:
        return message_text(self.key, lang, self.params)


def _message(key: str, params: dict) -> Message:
    return Message(key, **params)
