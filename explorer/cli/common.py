"""What the commands share: the one-line UsageError, argument types and options, the main-process check,
and the lines several commands print (convergence, new weights)."""
from __future__ import annotations

import argparse
import os

from explorer.text.errors import ExplorerError

class UsageError(ExplorerError):
    """Bad input caught by the CLI; printed as one line, exit code 2."""


def quiet_transformers() -> None:
    # Keep stdout clean for --json and stderr to our own one-line errors.
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def is_main_process() -> bool:
    """Under torchrun or `accelerate launch` only the main process prints and writes; a plain run is its own main
    process. Read from the launcher's RANK, not accelerate's PartialState().is_main_process: CPU processes that
    `accelerate launch --multi_gpu` starts on a machine without GPUs (how tests/test_audit_scale.py gets two)
    each get DistributedType.NO there, and each would call itself the main one (accelerate 1.16, measured)."""
    return int(os.environ.get("RANK", "0")) == 0


def refuse_costly(costly: bool, what: str, n: int, limit: int, force: bool) -> None:
    if costly and not force:
        raise UsageError("cli_costly", what=what, n=n, limit=limit)


def target_index(ck, label: str | None) -> int | None:
    """--target: a label name of the checkpoint, or its index."""
    if label is None:
        return None
    from explorer.data.mapping import is_id

    if label in ck.labels:
        return ck.labels.index(label)
    if is_id(label) and int(label) < len(ck.labels):
        return int(label)
    raise UsageError("cli_unknown_target", target=label[:40], choices=", ".join(ck.labels))


def not_converged(r) -> str | None:
    """An attribution's warning line when lig missed its completeness tolerance, else None."""
    if r.converged is not False:
        return None
    return f"warning: not converged: completeness error {r.error:.2%} is above {r.tolerance:.0%} after {r.n_steps} steps"


def new_weights(a) -> str | None:
    """The warning line for a head with newly initialised (random) weights, else None."""
    if not a.new_weights:
        return None
    return "warning: the head uses newly initialised (random) weights: " + ", ".join(a.new_weights)


def bounded(kind, lo, hi):
    """An argparse type: a finite number of `kind` within [lo, hi], else one clear line."""
    def parse(text: str):
        digits = text.strip().lstrip("+-")
        if digits.isascii() and digits.isdigit() and len(digits) > 30:  # int() refuses past 4,300 digits
            shown = f"{text.strip()[:12]}… ({len(digits):,} digits)"
            raise argparse.ArgumentTypeError(str(UsageError("cli_out_of_range", value=shown, lo=lo, hi=hi)))
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(str(UsageError("cli_not_a_number", value=text[:40]))) from None
        if not (lo <= value <= hi):  # also refuses NaN
            raise argparse.ArgumentTypeError(str(UsageError("cli_out_of_range", value=text[:40], lo=lo, hi=hi)))
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


SEED = bounded(int, 0, 2**32 - 1)  # numpy and torch seeds



def method_name(text: str) -> str:
    """An argparse type for attribution methods: accepted other names (attribution.ALIASES: ig) as the method's own."""
    from explorer.explain.attribution import ALIASES

    return ALIASES.get(text, text)


def device_option(parser: argparse.ArgumentParser) -> None:
    from explorer.runtime.device import DEFAULT_DEVICE

    parser.add_argument("--device", default=DEFAULT_DEVICE,
                        help="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N or mps (default auto)")


def dtype_option(parser: argparse.ArgumentParser) -> None:
    from explorer.runtime.precision import DEFAULT_DTYPE, DTYPES, parse_dtype

    def parse(text: str):
        try:
            return parse_dtype(text)
        except ExplorerError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = "dtype"
    parser.add_argument("--dtype", type=parse, default=DEFAULT_DTYPE,
                        help=f"the forwards' precision: {', '.join(DTYPES)} (default {DEFAULT_DTYPE}); the README's "
                             "Precision section states how far each lands from float32")


def max_rows_option(parser: argparse.ArgumentParser) -> None:
    """--max-rows: what it does, in its help (a longer CSV is refused, not cut)."""
    from explorer.data.dataset import MAX_ROWS

    parser.add_argument("--max-rows", type=bounded(int, 1, 10**9), default=MAX_ROWS,
                        help=f"refuse a CSV of more rows than this (default {MAX_ROWS:,}, the app's limit)")


def pair_options(parser: argparse.ArgumentParser) -> None:
    from explorer.data.dataset import PAIR_NAMES

    group = parser.add_mutually_exclusive_group()
    group.add_argument("--text-pair-column", help="the second text of sentence pairs (NLI, paraphrase, QA), read with "
                       "the tokenizer's pair encoding; guessed from the header pairs "
                       + ", ".join(f"{a}/{b}" for a, b in PAIR_NAMES))
    group.add_argument("--no-text-pair", dest="text_pair_column", action="store_const", const="",
                       help="read one text even where the header names a pair")


def tag_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokens-column", help="token data: the column of words (space-separated or a JSON list); "
                        "found without it when named tokens/words, as is a CoNLL file (token ... tag per line)")
    parser.add_argument("--tags-column", help="token data: the column of tags, one per word (tags, ner_tags, labels)")


def token_data(args) -> bool:
    """Token data: --tokens-column/--tags-column given, or a CoNLL file or a tokens/tags header."""
    from explorer.data.tags import layout

    return bool(args.tokens_column or args.tags_column) or layout(args.csv) != "csv"


def tag_data(args, ck):
    from explorer.data.dataset import MAX_ROWS
    from explorer.data.tags import read_tags

    return read_tags(args.csv, args.tokens_column, args.tags_column,
                     id2label=ck.model.config.id2label if ck is not None else None,
                     max_rows=getattr(args, "max_rows", MAX_ROWS))  # finetune has no --max-rows
