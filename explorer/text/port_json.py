"""Merge strings written as JSON (the old assets/i18n/<lang>.json and <lang>/*.json) into the gettext catalogs.

The catalogs were made with it; it stays for branches that still add JSON strings:
`python -m explorer.text.port_json DIR` merges DIR/<lang>.json and DIR/<lang>/<part>.json into
assets/locale/<lang>/LC_MESSAGES/<domain>.po (domain `explorer` for <lang>.json, <part> for the parts),
keeping what the catalogs already hold. A key listed in PLURALS becomes a plural message.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from explorer.text.i18n import LANGUAGES, LOCALE_DIR, MAIN_DOMAIN, read_catalog, write_catalog

# key -> (English singular, English plural). The JSON held the plural; Vietnamese has one form.
PLURALS = {
    "home.n_tokens": ("{n} token", "{n} tokens"),
    "home.n_chars": ("{n} character", "{n} characters"),
    "home.truncated": ("The text was cut to {max} tokens; {n} token was dropped.",
                       "The text was cut to {max} tokens; {n} tokens were dropped."),
    "tokens.truncated": ("The text was cut to {max} tokens; {n} token was dropped.",
                         "The text was cut to {max} tokens; {n} tokens were dropped."),
    "tokens.table_title": ("Token table ({n} token)", "Token table ({n} tokens)"),
    "dropout.where": ("The {kind} head has {n} dropout step, in bold: {steps}",
                      "The {kind} head has {n} dropout steps, in bold: {steps}"),
    "audit.download_csv": ("Download the corrected CSV ({n} row changed)",
                           "Download the corrected CSV ({n} rows changed)"),
    "encoder.hover_mean": ("mean over {n} head", "mean over {n} heads"),
    "arch.unused_weights": ("The checkpoint's files hold {n} weight this model does not use: {names}",
                            "The checkpoint's files hold {n} weights this model does not use: {names}"),
    "safety.evicted_cap": ("The fine-tuned model {name} was removed to make room: a session keeps its last "
                           "{n} fine-tuned model.",
                           "The fine-tuned model {name} was removed to make room: a session keeps its last "
                           "{n} fine-tuned models."),
    "errors.data_empty_text": ("{n} row has empty text in '{column}' (first: row {row})",
                               "{n} rows have empty text in '{column}' (first: row {row})"),
    "errors.data_missing_labels": ("{n} row has an empty or NaN label (first: row {row}); fill or drop it",
                                   "{n} rows have an empty or NaN label (first: row {row}); fill or drop them"),
    "errors.issue_missing_labels": ("{n} of {total} rows has an empty or NaN label",
                                    "{n} of {total} rows have an empty or NaN label"),
    "errors.finetune_too_few": ("only {n} row: too few to hold out a validation split",
                                "only {n} rows: too few to hold out a validation split"),
}


def flatten(obj: dict, prefix: str = "") -> dict[str, str]:
    """Nested JSON objects become dotted keys."""
    out: dict[str, str] = {}
    for k, v in obj.items():
        out.update(flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def json_strings(src: Path, lang: str) -> dict[str, dict[str, str]]:
    """{domain: {key: text}} from src/<lang>.json and src/<lang>/*.json."""
    parts = {MAIN_DOMAIN: src / f"{lang}.json", **{p.stem: p for p in sorted((src / lang).glob("*.json"))}}
    return {d: flatten(json.loads(p.read_text(encoding="utf-8"))) for d, p in parts.items() if p.exists()}


def port(src: Path, dest: Path = LOCALE_DIR) -> None:
    english = {k: v for part in json_strings(src, "en").values() for k, v in part.items()}
    for lang in LANGUAGES:
        for domain, texts in json_strings(src, lang).items():
            path = dest / lang / "LC_MESSAGES" / f"{domain}.po"
            entries = read_catalog(path, lang) if path.exists() else {}
            for key, text in texts.items():
                if key in entries or not text:
                    continue  # kept, or an empty "_" spacer between the JSON's sections: no string
                source = PLURALS.get(key, english.get(key, text))
                if isinstance(source, tuple):
                    forms = source if lang == "en" else (text,)  # vi: nplurals=1
                else:
                    forms = text
                entries[key] = (source, forms)
            write_catalog(path, lang, domain, entries)


if __name__ == "__main__":
    port(Path(sys.argv[1]))
