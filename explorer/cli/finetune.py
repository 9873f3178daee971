"""`finetune`: fine-tune a checkpoint on a CSV (or a token file) and save it as a new Hugging Face folder."""
from __future__ import annotations

import dataclasses
import os
import sys

from explorer.cli.common import (SEED, UsageError, bounded, device_option, is_main_process, pair_options,
                                 quiet_transformers, tag_data, tag_options, token_data)
from explorer.text.errors import Message


def add_parser(sub) -> None:
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT
    from explorer.model.heads import KINDS

    f = sub.add_parser("finetune", help="fine-tune a checkpoint on a CSV and save an HF folder")
    f.add_argument("--csv", required=True)
    f.add_argument("--text-column")
    f.add_argument("--label-column")
    pair_options(f)
    tag_options(f)
    f.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT)
    f.add_argument("--head", default="own", choices=KINDS)
    device_option(f)
    f.add_argument("--mode", default="head", choices=("head", "full"))
    f.add_argument("--epochs", type=bounded(int, 1, 10_000), help="default: 30 in head mode, 3 in full mode")
    f.add_argument("--lr", type=bounded(float, 1e-12, 10.0), help="default: 1e-3 in head mode, 5e-5 in full mode")
    f.add_argument("--batch-size", type=bounded(int, 1, 4096), default=32)
    f.add_argument("--max-length", type=bounded(int, 8, 100_000), default=128,
                   help="tokens per text, at most the checkpoint's own maximum")
    f.add_argument("--seed", type=SEED, default=0)
    f.add_argument("--no-early-stopping", action="store_true",
                   help="keep the last epoch (default: the epoch with the lowest validation loss)")
    f.add_argument("--out", required=True, help="a new folder for the fine-tuned model")
    f.add_argument("--json", action="store_true", help="print one JSON object")
    f.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.data.dataset import prepare, read_csv
    from explorer.data.mapping import check_kind
    from explorer.model.checkpoints import load_checkpoint
    from explorer.train.finetune import export, finetune

    quiet_transformers()
    if token_data(args):
        return finetune_tags_command(args)
    data = prepare(read_csv(args.csv), args.text_column, args.label_column, text_pair_column=args.text_pair_column)
    for note in data.notes:  # e.g. invisible characters removed from labels: said once, before training
        print(f"note: {note.message()}", file=sys.stderr)
    out = out_folder(args)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    check_kind(ck, token_data=False)
    settings = train_settings(args)
    result = finetune(ck, data, settings=settings, name=os.path.basename(out.rstrip(os.sep)))
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    export(result, out)
    summary = {"accuracy": result.metrics.get("accuracy"), "macro_f1": result.metrics.get("macro_f1"),
               "train_seconds": round(result.train_seconds, 3), "out": out, "metrics": result.metrics,
               "best_epoch": result.best_epoch, "kept_by": result.kept_by, "labels": list(result.labels),
               "text_column": data.text_column, "text_pair_column": data.text_pair_column}
    if args.json:
        print(strict_json(summary))
    else:
        print(", ".join(f"{k}: {v}" for k, v in summary.items() if k != "metrics"))
    return 0


def train_settings(args):
    from explorer.train.finetune import Settings

    return Settings(mode=args.mode, head=args.head, epochs=args.epochs, learning_rate=args.lr,
                    batch_size=args.batch_size, max_length=args.max_length, seed=args.seed,
                    early_stopping=not args.no_early_stopping)


def out_folder(args) -> str:
    if not args.out.strip():
        raise UsageError("cli_out_empty")
    out = os.path.abspath(args.out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise UsageError("out_exists", out=args.out)
    return out


def finetune_tags_command(args) -> int:
    from explorer.results import strict_json
    from explorer.model.checkpoints import is_token_classifier
    from explorer.model.checkpoints import load_checkpoint
    from explorer.train.finetune import export
    from explorer.train.finetune_tags import finetune_tags

    out = out_folder(args)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    token_model = is_token_classifier(ck)
    data = tag_data(args, ck if token_model else None)
    if not token_model:  # a sentence classifier's encoder is kept, its head is not
        data = dataclasses.replace(data, notes=(*data.notes, Message("note_tags_new_head", name=ck.name)))
    for note in data.notes:
        print(f"note: {note.message()}", file=sys.stderr)
    settings = train_settings(args)
    result = finetune_tags(ck, data, settings=settings, name=os.path.basename(out.rstrip(os.sep)))
    if not is_main_process():  # under torchrun/accelerate only one process prints or writes
        return 0
    export(result, out)
    summary = {"task": result.problem_type, "f1": result.metrics["f1"], "precision": result.metrics["precision"],
               "recall": result.metrics["recall"], "accuracy": result.metrics["accuracy"],
               "train_seconds": round(result.train_seconds, 3), "out": out, "best_epoch": result.best_epoch,
               "kept_by": result.kept_by, "labels": list(result.labels), "layout": data.layout,
               "tokens_column": data.tokens_column, "tags_column": data.tags_column}
    print(strict_json(summary) if args.json else ", ".join(f"{k}: {v}" for k, v in summary.items()))
    return 0
