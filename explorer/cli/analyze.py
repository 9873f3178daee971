"""`analyze`: one text through a checkpoint and head, as a summary or one JSON object (a token classifier's tags
and entities; optionally its attributions)."""
from __future__ import annotations

import dataclasses
import sys

from explorer.cli.common import (SEED, UsageError, bounded, device_option, dtype_option, method_name, new_weights,
                                 not_converged, quiet_transformers, refuse_costly, target_index)


def add_parser(sub) -> None:
    from explorer.explain.attribution import METHODS as ATTRIBUTION_METHODS
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT
    from explorer.model.heads import ALL_KINDS
    from explorer.model.token_analysis import AGGREGATIONS

    a = sub.add_parser("analyze", help="run one text through a checkpoint and head")
    a.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    a.add_argument("--head", default="own", choices=ALL_KINDS,
                   help="own, a pooling kind for a sentence classifier, linear-per-token for a token classifier")
    device_option(a)
    dtype_option(a)
    a.add_argument("--text", required=True)
    a.add_argument("--text-pair", default=None, help="a second text, for sentence-pair classifiers")
    a.add_argument("--seed", type=SEED, default=0, help="seed for new head weights")
    a.add_argument("--flow", action="store_true", help="also compute attention max-flow")
    a.add_argument("--force", action="store_true", help="compute flow or occlusion even on a long text (slow)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--attributions", choices=ATTRIBUTION_METHODS,
                   type=method_name,
                   help="also attribute the predicted label's logit to the tokens (ig: the same as lig; "
                        "kernel_shap, lime, gradient_shap: sampled, seed 0, with a second seed's agreement)")
    a.add_argument("--target", help="the label (name or index) --attributions explains; default the predicted one")
    a.add_argument("--aggregation", choices=AGGREGATIONS,
                   help="token classifiers: how entities are grouped, as pipeline()'s aggregation_strategy "
                        "(default simple)")
    a.add_argument("--target-token", type=bounded(int, 0, 10**9),
                   help="token classifiers: the token --attributions explains, counted as `tokens` lists them "
                        "(special tokens included)")
    a.add_argument("--every-label", action="store_true",
                   help="token classifiers: also attribute every label at --target-token (a labels × tokens grid)")
    a.set_defaults(func=run)


def summary(a) -> str:
    lines = [
        f"checkpoint: {a.checkpoint}   head: {a.head_kind}   problem type: {a.problem_type}"
        + (f"   dtype: {a.dtype}" if a.dtype != "float32" else ""),
        "tokens: " + " ".join(a.shown),
    ]
    if a.truncated_tokens:
        lines.append(f"truncated: {a.truncated_tokens} tokens dropped (max {a.max_length})")
    from explorer.model.problem import ProblemType, prediction_text

    own = a.problem_type
    # The model's own rule (a regression's would repeat the logit), then pipeline()'s where it differs.
    same = "" if a.pipeline_differs else " = pipeline()"
    cols = [] if own is ProblemType.REGRESSION else [(own.output + same, a.scores)]
    if a.pipeline_differs:
        cols.append((f"pipeline() {a.pipeline_function}", a.pipeline_scores))
    lines.append(f"{'label':<16}{'logit':>10}" + "".join(f"{name:>20}" for name, _ in cols))
    for i, name in enumerate(a.labels):
        lines.append(f"{name:<16}{a.logits[i]:>10.4f}" + "".join(f"{v[i]:>20.4f}" for _, v in cols))
    lines.append(f"predicted: {prediction_text(a.predicted)}")
    if a.pipeline_differs:
        lines.append(f"note: the model trains with {own.loss_name} on {read_as(own.output)} (problem_type "
                     f"{a.problem_type}), while transformers' pipeline() returns {read_as(a.pipeline_function)}")
    # The head on every layer: where the decision forms.
    lines.append("predicted with the head on each layer (0 = embeddings; trained on the last only): " + ", ".join(
        f"{k}: {prediction_text(a.problem_type.predict(row, a.labels))}" for k, row in enumerate(a.layer_logits)))
    if a.reads is not None:
        lines.append(f"the head reads token {a.reads}: {a.shown[a.reads]}")
    if a.new_weights:
        lines.append(new_weights(a))
    if a.unused_weights:
        lines.append("warning: the checkpoint holds weights the model does not use: " + ", ".join(a.unused_weights))
    return "\n".join(lines)


def read_as(function: str) -> str:
    return "the raw logit" if function == "none" else f"the {function} of the logits"


