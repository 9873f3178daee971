"""Every UI string exists in both languages."""
import json

from explorer.text.i18n import I18N_DIR, LANGUAGES, strings, t


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
