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