def analyze_tokens_command(args, ck, head) -> int:
    """analyze for a token classifier: tags per token and entities as pipeline() groups them."""
    from explorer.results import strict_json
    from explorer.model.token_analysis import DEFAULT_AGGREGATION, analyze_tokens

    if args.text_pair is not None or args.flow:
        raise UsageError("cli_token_option", option="--text-pair" if args.text_pair is not None else "--flow")
    target = target_index(ck, args.target)
    if args.attributions is None and (target is not None or args.target_token is not None):
        raise UsageError("cli_target_needs_attributions")
    if args.every_label and args.attributions is None:
        raise UsageError("cli_every_label_needs_attributions")
    a = analyze_tokens(ck, head, args.text, args.aggregation or DEFAULT_AGGREGATION)
    out = a.to_dict()
    lines = [f"checkpoint: {a.checkpoint}   head: {a.head_kind}   task: {a.task}",
             "tokens: " + " ".join(f"{i}:{tok}/{tag}" for i, (tok, tag) in enumerate(zip(a.shown, a.tags)))]
    if a.truncated_tokens:
        lines.append(f"truncated: {a.truncated_tokens} tokens dropped (max {a.max_length})")
        print(f"note: {UsageError('cli_truncated', n=a.truncated_tokens, limit=a.max_length)}", file=sys.stderr)
    lines.append(f"entities ({a.aggregation}): " + (", ".join(
        f"{e.word} [{e.label} {e.score:.3f} {e.start}-{e.end}]" for e in a.grouped()) or "none"))
    if a.new_weights:
        lines.append(new_weights(a))
    if args.attributions:
        from explorer.explain.attribution import OCCLUSION_WARN_TOKENS, attribute, occlusion_is_costly

        if args.target_token is None:
            raise UsageError("cli_needs_target_token", n=len(a.tokens), last=len(a.tokens) - 1)
        if args.attributions == "occlusion":
            refuse_costly(occlusion_is_costly(len(a.tokens)), "--attributions occlusion", len(a.tokens),
                           OCCLUSION_WARN_TOKENS, args.force)
        r = attribute(ck, head, text=args.text, method=args.attributions, target=target, target_token=args.target_token)
        out["attributions"] = r.to_dict()
        lines.append(f"attributions for {r.target_label} at token {args.target_token} "
                     f"({a.shown[args.target_token]}): " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(r.shown, r.scores)))
        if not_converged(r):
            lines.append(not_converged(r))
        if args.every_label:
            from explorer.explain.token_attribution import every_label

            grid = every_label(ck, head, text=args.text, token=args.target_token, method=args.attributions)
            out["every_label"] = grid.to_dict()
            lines.append(f"every label at token {args.target_token}:")
            lines += [f"  {lab}: " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(grid.shown, row))
                      for lab, row in zip(grid.labels, grid.scores)]
    print(strict_json(out) if args.json else "\n".join(lines))
    return 0


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.model import attention
    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import TOKEN_CLASSIFICATION, load_checkpoint
    from explorer.model.heads import build_head, head_at_precision

    if not args.text or not args.text.strip():
        raise UsageError("cli_empty_text")
    quiet_transformers()
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    # --dtype: every forward below (analysis, token analysis, attributions) on the cast copy
    ck, head = head_at_precision(ck, build_head(ck, args.head, seed=args.seed), args.dtype)
    if ck.task == TOKEN_CLASSIFICATION:
        return analyze_tokens_command(args, ck, head)
    token_only = [o for o, v in (("--aggregation", args.aggregation), ("--target-token", args.target_token),
                                 ("--every-label", args.every_label or None)) if v is not None]
    if token_only:
        raise UsageError("cli_token_option_for_text_model", name=ck.name, option=token_only[0])
    target = target_index(ck, args.target)
    if target is not None and not args.attributions:
        raise UsageError("cli_target_needs_attributions")
    a = analyze(ck, head, args.text, text_pair=args.text_pair)
    if args.flow:
        refuse_costly(attention.flow_is_costly(len(a.tokens)), "--flow", len(a.tokens), attention.FLOW_WARN_TOKENS,
                       args.force)
        a = dataclasses.replace(a, flow=attention.flow(a.attentions))
    out = a.to_dict()
    text = summary(a)
    if args.attributions:
        from explorer.explain.attribution import OCCLUSION_WARN_TOKENS, attribute, occlusion_is_costly

        if args.attributions == "occlusion":
            refuse_costly(occlusion_is_costly(len(a.tokens)), "--attributions occlusion", len(a.tokens),
                           OCCLUSION_WARN_TOKENS, args.force)

        r = attribute(ck, head, text=args.text, method=args.attributions, target=target, text_pair=args.text_pair)
        out["attributions"] = r.to_dict()
        text += "\nattributions: " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(r.shown, r.scores))
        if not_converged(r):
            text += "\n" + not_converged(r)
        if r.sampling is not None:
            s = r.sampling
            rho = "n/a" if s.agreement is None else f"{s.agreement:.2f}"
            text += (f"\nsampled: {s.n_samples} samples, seed {s.seed}; Spearman over words against "
                        f"seed {s.second_seed}: {rho}")
    print(strict_json(out) if args.json else text)
    return 0
