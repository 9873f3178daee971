"""Errors meant for people: a message key (under `errors.` in assets/i18n) and its parameters.

The UI shows `err.message(lang)`; the CLI prints `str(err)`, which is English. Every error the
core raises for bad input is one of these, so a page can catch them all with one `except`.
"""
from __future__ import annotations

from . import i18n


class ExplorerError(ValueError):
    def __init__(self, key: str, **params):
        self.key = key
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str = "en") -> str:
        """One line in `lang`. A key without a string (not yet translated) is shown as given."""
        full = f"errors.{self.key}"
        if full in i18n.strings("en"):
            return i18n.t(full, lang, **self.params)
        return self.key.format(**self.params) if self.params else self.key
