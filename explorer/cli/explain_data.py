"""`explain-data`: what drives a checkpoint's labels over a whole CSV, possible shortcuts, and each attribution
method's faithfulness, agreement and (with a rationale column) agreement with annotators."""
from __future__ import annotations

import sys

from explorer.cli.common import bounded, device_option, is_main_process, pair_options, quiet_transformers

MAX_ROWS = 1000  # the default: what the README's time is stated for


def _max_read() -> int:
    from explorer.data.dataset import MAX_ROWS as READ

    return READ


def add_parser(sub) -> None:
    from explorer.explain.dataset import DEFAULT_METHODS

    d = sub.add_parser("explain-data", help="explain a checkpoint's predictions over a whole CSV")
    d.add_argument("--csv", required=True)
    d.add_argument("--checkpoint", required=True)
    d.add_argument("--text-column")
    d.add_argument("--label-column")
    pair_options(d)
    d.add_argument("--rationale-column", help="the words annotators marked: a space-separated list, or the text "
                                              "with the marked words *like this*")
    d.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help="attribution methods, comma-separated (lig, saliency, input_x_gradient, occlusion, "
                        "kernel_shap, lime, gradient_shap; default lig)")
    d.add_argument("--max-rows", type=bounded(int, 1, 10**7), default=MAX_ROWS,
                   help=f"explain at most this many rows (default {MAX_ROWS:,})")
    d.add_argument("--seed", type=bounded(int, 0, 2**31 - 1), default=0, help="the random baseline's seed")
    device_option(d)
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.data.dataset import read_csv
    from explorer.explain.dataset import explain_table
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head

    quiet_transformers()
    table = read_csv(args.csv, max_rows=max(args.max_rows, _max_read()))
    ck = load_checkpoint(args.checkpoint, device=args.device)
    result = explain_table(ck, build_head(ck, "own"), table=table, text_column=args.text_column,
                           label_column=args.label_column,
                           text_pair_column=args.text_pair_column, rationale_column=args.rationale_column,
                           methods=args.methods.split(","), seed=args.seed,
                           max_rows=args.max_rows)
    if not is_main_process():  # under torchrun/accelerate only one process prints
        return 0
    if result.processes > 1:  # one line, so a log (and the scale-out test) can tell the rows were shared
        print(f"explain-data: {len(result.rows)} rows explained by WORLD_SIZE={result.processes} processes",
              file=sys.stderr)
    if args.json:
        print(strict_json(result.to_dict()))
        return 0
    print(f"{len(result.rows)} rows, {', '.join(result.methods)}: {result.seconds:.1f} s "
          f"({result.rows_per_second:.1f} rows/s)")
    if result.mapping:
        print("given labels read through a found mapping (data -> checkpoint): "
              + ", ".join(f"{a} -> {b}" for a, b in result.mapping.items()))
    if result.shortcuts_need_labels:
        print("no shortcuts named: without given labels a shortcut cannot be told from what the label means")
    for name, v in result.by_label.items():
        words = ", ".join(f"{w['word']} ({w['score']:.2f}, {w['rows']} row{'s' if w['rows'] != 1 else ''})"
                          for w in v["top_words"][:8])
        print(f"{name} ({v['rows']} rows): {words}")
        for s in v["shortcuts"]:
            print(f"  possible shortcut: {s['word']!r} in {s['rows']} rows, {s['errors']} of them predicted {name} "
                  f"against their given label")
        if v["drivers"]:
            what = "relied on (shortcut or meaning: no labels)" if v["shortcuts_need_labels"] else "drives it"
            print(f"  {what}: " + ", ".join(repr(d["word"]) for d in v["drivers"]))
    for m, f in result.faithfulness.items():
        print(f"{m}: comprehensiveness {f['comprehensiveness']:.3f} (random {f['random_comprehensiveness']:.3f}), "
              f"sufficiency {f['sufficiency']:.3f} (random {f['random_sufficiency']:.3f})")
    if result.has_rationales:
        for m, r in result.rationale_agreement().items():
            print(f"{m} vs rationales ({r['rows']} rows): token F1 {r['token_f1']:.3f}, IOU F1 {r['iou_f1']:.3f}, "
                  f"AUPRC {r['auprc']:.3f}")
    return 0
