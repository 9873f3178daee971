"""`scan`: every check of a checkpoint on a CSV (explorer.scan), as one report: text, --json (the documented
contract), a standalone HTML page (--out) and a CSV of the rows and their flags (--out-csv).

Every output path is checked before any work, and a command's outputs are written all or none
(explorer.results.write_new_files). On a terminal, stderr shows the scan's progress and an estimate of the time
left; piped or redirected, stderr keeps to the one-line contract."""
from __future__ import annotations

import contextlib
import sys

from explorer.cli.common import (UsageError, bounded, device_option, is_main_process, max_rows_option, pair_options,
                                 quiet_transformers)
from explorer.text.i18n import LANGUAGES


def add_parser(sub) -> None:
    s = sub.add_parser("scan", help="one report of what is wrong with a checkpoint on a CSV and its labels")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--baseline", help="a baseline checkpoint to compare --checkpoint with on the same rows: "
                                      "both are scanned; the report says which rows changed and whether the "
                                      "difference is real (McNemar)")
    s.add_argument("--csv", required=True)
    s.add_argument("--text-column")
    s.add_argument("--label-column", help="the column of labels, read as one label per row whatever its cells hold "
                                          "(without one, only the checks that need none run)")
    pair_options(s)
    device_option(s)
    max_rows_option(s)
    s.add_argument("--batch-size", type=bounded(int, 1, 4096), default=64, help="rows per forward pass (default 64)")
    s.add_argument("--seed", type=bounded(int, 0, 2**31 - 1), default=0,
                   help="seeds the typos, splits and samples: a whole number from 0 to 2,147,483,647 (default 0)")
    s.add_argument("--out", help="write the standalone HTML report to this new file (never overwritten)")
    s.add_argument("--out-csv", help="write the rows and their flags to this new CSV (never overwritten)")
    s.add_argument("--lang", choices=tuple(LANGUAGES), default="en", help="the HTML report's language (default en)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import check_new_files, strict_json, write_new_files

    # Refused before any costly work, torch's import included: a missing folder, a taken name, the same path twice.
    check_new_files([p for p in (args.out, args.out_csv) if p is not None])
    from explorer.data.dataset import read_csv
    from explorer.model.checkpoints import load_checkpoint
    from explorer.scan import scan_table
    from explorer.scan.baseline import scan_against

    quiet_transformers()
    table = read_csv(args.csv, max_rows=args.max_rows)
    note = single_label_note(table, args.label_column)
    if note:
        print(f"note: {note}", file=sys.stderr)
    ck = load_checkpoint(args.checkpoint, device=args.device)
    baseline = load_checkpoint(args.baseline, device=args.device) if args.baseline is not None else None

    def one(c, progress):
        return scan_table(c, table, text_column=args.text_column, label_column=args.label_column,
                          text_pair_column=args.text_pair_column, seed=args.seed, batch_size=args.batch_size,
                          progress=progress)
    with terminal_progress() as progress:
        report = one(ck, progress) if baseline is None else scan_against(one, ck, baseline=baseline,
                                                                                  progress=progress)
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    files = {}
    if args.out is not None:
        files[args.out] = report.to_html(args.lang).encode("utf-8")
    if args.out_csv is not None:
        files[args.out_csv] = report.flags_csv()
    write_new_files(files)  # all of them or none
    if args.json:
        print(strict_json(report.to_dict(), ensure_ascii=False))
        return 0
    print(f"{report.rows} rows; {report.checkpoint}; {report.seconds:.1f} s; "
          f"{len(report.by_severity('major'))} major, {len(report.by_severity('minor'))} minor")
    for f in report.findings:
        print(f"{f.severity:<6} {f.check}: {f.message}")
    if report.baseline is not None:
        print(report.baseline_caption())
    for check, why in report.not_applicable:
        print(f"n/a    {check}: {why}", file=sys.stderr)
    return 0


def single_label_note(table, label_column: str | None) -> str | None:
    """What --label-column's cells would have been read as, when not one label per row (label sets, scores): the
    scan reads a named column as one label per row, and says so."""
    from explorer.data.dataset import label_shape
    from explorer.model.problem import ProblemType

    column = (label_column or "").strip()
    if not column or "," in column or column not in table.frame.columns:
        return None
    kind = label_shape(table.frame, (column,))
    if kind == ProblemType.SINGLE:
        return None
    return str(UsageError("note_read_single", column=column, kind=str(kind)))


@contextlib.contextmanager
def terminal_progress():
    """The scan's progress(fraction, message) drawn as a tqdm bar with the time left, on stderr when it is a
    terminal; None (nobody listening) otherwise, so piped or redirected stderr holds only one-line messages."""
    if not sys.stderr.isatty() or not is_main_process():
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(total=1.0, file=sys.stderr, leave=False, dynamic_ncols=True,
               bar_format="scan {percentage:3.0f}%|{bar}| {elapsed} elapsed, {remaining} left {postfix}")

    def update(fraction: float, message: str = "") -> None:
        bar.n = min(1.0, max(0.0, fraction))
        bar.set_postfix_str(message[:40], refresh=False)
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
