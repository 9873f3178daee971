"""Imports only go down: every import in explorer/ (function-level ones too, read with `ast`) goes to a module
of the same layer or a lower one, and no modules import each other in a circle.

Layers, lowest first (the package map of docs/architecture.md): resources (where files are on disk: the catalogues in text/
read from it), text, results, runtime, problem types (model/problem.py: what a label column is, shared by data
and models), data input (data/dataset.py, names.py, tags.py: reading a file needs no model), model, label
mapping (data/mapping.py: a checkpoint's labels against the data's, which explain maps given labels with),
explain, the rest of data/ (labels, audit, subwords, tag_report: checks that run a model), train, plots, teach, ui;
then the public surface on top: api, figures, the package itself (`explorer/__init__`, which re-exports api and
figures lazily), cli and __main__. A layer is a package, or the modules of a package named in it (the more
specific entry wins). Inside a layer, modules may import each other as long as they form no cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "explorer"

PROBLEM_TYPES = ("model.problem",)
DATA_INPUT = ("data.dataset", "data.names", "data.tags", "data.words")
LABEL_MAPPING = ("data.mapping",)
LAYERS = ["resources", "text", "results", "runtime", PROBLEM_TYPES, DATA_INPUT, "model", LABEL_MAPPING, "explain",
          "data", "train", "scan", "plots", "teach", "ui", "api", "figures", "__init__", "cli", "__main__"]


def layer_keys(entry: str | tuple[str, ...]) -> tuple[str, ...]:
    return entry if isinstance(entry, tuple) else (entry,)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "_app" not in p.parts}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The explorer modules `name` imports, anywhere in its body. `from pkg import x` counts as importing
    pkg.x where that is a module, else pkg."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "explorer":
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "explorer":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return {m for m in found if m in known and m != name}


def layer(name: str) -> int:
    """The index in LAYERS of the module `name`: its own entry (`data.dataset`) before its package's (`data`)."""
    parts = name.split(".")
    module, package = ".".join(parts[1:3]), parts[1] if len(parts) > 1 else "__init__"
    for key in (module, package):
        for i, entry in enumerate(LAYERS):
            if key in layer_keys(entry):
                return i
    raise KeyError(name)


def graph() -> nx.DiGraph:
    mods = modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for target in imports(name, path, set(mods)):
            # a module importing a submodule imports its package's __init__ too; a package's __init__ that
            # re-exports its own modules is the package's face, not a dependency of them
            g.add_edge(name, target)
    return g


def test_every_module_has_a_layer():
    packages = {key for entry in LAYERS for key in layer_keys(entry)}
    missing = [m for m in modules() if (m.split(".")[1] if "." in m else "__init__") not in packages]
    assert not missing, f"modules outside every layer (add them to LAYERS): {missing}"


def test_imports_only_go_down():
    upward = sorted(f"{a} -> {b}" for a, b in graph().edges if layer(b) > layer(a))
    assert not upward, f"{len(upward)} upward imports:\n" + "\n".join(upward)


def test_no_cycles():
    cycles = sorted(" -> ".join(c) for c in nx.simple_cycles(graph()))
    assert not cycles, f"{len(cycles)} import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("source, expected", [
    ("import explorer.model.heads\n", {"explorer.model.heads"}),
    ("def f():\n    from explorer.plots import attribution\n", {"explorer.plots.attribution"}),
    ("from ..model import heads as h\n", {"explorer.model.heads"}),
    ("from .session import x\n", {"explorer.ui.session"}),
    ("from explorer.model.heads import Step\n", {"explorer.model.heads"}),
])
def test_the_reader_sees_every_kind_of_import(tmp_path, source, expected):
    path = tmp_path / "m.py"
    path.write_text(source)
    known = {"explorer.model.heads", "explorer.plots.attribution", "explorer.plots", "explorer.ui.session",
             "explorer.model", "explorer.ui"}
    assert imports("explorer.ui.m", path, known) == expected


def test_an_upward_import_is_caught():
    g = nx.DiGraph([("explorer.model.analysis", "explorer.explain.attention")])
    assert [e for e in g.edges if layer(e[1]) > layer(e[0])]


def test_a_module_named_in_a_layer_sits_apart_from_its_package():
    assert layer("explorer.data.dataset") < layer("explorer.model.checkpoints") < layer("explorer.data.mapping")
    assert layer("explorer.data.mapping") < layer("explorer.explain.dataset") < layer("explorer.data.labels")
    assert layer("explorer.model.problem") < layer("explorer.data.dataset")


def private_uses(path: Path, known: set[str]) -> list[str]:
    """Private names (`_x`, not dunders) one module takes from another explorer module: imported by name, or
    read as an attribute of an imported module."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    aliases, found = {}, []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.split(".")[0] != "explorer":
                continue
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{name}: {target}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    return found


def test_no_private_names_across_modules():
    mods = modules()
    found = sorted({use for path in mods.values() for use in private_uses(path, set(mods))})
    assert not found, f"{len(found)} private names used from another module:\n" + "\n".join(found)
