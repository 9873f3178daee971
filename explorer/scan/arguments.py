"""The scan's public entry points with every argument checked before any work (explorer/runtime/arguments.py),
as every public function's are: `explorer.scan(df, ck, ...)` (explorer.api.scan is this one) and `scan_rows`.
Here, below explorer.api, because the callable package explorer.scan goes through it and imports only go down."""
from __future__ import annotations

from typing import Sequence

from explorer.model.checkpoints import Checkpoint
from explorer.runtime import arguments as arg
from explorer.runtime.jobs import Progress
from explorer.scan import checks as check_modules
from explorer.scan import runner
from explorer.scan.baseline import scan_against
from explorer.scan.base import CHECKS, matches
from explorer.scan.report import ScanReport
from explorer.text.errors import ExplorerError


def check_options(function: str, ck, *, seed, batch_size, max_length, progress, checks) -> list[str] | None:
    """The options scan and scan_rows share, checked; `checks` as a list of check ids or prefixes, each of which
    must name a registered check (an unknown one would silently run nothing)."""
    if not isinstance(ck, Checkpoint):
        raise ExplorerError("api_not_a_checkpoint", kind=type(ck).__name__)
    arg.whole(function, "seed", seed, arg.SEEDS)
    arg.whole(function, "batch_size", batch_size, arg.COUNTS)
    arg.whole(function, "max_length", max_length, arg.LENGTHS)
    arg.progress(function, progress)
    if checks is None:
        return None
    wanted = [checks] if isinstance(checks, str) else arg.items(checks)
    arg.require(wanted is not None and len(wanted) > 0 and all(isinstance(w, str) for w in wanted), function, "checks",
              checks, "a list of check ids (or their prefixes) or None")
    check_modules.load_checks()
    known = [c.name for c in CHECKS]
    for w in wanted:
        if not any(matches(name, w) for name in known):
            groups = ", ".join(dict.fromkeys(name.split(".")[0] for name in known))  # the full list runs past a line
            raise ExplorerError("scan_unknown_check", check=w[:60], known=groups, example=known[0])
    return wanted


def scan(df, ck: Checkpoint, *, text: str | None = None, label: str | None = None, text_pair: str | None = None,
         seed: int = 0, batch_size: int = 64, max_length: int = 128, progress: Progress | None = None,
         checks: Sequence[str] | None = None, baseline: Checkpoint | None = None) -> ScanReport:
    """Every check that applies to `ck` on a DataFrame's rows, as one ScanReport (`explorer.scan(df, ck)`).
    Columns as `explorer.inspect` reads them (`text`, `label` guessed when None; `text_pair` the second text of
    sentence pairs, "" for one text); `seed` for typos, splits and samples; `batch_size` rows per forward pass;
    `max_length` tokens per row; `progress(fraction, message)` may raise to stop; `checks`: only the checks whose
    id is or starts with one of these (e.g. ["head", "calibration.ece"]). Row indices in the report are 0-based
    positions among the frame's rows. `baseline`: a checkpoint A to compare `ck` with on the same rows (both
    scanned; the report's `baseline` says what changed, explorer.scan.baseline)."""
    f = "scan"
    arg.columns(f, text=text, label=label, text_pair=text_pair)
    wanted = check_options(f, ck, seed=seed, batch_size=batch_size, max_length=max_length, progress=progress,
                           checks=checks)

    def one(c: Checkpoint, part: Progress | None) -> ScanReport:
        return runner.scan_frame(df, c, text=text, label=label, text_pair=text_pair, seed=seed,
                                 batch_size=batch_size, max_length=max_length, progress=part, checks=wanted)
    if baseline is None:
        return one(ck, progress)
    return scan_against(one, ck, baseline=baseline, progress=progress)


def scan_rows(ck: Checkpoint, texts: Sequence[str], *, given: Sequence[str] | None = None,
              pairs: Sequence[str] | None = None, seed: int = 0, batch_size: int = 64, max_length: int = 128,
              progress: Progress | None = None, checks: Sequence[str] | None = None) -> ScanReport:
    """Every check on `texts` (with `pairs`, sentence pairs) and their `given` labels (None: no labels), each
    argument checked first (explorer.scan.runner.scan_rows does the work). `checks`: as for `scan`."""
    f = "scan_rows"
    wanted = check_options(f, ck, seed=seed, batch_size=batch_size, max_length=max_length, progress=progress,
                           checks=checks)
    rows = arg.texts(f, "texts", texts)
    labels = arg.texts(f, "given", given, optional=True)
    second = arg.texts(f, "pairs", pairs, optional=True)
    arg.require(labels is None or len(labels) == len(rows), f, "given", given, "one label per text, or None")
    arg.require(second is None or len(second) == len(rows), f, "pairs", pairs, "one second text per text, or None")
    return runner.scan_rows(ck, rows, given=labels, pairs=second, seed=seed, batch_size=batch_size,
                            max_length=max_length,
                            progress=progress, checks=wanted)
