"""Command line: `python -m explorer analyze|train-sentiment ...`.

Bad input exits with code 2 and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np


class UsageError(Exception):
    """Bad input caught by the CLI; printed as one line, exit code 2."""


def _quiet_transformers() -> None:
    # Keep stdout clean for --json and stderr to our own one-line errors.
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def _tolist(x):
    return None if x is None else np.round(np.asarray(x, dtype=np.float64), 6).tolist()


def analysis_json(a) -> dict:
    return {
        "checkpoint": a.checkpoint,
        "tokens": list(a.tokens),
        "special": list(a.special),
        "labels": list(a.labels),
        "logits": _tolist(a.logits),
        "softmax": _tolist(a.softmax),
        "sigmoid": _tolist(a.sigmoid),
        "problem_type": a.problem_type,
        "predicted": a.predicted,
        "new_weights": list(a.new_weights),
        "head": {"kind": a.head_kind, "steps": [{"name": n, "values": _tolist(v)} for n, v in a.steps]},
        "attention": {"cls_raw": _tolist(a.cls_attention), "rollout": _tolist(a.cls_rollout), "flow": _tolist(a.flow)},
        "truncated_tokens": a.truncated_tokens,
    }


def _summary(a) -> str:
    lines = [
        f"checkpoint: {a.checkpoint}   head: {a.head_kind}   problem type: {a.problem_type}",
        "tokens: " + " ".join(a.tokens),
    ]
    if a.truncated_tokens:
        lines.append(f"truncated: {a.truncated_tokens} tokens dropped (max {a.max_length})")
    lines.append(f"{'label':<16}{'logit':>10}{'softmax':>10}{'sigmoid':>10}")
    for i, name in enumerate(a.labels):
        lines.append(f"{name:<16}{a.logits[i]:>10.4f}{a.softmax[i]:>10.4f}{a.sigmoid[i]:>10.4f}")
    lines.append(f"predicted: {a.predicted}")
    if a.new_weights:
        lines.append("warning: the head uses newly initialised (random) weights: " + ", ".join(a.new_weights))
    return "\n".join(lines)


def cmd_analyze(args) -> int:
    from .analysis import analyze
    from .checkpoints import load_checkpoint
    from .heads import build_head

    if not args.text or not args.text.strip():
        raise UsageError("the text is empty: pass --text 'a sentence'")
    _quiet_transformers()
    ck = load_checkpoint(args.checkpoint, seed=args.seed)
    head = build_head(ck, args.head, seed=args.seed)
    a = analyze(ck, head, args.text, flow=args.flow)
    out = analysis_json(a)
    if args.attributions:
        from .attribution import attribute

        r = attribute(ck, head, args.text, args.attributions)
        out["attributions"] = {"method": r.method, "target": r.target_label, "tokens": list(r.tokens),
                               "scores": _tolist(r.scores), "f_x": r.f_x, "f_baseline": r.f_baseline,
                               "delta": r.delta}
    summary = _summary(a) + ("\nattributions: " + " ".join(
        f"{tok}={s:+.3f}" for tok, s in zip(out["attributions"]["tokens"], out["attributions"]["scores"]))
        if args.attributions else "")
    print(json.dumps(out) if args.json else summary)
    return 0


def cmd_train_sentiment(args) -> int:
    from .sentiment import train

    _quiet_transformers()
    print(json.dumps(train(epochs=args.epochs, seed=args.seed)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .checkpoints import DEFAULT_CHECKPOINT
    from .heads import KINDS

    p = argparse.ArgumentParser(prog="python -m explorer", description="Head Explorer command line")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="run one text through a checkpoint and head")
    a.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    a.add_argument("--head", default="own", choices=KINDS)
    a.add_argument("--text", required=True)
    a.add_argument("--seed", type=int, default=0, help="seed for new head weights")
    a.add_argument("--flow", action="store_true", help="also compute attention max-flow")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--attributions", choices=("lig", "ig", "saliency", "input_x_gradient", "occlusion"),
                   help="also attribute the predicted label's logit to the tokens")
    a.set_defaults(func=cmd_analyze)
    t = sub.add_parser("train-sentiment", help="rebuild the embedded sentiment head asset")
    t.add_argument("--epochs", type=int, default=30)
    t.add_argument("--seed", type=int, default=0)
    t.set_defaults(func=cmd_train_sentiment)
    return p


def main(argv: list[str] | None = None) -> int:
    from .analysis import AnalysisError
    from .checkpoints import CheckpointError
    from .heads import HeadError

    parser = build_parser()

    def one_line_error(message: str):  # argparse's own errors: one line, exit 2
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)

    parser.error = one_line_error
    for sp in parser._subparsers._group_actions[0].choices.values():
        sp.error = one_line_error
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, CheckpointError, HeadError, AnalysisError, ValueError, OSError) as err:
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        print(f"error: {msg}", file=sys.stderr)
        return 2
