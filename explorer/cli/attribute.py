"""`attribute`: every row of a CSV attributed, rows in shared batches, one line (or JSON object) per row as it is done."""
from __future__ import annotations

from explorer.cli.common import (SEED, bounded, device_option, dtype_option, max_rows_option, method_name,
                                 pair_options, quiet_transformers)

ATTRIBUTE_ROWS = 32  # rows per attribute_many call: their points share batches; each call's lines then print


def add_parser(sub) -> None:
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT
    from explorer.model.heads import KINDS

    r = sub.add_parser("attribute", help="attribute each row of a CSV (several rows' points share batches)")
    r.add_argument("--csv", required=True)
    r.add_argument("--text-column", required=True)
    pair_options(r)
    r.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    r.add_argument("--head", default="own", choices=KINDS)
    device_option(r)
    dtype_option(r)
    r.add_argument("--method", default="lig", choices=("lig", "saliency", "input_x_gradient"),
                   type=method_name,
                   help="attribute each row's predicted label's logit (default lig, refined to ≤ 1%% completeness)")
    r.add_argument("--steps", type=bounded(int, 1, 10_000), help="lig: this many Gauss-Legendre steps, not adaptive")
    max_rows_option(r)
    r.add_argument("--seed", type=SEED, default=0, help="seed for new head weights")
    r.add_argument("--json", action="store_true", help="print one JSON object per row, as each is done")
    r.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.data.dataset import read_csv, texts_of
    from explorer.explain.batched import attribute_many
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from explorer.runtime.budget import chunks

    quiet_transformers()
    texts, pairs = texts_of(read_csv(args.csv, max_rows=args.max_rows), args.text_column, args.text_pair_column)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    head = build_head(ck, args.head, seed=args.seed)
    for rows in chunks(len(texts), ATTRIBUTE_ROWS):
        found = attribute_many(ck, head, texts=[texts[i] for i in rows], method=args.method, n_steps=args.steps,
                               text_pairs=[pairs[i] for i in rows] if pairs else None, dtype=args.dtype)
        for i, r in zip(rows, found):
            if args.json:
                print(strict_json({"row": i, **r.to_dict()}), flush=True)
            else:
                warn = "" if r.converged is not False else f"  (not converged: error {r.error:.2%})"
                print(f"row {i}: {r.target_label}: " + " ".join(f"{tok}={v:+.3f}" for tok, v in zip(r.shown, r.scores))
                      + warn, flush=True)
    return 0
