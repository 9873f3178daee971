"""Every UI string exists in both languages, in gettext catalogs a translator's tool opens."""
import logging
import re
import shutil
import subprocess

import pytest
from babel.messages.checkers import num_plurals
from babel.messages.catalog import TranslationError
from babel.messages.pofile import read_po

from explorer.text import i18n
from explorer.text.i18n import LANGUAGES, LOCALE_DIR, catalog, catalog_files, placeholders, strings, t


def test_every_key_exists_in_every_language():
    keys = {lang: set(strings(lang)) for lang in LANGUAGES}
    en = keys["en"]
    assert len(en) > 700
    for lang, ks in keys.items():
        assert ks - en == set(), f"{lang} has keys English lacks"
        assert en - ks == set(), f"{lang} lacks keys (or its msgid is stale): {sorted(en - ks)[:10]}"


def test_catalogs_read_and_vietnamese_differs():
    for lang in LANGUAGES:
        for path in catalog_files(lang):
            with path.open("rb") as fh:
                cat = read_po(fh, locale=lang)
            assert cat.locale_identifier == lang, path
            # Babel's plural check; its python_format check reads %-formats, msgfmt checks brace formats below
            assert [m.context for m in cat if m.id and not _plurals_ok(cat, m)] == [], path
    assert t("home.title", "vi") != t("home.title", "en")
    assert t("no.such.key", "vi") == "no.such.key"


def _plurals_ok(cat, message) -> bool:
    try:
        num_plurals(cat, message)
    except TranslationError:
        return False
    return True


def test_english_is_the_source_language():
    for key, m in catalog("en").messages.items():
        assert (tuple(m.string) == m.id) if m.pluralizable else (m.string == m.id), key


def test_fragments_merge_into_each_language():
    for lang in LANGUAGES:
        for path in catalog_files(lang):
            with path.open("rb") as fh:
                assert len(read_po(fh)) > 0, f"{path} is empty"
    # every domain file has its twin in every language
    names = {lang: {p.name for p in catalog_files(lang)} for lang in LANGUAGES}
    assert len({frozenset(v) for v in names.values()}) == 1, names
    assert "explorer.po" in names["en"] and len(names["en"]) > 1


def test_a_key_defined_in_two_files_is_an_error(tmp_path, monkeypatch):
    src = LOCALE_DIR / "en" / "LC_MESSAGES"
    dest = tmp_path / "en" / "LC_MESSAGES"
    dest.mkdir(parents=True)
    for name in ("explorer.po", "jobs.po"):
        (dest / name).write_bytes((src / name).read_bytes())
    (dest / "twin.po").write_bytes((src / "jobs.po").read_bytes())
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.catalog.cache_clear()
    try:
        with pytest.raises(ValueError, match="redefines i18n key"):
            catalog("en")
    finally:
        monkeypatch.undo()
        i18n.catalog.cache_clear()


# ---- plural forms ----------------------------------------------------------------------------

def test_plural_forms_follow_each_language():
    assert catalog("en").translations.info()["plural-forms"] == "nplurals=2; plural=(n != 1);"
    assert catalog("vi").translations.info()["plural-forms"] == "nplurals=1; plural=0;"
    assert [i18n.n("home.n_tokens", k) for k in (0, 1, 2)] == ["0 tokens", "1 token", "2 tokens"]
    assert t("home.n_tokens", n=1) == "1 token"  # t with n= picks the form too: "1 tokens" never renders
    assert i18n.n("home.truncated", 1, max=8) == "The text was cut to 8 tokens; 1 token was dropped."
    assert i18n.n("home.n_tokens", 1, "vi") == "1 token" and i18n.n("home.n_tokens", 2, "vi") == "2 token"
    from explorer.text.errors import ExplorerError
    assert str(ExplorerError("finetune_too_few", n=1)).startswith("only 1 row:")
    for lang in LANGUAGES:
        nplurals = catalog(lang).translations.info()["plural-forms"].split(";")[0].split("=")[1]
        for key, m in catalog(lang).messages.items():
            if m.pluralizable:
                assert len(m.string) == int(nplurals), (lang, key)


