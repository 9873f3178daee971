"""Arguments are read by name: the public functions of the library's API, explain, train, plot and scan modules
take at most two positional parameters, every option after them keyword-only; and the functions on the API page
document every parameter in a Google-style `Args:` section, so the page shows a parameter table for each."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import griffe
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("explorer.explain", "explorer.train", "explorer.plots", "explorer.scan")
MODULES = ("explorer.api", "explorer.figures")
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
# Functions that keep a third positional parameter, and why.
ALLOWED: dict[str, str] = {}


def _modules() -> list[str]:
    names = list(MODULES)
    for package in PACKAGES:
        names.append(package)
        path = importlib.import_module(package).__path__
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(path) if not m.ispkg]
    return names


def _public_functions():
    for name in _modules():
        module = importlib.import_module(name)
        for attr, f in vars(module).items():
            if inspect.isfunction(f) and f.__module__ == name and not attr.startswith("_"):
                yield f"{name}.{attr}", f


def test_public_functions_take_at_most_two_positional_parameters():
    functions = dict(_public_functions())
    assert len(functions) > 150 and "explorer.explain.attribution.attribute" in functions  # the walk finds them
    crowded = {name: [p.name for p in inspect.signature(f).parameters.values() if p.kind in POSITIONAL]
               for name, f in functions.items()}
    crowded = {name: params for name, params in crowded.items() if len(params) > 2 and name not in ALLOWED}
    assert crowded == {}, "make the options keyword-only (a `*` after the first one or two)"
    assert set(ALLOWED) <= set(functions), "an allowed function no longer exists"


def test_the_rule_catches_a_third_positional_parameter():
    def crowded(a, b, c=1):
        return a, b, c

    def named(a, b, *, c=1):
        return a, b, c

    counts = [sum(p.kind in POSITIONAL for p in inspect.signature(f).parameters.values()) for f in (crowded, named)]
    assert counts == [3, 2]


# ---- Args: sections ---------------------------------------------------------------------------------------------

def _documented() -> list[str]:
    """The functions and methods docs/api.md renders: its `::: path` entries, a module's and a class's `members`."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    out = []
    for path, options in re.findall(r"^::: ([\w.]+)\n((?:    .*\n)*)", text, re.M):
        members = re.search(r"members: \[([^\]]*)\]", options)
        out += [f"{path}.{m.strip()}" for m in members.group(1).split(",")] if members else [path]
    return out


@pytest.fixture(scope="module")
def loaded():
    return {name: griffe.load(name, search_paths=[str(ROOT)], resolve_aliases=False)
            for name in ("explorer.api", "explorer.figures", "explorer.scan.runner", "explorer.scan.report",
                         "explorer.scan.baseline", "explorer.explain.counterfactual")}


def _object(loaded, path: str):
    module = max((m for m in loaded if path.startswith(m + ".")), key=len)
    obj = loaded[module]
    for part in path[len(module) + 1:].split("."):
        obj = obj.members[part]
    return obj


def _documented_parameters(function) -> list[str] | None:
    sections = function.docstring.parse("google") if function.docstring else []
    tables = [s for s in sections if s.kind is griffe.DocstringSectionKind.parameters]
    return [p.name.lstrip("*") for p in tables[0].value] if tables else None


def test_every_function_on_the_api_page_documents_every_parameter(loaded):
    functions = [path for path in _documented() if _object(loaded, path).is_function]
    assert len(functions) >= 20 and "explorer.api.attribute" in functions and "explorer.figures.head_view" in functions
    missing = {}
    for path in functions:
        function = _object(loaded, path)
        wanted = [p.name for p in function.parameters if p.name != "self"]
        got = _documented_parameters(function)
        if wanted and got != wanted:
            missing[path] = (wanted, got)
    assert missing == {}, "give these an `Args:` section naming every parameter, in order"


def test_a_docstring_without_args_has_no_parameter_table():
    bare = griffe.Function("f", parameters=griffe.Parameters(griffe.Parameter("x")))
    bare.docstring = griffe.Docstring("Does a thing with x.", parent=bare)
    with_args = griffe.Function("g", parameters=griffe.Parameters(griffe.Parameter("x")))
    with_args.docstring = griffe.Docstring("Does a thing.\n\nArgs:\n    x: the thing.", parent=with_args)
    assert _documented_parameters(bare) is None and _documented_parameters(with_args) == ["x"]
