"""One concept, one class name: no class name is defined in two modules of explorer/ (nested classes too),
so a name met in a traceback, an import or the docs points at one place."""
from __future__ import annotations

import ast
from collections import defaultdict

from tests.test_layers import modules


def class_homes() -> dict[str, list[str]]:
    """class name -> the modules that define a class of that name (one entry per module)."""
    homes: dict[str, set[str]] = defaultdict(set)
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                homes[node.name].add(name)
    return {k: sorted(v) for k, v in homes.items()}


def test_every_class_name_has_one_module():
    assert {k: v for k, v in class_homes().items() if len(v) > 1} == {}


def test_the_check_sees_a_name_defined_twice(tmp_path, monkeypatch):
    # The check reads what modules() lists: two files that both define `Twin` must be caught.
    import tests.test_names as me
    for stem in ("a", "b"):
        (tmp_path / f"{stem}.py").write_text("def f():\n    class Twin:\n        pass\n")
    monkeypatch.setattr(me, "modules", lambda: {"a": tmp_path / "a.py", "b": tmp_path / "b.py"})
    assert me.class_homes()["Twin"] == ["a", "b"]


# The CLI's subcommand interface: every explorer/cli/<command>.py defines add_parser and run, read through the
# module (cli/__init__ walks them), never imported by name: one contract, not one name for several things.
CLI_PROTOCOL = {"add_parser", "run"}



def _reexports(node: ast.FunctionDef) -> bool:
    """Does the function hand over to a function of its own name elsewhere (`return core.analyze(...)`, or
    the name imported inside it, under any alias)? Then it re-exports that one, under the same name, on purpose."""
    aliases = {a.asname or a.name for i in ast.walk(node) if isinstance(i, ast.ImportFrom)
               for a in i.names if a.name == node.name}
    return any(isinstance(call, ast.Call) and (isinstance(call.func, ast.Attribute) and call.func.attr == node.name
                                               or isinstance(call.func, ast.Name) and call.func.id in aliases)
               for call in ast.walk(node))


def function_homes(paths: dict | None = None) -> dict[str, list[str]]:
    """public module-level function name -> the modules that define it, less those whose function re-exports
    another module's function of that name and the CLI's subcommand interface."""
    homes: dict[str, set[str]] = defaultdict(set)
    for name, path in (paths or modules()).items():
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_") \
                    and not _reexports(node) and not (name.startswith("explorer.cli.") and node.name in CLI_PROTOCOL):
                homes[node.name].add(name)
    return {k: sorted(v) for k, v in homes.items()}


def test_no_two_functions_share_a_name_unless_one_reexports_the_other():
    twice = {k: v for k, v in function_homes().items() if len(v) > 1}
    assert twice == {}


def test_the_function_check_sees_a_name_twice_and_lets_a_reexport_pass(tmp_path):
    (tmp_path / "a.py").write_text("def twin():\n    return 1\n\ndef shared(x):\n    return x\n")
    (tmp_path / "b.py").write_text("import a\n\ndef twin():\n    return 2\n\ndef shared(x):\n    return a.shared(x)\n")
    (tmp_path / "c.py").write_text("def shared(x):\n    from a import shared as core\n    return core(x)\n")
    homes = function_homes({"a": tmp_path / "a.py", "b": tmp_path / "b.py", "c": tmp_path / "c.py"})
    assert homes["twin"] == ["a", "b"] and homes["shared"] == ["a"]
