"""`inspect-data`: what is wrong with a CSV's labels (or a token file's tags), against a checkpoint when given;
optionally the mislabelled rows and a corrected CSV."""
from __future__ import annotations

import sys

from explorer.cli.common import (UsageError, bounded, device_option, dtype_option, is_main_process, max_rows_option,
                                 pair_options, quiet_transformers, tag_data, tag_options, token_data)


def add_parser(sub) -> None:
    d = sub.add_parser("inspect-data", help="report what is wrong with a CSV's labels")
    d.add_argument("--csv", required=True)
    d.add_argument("--text-column")
    d.add_argument("--label-column", help="a column, or several 0/1 columns separated by commas")
    pair_options(d)
    tag_options(d)
    d.add_argument("--checkpoint", help="also check the labels against this checkpoint's predictions")
    device_option(d)
    dtype_option(d)
    d.add_argument("--label-issues", action="store_true",
                   help="also find mislabelled rows (K-fold heads on the checkpoint's frozen features + cleanlab)")
    d.add_argument("--folds", type=bounded(int, 1, 100), default=5, help="folds for --label-issues (default 5)")
    max_rows_option(d)
    d.add_argument("--show", type=bounded(int, 0, 10**6), default=20, help="label issues listed without --json")
    d.add_argument("--out-csv", help="write the CSV with the suggested mapping applied to this new file "
                                     "(needs --checkpoint; an existing file is never overwritten)")
    d.add_argument("--raw-csv", action="store_true",
                   help="write CSV cells as they came: by default a text cell starting with = + - @, a tab or "
                        "a carriage return gets a leading ' so a spreadsheet does not run it as a formula")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=run)


def run(args) -> int:
    from explorer.data.dataset import read_csv
    from explorer.data.labels import corrected_csv, label_report
    from explorer.results import check_new_files, strict_json, write_new_files

    quiet_transformers()
    if args.label_issues and not args.checkpoint:
        from explorer.data.dataset import DataError

        raise DataError("audit_needs_checkpoint")
    if args.out_csv is not None:  # refused before any costly work
        if not args.checkpoint:
            raise UsageError("out_csv_needs_checkpoint")
        check_new_files([args.out_csv])
    if token_data(args):
        return inspect_tags(args)
    table = read_csv(args.csv, max_rows=args.max_rows)
    ck = None
    if args.checkpoint:
        from explorer.data.mapping import check_kind
        from explorer.model.checkpoints import load_checkpoint
        from explorer.runtime.precision import at_precision

        # --dtype: the audit's feature pass on the cast copy (the folds' classifiers train on float32 features)
        ck = at_precision(load_checkpoint(args.checkpoint, device=args.device), args.dtype)
        check_kind(ck, token_data=False)
    report = label_report(table, args.text_column, args.label_column, ck, text_pair_column=args.text_pair_column)
    found = None
    if args.label_issues:
        from explorer.data.audit import audit
        from explorer.data.dataset import prepare

        # The report's column guess, so both parts describe the same columns.
        data = prepare(table, report.text_column, ",".join(report.label_columns),
                       text_pair_column=report.text_pair_column or "")
        found = audit(ck, data, folds=args.folds)
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    if args.out_csv is not None:
        if report.fix:
            write_new_files({args.out_csv: corrected_csv(table, report, raw=args.raw_csv)})
        else:
            print(f"note: {UsageError('out_csv_nothing', path=args.out_csv)}", file=sys.stderr)
    for note in found.notes if found else ():
        print(f"note: {note.message()}", file=sys.stderr)
    if args.json:
        print(strict_json({**report.to_dict(), **(found.to_dict() if found else {})}))
        return 0
    pair = f"; text pair: {report.text_pair_column}" if report.text_pair_column else ""
    print(f"{report.rows} rows; text: {report.text_column}{pair}; labels: {', '.join(report.label_columns)}; "
          f"{report.problem_type} ({report.loss})")
    for name, count in report.labels:
        print(f"  {name:<24}{count:>8}")
    for issue in report.issues:
        print(f"{issue.kind}: {issue.message}")
    if report.suggested_mapping:
        print("suggested mapping: " + ", ".join(f"{a} -> {b}" for a, b in report.suggested_mapping.items()))
        print(f"fix ({report.fix['side']}): {report.fix['advice']}")
        print("config.json: " + strict_json(report.fix["config"], ensure_ascii=False))
        print(f"corrected CSV: {args.out_csv}" if args.out_csv is not None else "corrected CSV: add --out-csv PATH")
    if found:
        s = found.summary()
        print(f"label issues: {s['flagged']} flagged of {report.rows} (estimated noise {s['estimated_noise_rate']:.1%}, "
              f"{s['folds']}-fold accuracy {s['cv_accuracy'] if s['cv_accuracy'] is None else format(s['cv_accuracy'], '.1%')}, "
              f"{s['features']} features)")
        for row in found.issues()[:args.show]:
            text = row["text"] + (f" || {row['text_pair']}" if "text_pair" in row else "")
            print(f"  row {row['row']:>6}  {row['given']!s:>12} -> {row['suggested']!s:<12} {row['score']:.3f}  "
                  f"{text[:70]}")
    return 0


def inspect_tags(args) -> int:
    from explorer.data.mapping import check_kind
    from explorer.data.tag_report import tag_report
    from explorer.model.checkpoints import load_checkpoint

    if args.label_issues or args.out_csv is not None:
        raise UsageError("tags_sentence_option")
    ck = load_checkpoint(args.checkpoint, device=args.device) if args.checkpoint else None
    if ck is not None:  # before a sentence classifier's names could name numeric tags
        check_kind(ck, token_data=True)
    report = tag_report(tag_data(args, ck), ck)
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    if args.json:
        print(report.to_json())
        return 0
    cols = f"; tokens: {report.tokens_column}; tags: {report.tags_column}" if report.layout == "csv" else ""
    print(f"{report.sentences} sentences, {report.words} words ({report.layout}{cols}); scheme: {report.scheme}")
    for name, count in report.tags:
        print(f"  {name:<24}{count:>8}")
    for note in report.notes:
        print(f"note: {note}")
    for issue in report.issues:
        print(f"{issue.kind}: {issue.message}")
    if report.accuracy_before is not None:
        print(f"word agreement with {ck.name}: {report.accuracy_before:.1%}, under the best mapping "
              f"{report.accuracy_after:.1%}")
    if report.suggested_mapping:
        print("suggested mapping: " + ", ".join(f"{a} -> {b}" for a, b in report.suggested_mapping.items()))
    return 0
