"""The scan's checks: every module in this package is one check (or a family of them) that registers itself with
`explorer.scan.base.check`. `load` imports them all, so adding a check is adding a module here (and its messages):
nothing else lists them. The order they run in comes from what each declares it needs (`base.ordered`)."""
from __future__ import annotations

import importlib
import pkgutil


def load_checks() -> list[str]:
    """Import every check module of this package (idempotent); their names, sorted."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    for name in names:
        importlib.import_module(f"{__name__}.{name}")
    return names