def test_no_count_reads_one_plural():
    """A message that shows a count {n} before an English plural noun is a plural message."""
    noun = re.compile(r"\{n\} (tokens|characters|rows|heads|weights|steps|dropout steps|fine-tuned models)\b")
    singular = {k for k, m in catalog("en").messages.items() if not m.pluralizable and noun.search(m.id)}
    assert singular <= {"home.labels_hidden", "encoder.modelview_help", "memory.loo_costly", "memory.whatif_costly",
                        "safety.flow_costly", "errors.cli_costly"}, singular  # counts above a limit: never one


# ---- placeholders and missing strings ------------------------------------------------------------

def test_every_message_has_the_same_placeholders_in_every_language():
    for lang in LANGUAGES:
        for key, m in catalog(lang).messages.items():
            en = catalog("en").messages[key]
            want = placeholders(en.id[-1] if en.pluralizable else en.id)
            forms = m.string if isinstance(m.string, tuple) else (m.string,)
            for form in forms:
                assert placeholders(form) == want, (lang, key, form)
            assert ("python-brace-format" in m.flags) == bool(want), (lang, key)


@pytest.mark.skipif(not shutil.which("msgfmt"), reason="GNU gettext's msgfmt is not installed")
def test_msgfmt_checks_every_catalog():
    for lang in LANGUAGES:
        for path in catalog_files(lang):
            run = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(path)], capture_output=True, text=True)
            assert run.returncode == 0 and not run.stderr, run.stderr


def test_msgfmt_check_fails_on_a_changed_placeholder(tmp_path):
    if not shutil.which("msgfmt"):
        pytest.skip("GNU gettext's msgfmt is not installed")
    bad = tmp_path / "bad.po"
    text = (LOCALE_DIR / "vi" / "LC_MESSAGES" / "jobs.po").read_text(encoding="utf-8")
    m = re.search(r'msgstr "([^"]*)\{(\w+)\}', text)
    assert m, "jobs.po has a message with a placeholder"
    bad.write_text(text.replace(m.group(0), f'msgstr "{m.group(1)}{{{m.group(2)}_x}}', 1), encoding="utf-8")
    assert subprocess.run(["msgfmt", "--check", "-o", "-", str(bad)], capture_output=True).returncode != 0


KEY_CALL = re.compile(r"""\b(?:t|n)\(\s*(f?)["']([^"']*)["']\s*(\+?)""")
# a file's own wrapper, e.g. `t = lambda key, **kw: i18n.t(f"audit.report_{key}", ...)`: its keys take that prefix
WRAPPER = re.compile(r"""\bt = lambda .*\bi18n\.t\(f["']([\w.]+)\{""")


def _used_keys() -> tuple[set[str], set[str]]:
    """Literal keys and f-string prefixes given to t()/n() in the app, pages and core."""
    root = LOCALE_DIR.parents[1]
    files = [root / "app.py", *sorted((root / "pages").glob("*.py")), *sorted((root / "explorer").rglob("*.py"))]
    literal, prefix = set(), set()
    for p in files:
        source = p.read_text(encoding="utf-8")
        wrapper = WRAPPER.search(source)
        for f, key, plus in KEY_CALL.findall(source):
            key = (wrapper.group(1) if wrapper and not f and "." not in key else "") + key
            (prefix if f or plus else literal).add(key.split("{")[0])
    return literal, prefix


def test_every_key_used_in_code_is_in_the_catalogs():
    literal, prefix = _used_keys()
    assert len(literal) > 300 and len(prefix) > 20  # the pattern still finds the call sites
    for lang in LANGUAGES:
        keys = set(strings(lang))
        assert sorted(literal - keys) == [], lang
        assert sorted(p for p in prefix if not any(k.startswith(p) for k in keys)) == [], lang


