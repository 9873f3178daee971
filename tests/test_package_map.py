"""The package map of docs/architecture.md matches the folders: every package of explorer/ has its bullet in the
layer order tests/test_layers.py holds, and the table of modules under it is generated from each module's docstring,
whose first sentence says the module's one job. After adding, moving or re-describing a module, run
`.venv/bin/python tests/test_package_map.py` to rewrite the table."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_layers import LAYERS, PACKAGE, layer, module_name  # noqa: E402

ARCHITECTURE = ROOT / "docs" / "architecture.md"
START, END = "<!-- package-map:start (tests/test_package_map.py writes this table) -->", "<!-- package-map:end -->"


# A full stop after these does not end a sentence ("Guo et al. (2017)", "e.g. a", "vs. the").
ABBREVIATIONS = ("et al.", "e.g.", "i.e.", "etc.", "cf.", "vs.", "approx.", "Fig.", "No.")


def first_sentence(doc: str) -> str:
    """The docstring's first sentence: up to the first . ! or ? followed by a space (or the end) that does not close
    an abbreviation or leave a bracket open."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    for m in re.finditer(r"[.!?](?=\s|$)", paragraph):
        sentence = paragraph[:m.end()]
        if not sentence.endswith(ABBREVIATIONS) and sentence.count("(") <= sentence.count(")"):
            return sentence.replace("|", "\\|")
    return paragraph.replace("|", "\\|")


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
    return f"{START}\n\n### Every module and its one job\n\n{table()}\n\n{END}"


def test_every_module_says_its_one_job():
    missing = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "_app" not in p.parts
               and not (ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "").strip()]
    assert missing == []


def test_the_architecture_page_names_every_package_in_layer_order():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Package map"):text.index(START)]
    packages = sorted((p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()),
                      key=layer_of)
    places = [section.find(f"`explorer/{p.name}/`") for p in packages]
    assert -1 not in places, [p.name for p, i in zip(packages, places) if i < 0]
    assert places == sorted(places), \
        "the architecture page's bullets are not in tests/test_layers.py's layer order"


def test_the_architecture_module_table_is_generated_from_the_docstrings():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert START in text and END in text
    current = text[text.index(START):text.index(END) + len(END)]
    assert current == block(), \
        "run `.venv/bin/python tests/test_package_map.py` to rewrite docs/architecture.md's table"


def test_a_first_sentence_runs_past_abbreviations_and_brackets():
    """The table's row for a module is its whole first sentence: a citation's "et al." or a full stop inside
    brackets does not cut it."""
    doc = "The ECE (as Guo et al. define it. Roughly.) over 15 bins, e.g. of the top probability. More here."
    assert first_sentence(doc) == "The ECE (as Guo et al. define it. Roughly.) over 15 bins, e.g. of the top probability."
    assert first_sentence("One job! Then more.") == "One job!"
    assert first_sentence("No full stop") == "No full stop"


def test_the_layer_diagram_stacks_the_layers_in_order():
    """The diagram at the top of docs/architecture.md: one row per layer below the public surface, lowest last."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    diagram = text[text.index("```text"):text.index("```", text.index("```text") + 3)]
    rows = re.findall(r"^\s*\| (\w+)(?:/|\.py)\s", diagram, re.M)
    # a layer of single modules is drawn as its first module's file name
    below_api = [e if isinstance(e, str) else e[0].rsplit(".", 1)[1] for e in LAYERS[:LAYERS.index("api")]]
    assert rows == below_api[::-1], rows


if __name__ == "__main__":
    text = ARCHITECTURE.read_text(encoding="utf-8")
    if START in text:
        text = text[:text.index(START)] + block() + text[text.index(END) + len(END):]
    else:  # first time: after the package map's bullets
        at = text.index("- Outside the package:")
        at = text.index("\n", at) + 1
        text = text[:at] + "\n" + block() + "\n" + text[at:]
    ARCHITECTURE.write_text(text, encoding="utf-8")
    print(f"wrote {ARCHITECTURE}")
