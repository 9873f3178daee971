"""`counterfactual`: the smallest word edit that flips a prediction, for one text (--text) or every row of a CSV
(--csv, a line or JSON object per row as it is done, and with --out-csv a new CSV of them all)."""
from __future__ import annotations

import json

from explorer.cli.common import SEED, UsageError, bounded, device_option, pair_options, quiet_transformers


def add_parser(sub) -> None:
    from explorer.data.dataset import MAX_ROWS
    from explorer.explain.counterfactual import MAX_EDITS
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT

    c = sub.add_parser("counterfactual", help="the smallest word deletions/substitutions that flip a prediction")
    c.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    c.add_argument("--text", help="one text")
    c.add_argument("--text-pair", help="its second text, for sentence-pair models")
    c.add_argument("--csv", help="every row of this CSV instead (with --text-column)")
    c.add_argument("--text-column")
    pair_options(c)
    c.add_argument("--target", help="flip to this label (a name or an index) instead of any other")
    c.add_argument("--max-edits", type=bounded(int, 1, MAX_EDITS), default=3,
                   help=f"edits at most (1 to {MAX_EDITS}, default 3)")
    c.add_argument("--max-rows", type=bounded(int, 1, 10**9), default=MAX_ROWS,
                   help=f"read at most this many rows (default {MAX_ROWS:,}, the app's limit)")
    c.add_argument("--out-csv", help="--csv: write every row's result to this new CSV (never overwritten)")
    c.add_argument("--seed", type=SEED, default=0, help="breaks ties between equally good edits (default 0)")
    device_option(c)
    c.add_argument("--json", action="store_true", help="print one JSON object (per row with --csv)")
    c.set_defaults(func=run)


def _line(r) -> str:
    d = r.to_dict()
    edits = ", ".join(f"{e['old']!r} -> {e['new']!r}" if e["new"] else f"delete {e['old']!r}" for e in d["edits"])
    verdict = "flipped" if r.flipped else f"no flip within {r.max_edits} edits; closest"
    return (f"{verdict}: {d['predicted_before']} -> {d['predicted_after']} with {len(r.edits)} edit(s) ({edits}); "
            f"minimal: {r.minimal}; {r.forward_passes} forward passes\n  {r.text}")


def _row(i: int, r) -> dict:
    d = r.to_dict()
    return {"row": i, "text": r.original, "text_pair": r.original_pair, "counterfactual": r.text,
            "counterfactual_pair": r.text_pair, "flipped": r.flipped, "minimal": r.minimal, "edits": len(r.edits),
            "edit_list": json.dumps(d["edits"], ensure_ascii=False), "predicted_before": _shown(d["predicted_before"]),
            "predicted_after": _shown(d["predicted_after"]), "forward_passes": r.forward_passes}


def _shown(prediction) -> str:
    """A label as it is; a multi-label prediction's labels as a JSON list."""
    return prediction if isinstance(prediction, str) else json.dumps(prediction, ensure_ascii=False)


def run(args) -> int:
    from explorer.cli.common import target_index
    from explorer.explain.counterfactual import counterfactual
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from explorer.results import strict_json

    quiet_transformers()
    if (args.text is None) == (args.csv is None) or (args.csv is not None and not args.text_column):
        raise UsageError("cli_counterfactual_input")
    if args.out_csv is not None:  # refused before any costly work: a new file in an existing folder
        from explorer.results import check_new_files
        check_new_files([args.out_csv])
    if args.csv is not None:
        from explorer.data.dataset import read_csv, texts_of

        texts, pairs = texts_of(read_csv(args.csv, max_rows=args.max_rows), args.text_column, args.text_pair_column)
    else:
        texts, pairs = (args.text,), (args.text_pair,) if args.text_pair else None
    ck = load_checkpoint(args.checkpoint, device=args.device)
    head = build_head(ck, "own")
    target = target_index(ck, args.target)
    rows = []
    for i, text in enumerate(texts):
        r = counterfactual(ck, head, text=text, text_pair=pairs[i] if pairs else "", target=target,
                           max_edits=args.max_edits, seed=args.seed)
        rows.append(_row(i, r))
        if args.json:
            print(strict_json({"row": i, **r.to_dict()} if args.csv else r.to_dict(), ensure_ascii=False), flush=True)
        else:
            print((f"row {i}: " if args.csv else "") + _line(r), flush=True)
    if args.out_csv is not None:
        import pandas as pd

        from explorer.results import write_new_files
        from explorer.text.plain import csv_bytes

        write_new_files({args.out_csv: csv_bytes(pd.DataFrame(rows))})
    return 0
