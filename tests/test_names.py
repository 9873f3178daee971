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
