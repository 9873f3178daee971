"""Every page (app.py's PAGES, so pages added later are covered), reached after the language was switched once in
the sidebar, speaks Vietnamese: it shows no English string from en.json (widget labels, options, text, alerts,
metrics, table headers, chart titles, axes, legends and colour bars; strings that are the same in both languages
are allowed), and its name in the sidebar's navigation is its title, in English before the switch and in
Vietnamese after it."""
import ast
import json
import re
from pathlib import Path

import pytest
import streamlit as st
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from explorer.text.i18n import strings, t

ROOT = Path(__file__).resolve().parent.parent
ROWS = ast.literal_eval(re.search(r"^PAGES = (\[.*?^\])", (ROOT / "app.py").read_text(), re.S | re.M).group(1))
PAGES = [row[0] for row in ROWS]
SLUGS = {path: "" if default else slug for path, _, slug, _, default in ROWS}  # the default page's path is ""
CONTENT = {"app.text_default"}  # what the model reads, not UI: English on purpose (say so in vi)
# The demo CSV's column names, offered as they are (the pair picker shows them on the Audit and Fine-tune pages too,
# the rationale picker on Dataset explanations).
USER_DATA = {page: {"text", "label"} for page in ("pages/data.py", "pages/audit.py", "pages/finetune.py", "pages/scan.py",
                                                  "pages/explain_data.py")}
CHART_KEYS = ("text", "name")


def _chart_texts(spec: dict) -> list[str]:
    layout, out = spec.get("layout", {}), []
    for axis in [k for k in layout if k.startswith(("xaxis", "yaxis"))] + ["title", "legend"]:
        part = layout.get(axis) or {}
        out.append(part.get("text") if axis == "title" else (part.get("title") or {}).get("text"))
    for trace in spec.get("data", []):
        out.append(trace.get("name"))
        for holder in (trace, trace.get("marker") or {}):
            out.append(((holder.get("colorbar") or {}).get("title") or {}).get("text"))
        for axis in ("x", "y"):
            vals = trace.get(axis)
            if isinstance(vals, list) and vals and all(isinstance(v, str) for v in vals):
                out.extend(vals)
    return [s for s in out if isinstance(s, str) and s]


def _strings_of(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings_of(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings_of(v)]
    return []


def shown(at: AppTest) -> list[str]:
    """Every text the page puts in front of a person (the main area and the sidebar)."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None and type(node).__name__ not in ("Block",):
            d = MessageToDict(proto)
            if "spec" in d and isinstance(d["spec"], str):  # a plotly chart
                out.extend(_chart_texts(json.loads(d.pop("spec"))))
            d.pop("data", None)  # arrow bytes: read through .value below
            out.extend(_strings_of(d))
        value = getattr(node, "value", None) if type(node).__name__ in ("Dataframe", "Table") else None
        if value is not None:
            out.extend(str(c) for c in value.columns)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    return out


def english_left(texts: list[str]) -> list[str]:
    en, vi = strings("en"), strings("vi")
    whole = set(texts)
    joined = "\n".join(texts)
    left = []
    for key, text in en.items():
        if key in CONTENT or vi.get(key) == text or not text.strip():
            continue
        pieces = [p.strip() for p in re.split(r"\{[^}]*\}", text)]
        if len(pieces) == 1:
            hit = text in whole or (len(text) >= 16 and text in joined)
        else:  # a template: its longest literal part
            longest = max(pieces, key=len)
            hit = len(longest) >= 12 and longest in joined
        if hit and text not in vi.values():
            left.append(f"{key}: {text[:60]}")
    return left


@pytest.fixture
def navigation(monkeypatch) -> dict[str, str]:
    """{url path: title} of the pages app.py's last run gave st.navigation: the names the sidebar lists. (The
    script reads st.navigation when it runs, in this process: the wrapper sees what the app passes.)"""
    names: dict[str, str] = {}
    real = st.navigation

    def navigation(pages, *args, **kwargs):
        names.clear()
        names.update({page.url_path: page.title for page in pages})
        return real(pages, *args, **kwargs)

    monkeypatch.setattr(st, "navigation", navigation)
    return names


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.slow
def test_page_in_vietnamese_has_no_english_left(path, navigation):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    english = dict(navigation)
    # switched once, in the sidebar, on the first page; then this page is opened
    at.sidebar.selectbox(key=_language_key(at)).set_value("vi").run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [s for s in shown(at) if s not in USER_DATA.get(path, ())]
    assert len(texts) > 5
    assert english_left(texts) == []
    # the sidebar's name for this page is its title, in each language
    key = next(key for p, key, *_ in ROWS if p == path)
    assert english[SLUGS[path]] == t(f"{key}.title", "en") != t(f"{key}.title", "vi") == navigation[SLUGS[path]]
    assert at.title[0].value == navigation[SLUGS[path]]


def _language_key(at: AppTest) -> str:
    """The key of the sidebar's language list (labelled in English before the switch)."""
    (box,) = [b for b in at.sidebar.selectbox if b.label == t("app.language", "en")]
    return box.key
