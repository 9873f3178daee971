"""`scan`: every check of a checkpoint on a CSV (explorer.scan), as one report: text, --json (the documented
contract), a standalone HTML page (--out) and a CSV of the rows and their flags (--out-csv)."""
from __future__ import annotations

import json
import os
import sys

from explorer.cli.common import (UsageError, bounded, device_option, is_main_process, pair_options,
                                 quiet_transformers)


def add_parser(sub) -> None:
    from explorer.data.dataset import MAX_ROWS

    s = sub.add_parser("scan", help="one report of what is wrong with a checkpoint on a CSV and its labels")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--csv", required=True)
    s.add_argument("--text-column")
    s.add_argument("--label-column", help="the column of labels (without one, only the checks that need none run)")
    pair_options(s)
    device_option(s)
    s.add_argument("--max-rows", type=bounded(int, 1, 10**9), default=MAX_ROWS,
                   help=f"read at most this many rows (default {MAX_ROWS:,}, the app's limit)")
    s.add_argument("--batch-size", type=bounded(int, 1, 4096), default=64, help="rows per forward pass (default 64)")
    s.add_argument("--seed", type=bounded(int, 0, 2**31 - 1), default=0, help="typos, splits and samples (default 0)")
    s.add_argument("--out", help="write the standalone HTML report to this new file (never overwritten)")
    s.add_argument("--out-csv", help="write the rows and their flags to this new CSV (never overwritten)")
    s.add_argument("--lang", choices=("en", "vi"), default="en", help="the HTML report's language (default en)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=run)


def run(args) -> int:
    from explorer.cli.inspect_data import write_new
    from explorer.data.dataset import read_csv
    from explorer.model.checkpoints import load_checkpoint
    from explorer.scan import scan_table

    quiet_transformers()
    for path in (args.out, args.out_csv):  # refused before any costly work
        if path is not None and os.path.lexists(path):
            raise UsageError("scan_out_exists", path=path)
    table = read_csv(args.csv, max_rows=args.max_rows)
    ck = load_checkpoint(args.checkpoint, device=args.device)
    report = scan_table(ck, table, args.text_column, args.label_column, args.text_pair_column, seed=args.seed,
                         batch_size=args.batch_size)
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    if args.out is not None:
        write_new(args.out, report.to_html(args.lang).encode("utf-8"))
    if args.out_csv is not None:
        write_new(args.out_csv, report.flags_csv())
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return 0
    print(f"{report.rows} rows; {report.checkpoint}; {report.seconds:.1f} s; "
          f"{len(report.by_severity('major'))} major, {len(report.by_severity('minor'))} minor")
    for f in report.findings:
        print(f"{f.severity:<6} {f.check}: {f.message}")
    for check, why in report.not_applicable:
        print(f"n/a    {check}: {why}", file=sys.stderr)
    return 0
