"""Every UI string exists in both languages."""
import json

from explorer.i18n import I18N_DIR, LANGUAGES, strings, t


def test_every_key_exists_in_every_language():
    keys = {lang: set(strings(lang)) for lang in LANGUAGES}
    en = keys["en"]
    for lang, ks in keys.items():
        assert ks - en == set(), f"{lang} has keys English lacks"
        assert en - ks == set(), f"{lang} lacks keys: {sorted(en - ks)[:10]}"


def test_files_are_valid_json_and_vietnamese_differs():
    for lang in LANGUAGES:
        json.loads((I18N_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    assert t("home.title", "vi") != t("home.title", "en")
    assert t("no.such.key", "vi") == "no.such.key"


def test_fragments_merge_into_each_language():
    for lang in LANGUAGES:
        for path in sorted((I18N_DIR / lang).glob("*.json")):
            part = json.loads(path.read_text(encoding="utf-8"))
            assert part, f"{path} is empty"
    # every fragment file has its twin in every language
    names = {lang: {p.name for p in (I18N_DIR / lang).glob("*.json")} for lang in LANGUAGES}
    assert len({frozenset(v) for v in names.values()}) == 1, names