def test_a_missing_string_logs_once(caplog):
    i18n._missing.cache_clear()
    with caplog.at_level(logging.WARNING, logger="explorer.text.i18n"):
        assert t("no.such.key.here", "vi", x=1) == "no.such.key.here"
        assert t("no.such.key.here", "vi", x=2) == "no.such.key.here"
        t("home.title", "vi")
    assert [r.getMessage() for r in caplog.records] == ["i18n: no vi string for 'no.such.key.here'; showing the key"]


# ---- no English hard-coded where a person reads it -------------------------------------------
# The Vietnamese page test reads what each page shows and catches English that comes from en.json;
# a literal typed into a page or a chart would slip past it. These scans read the source instead.

import ast  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ST_ELEMENTS = {"title", "header", "subheader", "caption", "markdown", "write", "text", "info", "warning", "error",
               "success", "toast", "button", "download_button", "link_button", "page_link", "selectbox", "radio",
               "toggle", "checkbox", "multiselect", "segmented_control", "pills", "text_input", "text_area",
               "number_input", "slider", "select_slider", "file_uploader", "metric", "expander", "tabs",
               "popover", "status", "spinner", "progress"}
CHART_TEXT = {"title", "title_text", "name", "text", "texttemplate", "hovertemplate", "xaxis_title",
              "yaxis_title", "legend_title_text", "annotation_text"}
WORD = re.compile(r"[A-Za-z]{2,}")
FORMAT = re.compile(r"%\{[^}]*\}|<[^>]*>|\{[^}]*\}")  # plotly placeholders, HTML tags, format fields


def _literals(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)]
    return []


PATH = re.compile(r"[\w.-]+(/[\w.-]+)+")  # an example path such as a placeholder's, the same in every language


def _words(texts: list[str]) -> list[str]:
    return [s for s in texts if WORD.search(FORMAT.sub("", s)) and not s.lstrip().startswith("<")
            and not PATH.fullmatch(s)]


def english_in_pages(source: str) -> list[str]:
    """Literal words given to a Streamlit element (its label, body, help or placeholder)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ST_ELEMENTS:
            args = [*node.args, *(k.value for k in node.keywords if k.arg in ("label", "help", "placeholder", "body"))]
            found += [f"{node.lineno}: {s!r}" for a in args for s in _words(_literals(a))]
    return found


def english_in_charts(source: str) -> list[str]:
    """Literal words in a chart's titles, trace names, texts and hovers."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            found += [f"{node.lineno}: {s!r}" for k in node.keywords if k.arg in CHART_TEXT
                      for s in _words(_literals(k.value))]
    return found


def test_pages_and_charts_take_their_words_from_the_language_files():
    pages = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    found = {str(p.relative_to(ROOT)): english_in_pages(p.read_text()) for p in pages}
    found |= {str(p.relative_to(ROOT)): english_in_charts(p.read_text())
              for p in sorted((ROOT / "explorer" / "plots").glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_scans_find_a_literal():
    assert english_in_pages('st.button("Run it", key="x")\nst.caption(t("ok"))') == ["1: 'Run it'"]
    assert english_in_charts('go.Bar(hovertemplate="dim %{x}: %{y}")') == ["1: 'dim %{x}: %{y}'"]
    assert english_in_charts('go.Bar(hovertemplate=f"{name} %{{x}}<extra></extra>")') == []


def test_vietnamese_spells_vector_one_way():
    """Once "vectơ" in 24 messages and "vector" in 20 others. One spelling, the Vietnamese textbooks' "vectơ"
    (English code names such as `pooler_output` are not words of the text and stay as they are)."""
    import re

    cat = i18n.catalog("vi")
    mixed = {k: m.string for k, m in cat.messages.items()
             if re.search(r"\bvectors?\b", " ".join(m.string) if isinstance(m.string, tuple) else m.string, re.I)}
    assert not mixed, mixed
    assert sum("vectơ" in (" ".join(m.string) if isinstance(m.string, tuple) else m.string).lower()
               for m in cat.messages.values()) >= 40
