"""The README's package map matches the folders (#30): every package of explorer/ has its bullet in the layer
order tests/test_layers.py holds, and the table of modules under it is generated from each module's docstring,
whose first sentence says the module's one job. After adding, moving or re-describing a module, run
`.venv/bin/python tests/test_package_map.py` to rewrite the table."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_layers import PACKAGE, layer, module_name  # noqa: E402

README = ROOT / "README.md"
START, END = "<!-- package-map:start (tests/test_package_map.py writes this table) -->", "<!-- package-map:end -->"


def first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.match(r"(.+?[.!?])(?=\s|$)", paragraph)
    return (m.group(1) if m else paragraph).replace("|", "\\|")


def layer_of(path: Path) -> int:
    """tests/test_layers.py's layer of a module or package folder (a package's own entry, not a module's)."""
    return layer(module_name(path) if path.suffix else "explorer." + path.name)


def table() -> str:
    files = [p for p in PACKAGE.rglob("*.py") if "_app" not in p.parts]
    rows = ["| module | its one job (the docstring's first sentence) |", "|---|---|"]
    for path in sorted(files, key=lambda p: (layer_of(p), p.parent != PACKAGE, str(p))):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        rows.append(f"| `{path.relative_to(ROOT)}` | {first_sentence(doc)} |")
    return "\n".join(rows)


def block() -> str:
    return f"{START}\n<details><summary>Every module and its one job</summary>\n\n{table()}\n\n</details>\n{END}"


def test_every_module_says_its_one_job():
    missing = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "_app" not in p.parts
               and not (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").strip()]
    assert missing == []


def test_the_readme_names_every_package_in_layer_order():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Package map"):text.index(START)]
    packages = sorted((p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()),
                      key=layer_of)
    places = [section.find(f"`explorer/{p.name}/`") for p in packages]
    assert -1 not in places, [p.name for p, i in zip(packages, places) if i < 0]
    assert places == sorted(places), "the README's bullets are not in tests/test_layers.py's layer order"


def test_the_readme_module_table_is_generated_from_the_docstrings():
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text
    current = text[text.index(START):text.index(END) + len(END)]
    assert current == block(), "run `.venv/bin/python tests/test_package_map.py` to rewrite the README's table"


if __name__ == "__main__":
    text = README.read_text(encoding="utf-8")
    if START in text:
        text = text[:text.index(START)] + block() + text[text.index(END) + len(END):]
    else:  # first time: after the package map's bullets
        at = text.index("- Outside the package:")
        at = text.index("\n", at) + 1
        text = text[:at] + "\n" + block() + "\n" + text[at:]
    README.write_text(text, encoding="utf-8")
    print(f"wrote {README}")
