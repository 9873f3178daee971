"""House rules that keep the core a plain library."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UI = ROOT / "explorer" / "ui"  # the one package allowed to import streamlit
STREAMLIT = re.compile(r"^\s*(import streamlit|from streamlit)", re.M)


def test_only_the_ui_package_imports_streamlit():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "explorer").rglob("*.py")
                 if STREAMLIT.search(p.read_text()) and UI not in p.parents]
    assert offenders == []
    assert re.search(r"^import streamlit", (UI / "session.py").read_text(), re.M)


def test_the_core_sets_no_torch_threads_at_import():
    """Thread count is the server's choice (explorer.ui), not a side effect of importing a core module."""
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "explorer").rglob("*.py")
                 if re.search(r"^[^#\n]*set_num_threads\(", p.read_text(), re.M) and UI not in p.parents]
    assert offenders == []


def test_readme_quick_start_has_exactly_the_two_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^\s*(make \w+)\s*$", block, re.M)
    assert commands == ["make run", "make test"]


PAGES = sorted((ROOT / "pages").glob("*.py"))
MAX_PAGE_LINES = 30  # an entry: it reads its widgets, calls explorer once and draws through its view module


def test_pages_are_thin():
    long = {p.name: n for p in PAGES if (n := len(p.read_text().splitlines())) > MAX_PAGE_LINES}
    assert PAGES and long == {}


# What a page leaves to explorer.ui: session state, a data's hash, starting work, switching page.
PAGE_MACHINERY = re.compile(r"session_state|hashlib|\bsha1\b|ui\.run\(|switch_page\(")


def test_the_data_pages_have_one_shape():
    """A page that runs one job on the Data page's data opens with ui.open_data_page and runs it with
    ui.run_on_data (explorer/ui/datapage.py); no page keeps state, hashes data, starts work or switches page itself;
    in explorer/ui the data's hash is taken in one place, and a row opens on another page through one function."""
    assert all(PAGE_MACHINERY.search(bad) for bad in ("ss = st.session_state", "import hashlib", "hashlib.sha1(raw)",
                                                      'ui.run("audit", key, work)', "st.switch_page(p)"))
    texts = {p.stem: p.read_text() for p in PAGES}
    runs = {name for name, text in texts.items() if "ui.run_on_data(" in text}
    assert runs == {"audit", "explain_data", "scan"}
    assert all("ui.open_data_page(" in texts[name] for name in runs)
    assert {name: PAGE_MACHINERY.findall(text) for name, text in texts.items() if PAGE_MACHINERY.search(text)} == {}
    ui = {p.relative_to(ROOT).as_posix(): p.read_text() for p in UI.rglob("*.py")}
    assert [f for f, text in ui.items() if "hashlib" in text] == ["explorer/ui/session.py"]
    assert [f for f, text in ui.items() if "switch_page(" in text] == ["explorer/ui/datapage.py"]


def shared_cache_tuples(source: str) -> list[str]:
    """Keys written out as tuples where the shared cache (ANALYSES) is read or filled."""
    import ast

    return [ast.unparse(node.args[0]) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("get", "get_or_compute")
            and "ANALYSES" in ast.unparse(node.func) and node.args and isinstance(node.args[0], ast.Tuple)]


def test_cache_keys_are_built_from_the_selection_in_one_place():
    """The shared cache's keys for the sidebar's picks come from cache.selection_key (Selection.key), never a tuple
    spelled out at the call."""
    assert shared_cache_tuples('ANALYSES.get_or_compute(("tokens", sel.name, sel.text), f)')  # the check bites
    assert not shared_cache_tuples('ANALYSES.get_or_compute(selection_key("tokens", sel), f)')
    found = {p.name: keys for p in UI.rglob("*.py") if (keys := shared_cache_tuples(p.read_text()))}
    assert found == {}


def test_sidebar_defaults_are_set_in_one_place():
    """app.py starts a session with session.sidebar_defaults(), which selection() also falls back on: no
    setdefault of a sidebar value, nor a literal default for one, in app.py."""
    app = (ROOT / "app.py").read_text()
    assert "ui.set_sidebar_defaults()" in app
    assert not re.search(r'ss\.setdefault\("(lang|checkpoint|head|text|text_pair|seed|presenter)"', app)
    assert not re.search(r'sticky\("(lang|head)", "', app)


# A page reads widgets, calls explorer and renders: threads, locks and caches live in explorer.ui
# (jobs, memo) and explorer.runtime, where they are bounded and shared.
OWN_MACHINERY = re.compile(r"\bthreading\b|\bLock\(|\bSemaphore\(|cache_data|cache_resource|lru_cache|\bcache\b\s*="
                           r"|^\w*(cache|memo)\w*\s*(:[^=]+)?=\s*(\{|dict\(|OrderedDict\()", re.M | re.I)


def test_pages_keep_no_threads_locks_or_caches():
    offenders = {p.name: OWN_MACHINERY.findall(p.read_text()) for p in PAGES}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_checks_catch_what_they_forbid():
    """The page checks are not vacuous: each forbidden form is found."""
    for bad in ("import threading", "LOCK = Lock()", "s = Semaphore(2)", "@st.cache_data", "@st.cache_resource",
                "@functools.lru_cache", "_cache = {}", "RESULTS_CACHE: dict = dict()", "memo = OrderedDict()"):
        assert OWN_MACHINERY.search(bad), bad
    assert not OWN_MACHINERY.search('ss.setdefault("data_fixed", {})\nr = ui.memo("attr", params)')
    assert POSITIONAL.search("name, _, _, seed = ui.selection()") and POSITIONAL.search("selection()[3]")
    assert not POSITIONAL.search("sel = selection()\nname, seed = ui.selection().name, ui.selection().seed")


# The sidebar's picks are a frozen dataclass read by field name, never unpacked by position.
POSITIONAL = re.compile(r",\s*\w+\s*=\s*(\w+\.)?selection\(\)(?!\.)|selection\(\)\s*\[|\*(\w+\.)?selection\(\)")


def test_selection_is_read_by_field_name():
    files = PAGES + [ROOT / "app.py"] + list((ROOT / "explorer").rglob("*.py"))
    offenders = [str(p.relative_to(ROOT)) for p in files if POSITIONAL.search(p.read_text())]
    assert offenders == []


def test_widget_persistence_keys_stay_inside_the_ui_package():
    """One mechanism (ui.sticky); its private keys are not spelled out in app.py, pages or tests."""
    files = PAGES + [ROOT / "app.py"] + [p for p in (ROOT / "tests").glob("*.py") if p.name != "test_layout.py"]
    offenders = [str(p.relative_to(ROOT)) for p in files if re.search(r"(?<!\w)_keep_|_sticky_keys|\bpersist\(", p.read_text())]
    assert offenders == []


def test_every_download_button_leaves_the_page_as_it_is():
    """A download button's default click reruns the script, which replaces the file the browser is about to
    fetch: on a loaded server the fetch came after the new run and found nothing (no download, seen in
    test_readonly_server with a core busy). on_click="ignore" downloads without a rerun."""
    import ast

    calls = [(p.name, node.lineno, {k.arg: getattr(k.value, "value", None) for k in node.keywords}.get("on_click"))
             for p in [*PAGES, *UI.rglob("*.py")] for node in ast.walk(ast.parse(p.read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "download_button"]
    assert len(calls) >= 10 and [c for c in calls if c[2] != "ignore"] == []
