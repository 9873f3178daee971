"""The public functions' argument checks: each argument's type, NaN and infinity, sign and range, before any work,
so a caller gets one ExplorerError line, never what the core happens to raise deep inside (an AttributeError in
the loader, a MemoryError minutes into a 10**9-step integral). One home for explorer/api.py and the callable
package explorer.scan, which sits below api."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from explorer.text.errors import ExplorerError

SEEDS = (0, 2**32 - 1)  # what numpy, torch and sklearn all accept (the CLI's --seed)
STEPS = (1, 10_000)  # lig's fixed steps (the CLI's --steps)
FOLDS = (2, 100)
LENGTHS = (1, 100_000)  # tokens per text (the CLI's --max-length)
COUNTS = (1, 2**31 - 1)  # rows, samples, batch sizes, windows, token positions


def shown(value) -> str:
    """`value` in a message: short, and never str() of a huge int (past 4,300 digits Python refuses it)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and int(value).bit_length() > 64:
        return f"a whole number of about {int(int(value).bit_length() * math.log10(2)):,} digits"
    if value is None or isinstance(value, (str, bytes, bool, int, float, np.number)):
        return repr(value)[:40]
    return type(value).__name__


def require(ok: bool, function: str, argument: str, value, expected: str) -> None:
    if not ok:
        raise ExplorerError("api_argument", function=function, argument=argument, expected=expected,
                            value=shown(value))


def whole(function: str, argument: str, value, bounds: tuple[int, int], optional: bool = False) -> int | None:
    """`value` as an int within `bounds`; None passes where `optional`."""
    if optional and value is None:
        return None
    lo, hi = bounds
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and lo <= value <= hi
    require(ok, function, argument, value, f"a whole number from {lo:,} to {hi:,}" + (" or None" if optional else ""))
    return int(value)


def real(function: str, argument: str, value, above: float, most: float) -> float:
    """`value` as a finite float in (above, most]."""
    ok = (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
          and math.isfinite(value) and above < value <= most)
    require(ok, function, argument, value, f"a finite number above {above} and at most {most}")
    return float(value)


def text(function: str, argument: str, value, optional: bool = False) -> str | None:
    require(isinstance(value, str) or (optional and value is None), function, argument, value,
          "a string or None" if optional else "a string")
    return value


def items(value) -> list | None:
    """A list of `value`'s items where it is a collection (list, tuple, array, Series, set, range), else None:
    a string is one value, not its characters."""
    if isinstance(value, (list, tuple, np.ndarray, pd.Series, pd.Index, set, frozenset, range)):
        return list(value)
    return None


def columns(function: str, **names) -> None:
    """Column-name arguments: each a string, or None to guess."""
    for argument, value in names.items():
        text(function, argument, value, optional=True)


def flag(function: str, argument: str, value) -> bool:
    require(isinstance(value, (bool, np.bool_)), function, argument, value, "True or False")
    return bool(value)


def progress(function: str, value) -> None:
    require(value is None or callable(value), function, "progress", value, "a function or None")


def texts(function: str, argument: str, value, optional: bool = False) -> list[str] | None:
    """A list of strings (a list, tuple, array or Series of them); None passes where `optional`."""
    if optional and value is None:
        return None
    got = items(value)
    require(got is not None and all(isinstance(t, str) for t in got), function, argument, value,
          "a list of strings" + (" or None" if optional else ""))
    return got
