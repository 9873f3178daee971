"""House rules that keep the core a plain library."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLUE = {"state.py"}  # the one module allowed to import streamlit


def test_only_the_glue_module_imports_streamlit():
    offenders = [p.name for p in (ROOT / "explorer").rglob("*.py")
                 if re.search(r"^\s*(import streamlit|from streamlit)", p.read_text(), re.M) and p.name not in GLUE]
    assert offenders == []
    assert re.search(r"^import streamlit", (ROOT / "explorer" / "state.py").read_text(), re.M)


def test_readme_quick_start_has_exactly_the_two_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^\s*(make \w+)\s*$", block, re.M)
    assert commands == ["make run", "make test"]
