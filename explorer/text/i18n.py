"""UI strings and lesson text: assets/i18n/<lang>.json plus any fragments in assets/i18n/<lang>/*.json.

Fragments let each feature own its strings in a file of its own; a key defined twice is an error.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from explorer.resources import ASSETS

I18N_DIR = ASSETS / "i18n"
LANGUAGES = {"en": "English", "vi": "Tiếng Việt"}


@lru_cache(maxsize=None)
def strings(lang: str) -> dict[str, str]:
    """Flat {key: text}; nested JSON objects become dotted keys."""
    def flatten(obj: dict, prefix: str = "") -> dict[str, str]:
        out = {}
        for k, v in obj.items():
            key = f"{prefix}{k}"
            out.update(flatten(v, key + ".") if isinstance(v, dict) else {key: v})
        return out

    def load(path: Path) -> dict[str, str]:
        return flatten(json.loads(path.read_text(encoding="utf-8")))

    out = load(I18N_DIR / f"{lang}.json")
    for path in sorted((I18N_DIR / lang).glob("*.json")):
        part = load(path)
        clash = sorted(set(part) & set(out))
        if clash:
            raise ValueError(f"{path.name} redefines i18n keys: {clash[:5]}")
        out.update(part)
    return out


def t(key: str, lang: str = "en", **fmt) -> str:
    """The text for `key` in `lang`, falling back to English, then to the key itself."""
    text = strings(lang).get(key) or strings("en").get(key) or key
    return text.format(**fmt) if fmt else text
