"""Command line: `head-explorer analyze|attribute|train-sentiment|inspect-data|finetune|convert-checkpoint|app ...` (or `python -m explorer ...`).

Bad input exits with code 2 and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import threading
import traceback
import warnings


from explorer.text.errors import ExplorerError, Message


class UsageError(ExplorerError):
    """Bad input caught by the CLI; printed as one line, exit code 2."""


def _quiet_transformers() -> None:
    # Keep stdout clean for --json and stderr to our own one-line errors.
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def _summary(a) -> str:
    lines = [
        f"checkpoint: {a.checkpoint}   head: {a.head_kind}   problem type: {a.problem_type}",
        "tokens: " + " ".join(a.shown),
    ]
    if a.truncated_tokens:
        lines.append(f"truncated: {a.truncated_tokens} tokens dropped (max {a.max_length})")
    from explorer.model.problem import ProblemType, predicted, prediction_text

    own = ProblemType(a.problem_type)
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
        lines.append(f"note: the model trains with {own.loss_name} on {_read_as(own.output)} (problem_type "
                     f"{a.problem_type}), while transformers' pipeline() returns {_read_as(a.pipeline_function)}")
    # The head on every layer: where the decision forms.
    lines.append("predicted with the head on each layer (0 = embeddings; trained on the last only): " + ", ".join(
        f"{k}: {prediction_text(predicted(row, a.labels, a.problem_type))}" for k, row in enumerate(a.layer_logits)))
    if a.reads is not None:
        lines.append(f"the head reads token {a.reads}: {a.shown[a.reads]}")
    if a.new_weights:
        lines.append("warning: the head uses newly initialised (random) weights: " + ", ".join(a.new_weights))
    if a.unused_weights:
        lines.append("warning: the checkpoint holds weights the model does not use: " + ", ".join(a.unused_weights))
    return "\n".join(lines)


def _read_as(function: str) -> str:
    return "the raw logit" if function == "none" else f"the {function} of the logits"


def _refuse_costly(costly: bool, what: str, n: int, limit: int, force: bool) -> None:
    if costly and not force:
        raise UsageError("cli_costly", what=what, n=n, limit=limit)


def _target(ck, label: str | None) -> int | None:
    """--target: a label name of the checkpoint, or its index."""
    if label is None:
        return None
    if label in ck.labels:
        return ck.labels.index(label)
    if label.isdigit() and int(label) < len(ck.labels):
        return int(label)
    raise UsageError("cli_unknown_target", target=label[:40], choices=", ".join(ck.labels))


def _analyze_tokens(args, ck, head) -> int:
    """analyze for a token classifier: tags per token and entities as pipeline() groups them."""
    from explorer.model.token_analysis import DEFAULT_AGGREGATION, analyze_tokens

    if args.text_pair is not None or args.flow:
        raise UsageError("cli_token_option", option="--text-pair" if args.text_pair is not None else "--flow")
    target = _target(ck, args.target)
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
        lines.append("warning: the head uses newly initialised (random) weights: " + ", ".join(a.new_weights))
    if args.attributions:
        from explorer.explain.attribution import OCCLUSION_WARN_TOKENS, attribute, occlusion_is_costly

        if args.target_token is None:
            raise UsageError("cli_needs_target_token", n=len(a.tokens), last=len(a.tokens) - 1)
        if args.attributions == "occlusion":
            _refuse_costly(occlusion_is_costly(len(a.tokens)), "--attributions occlusion", len(a.tokens),
                           OCCLUSION_WARN_TOKENS, args.force)
        r = attribute(ck, head, args.text, args.attributions, target=target, target_token=args.target_token)
        out["attributions"] = r.to_dict()
        lines.append(f"attributions for {r.target_label} at token {args.target_token} "
                     f"({a.shown[args.target_token]}): " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(r.shown, r.scores)))
        if r.converged is False:
            lines.append(f"warning: not converged: completeness error {r.error:.2%} is above "
                         f"{r.tolerance:.0%} after {r.n_steps} steps")
        if args.every_label:
            from explorer.explain.token_attribution import every_label

            grid = every_label(ck, head, args.text, args.target_token, args.attributions)
            out["every_label"] = grid.to_dict()
            lines.append(f"every label at token {args.target_token}:")
            lines += [f"  {lab}: " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(grid.shown, row))
                      for lab, row in zip(grid.labels, grid.scores)]
    print(json.dumps(out) if args.json else "\n".join(lines))
    return 0


def cmd_analyze(args) -> int:
    from explorer.explain import attention
    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import TOKEN_CLASSIFICATION, load_checkpoint
    from explorer.model.heads import build_head

    if not args.text or not args.text.strip():
        raise UsageError("cli_empty_text")
    _quiet_transformers()
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    head = build_head(ck, args.head, seed=args.seed)
    if ck.task == TOKEN_CLASSIFICATION:
        return _analyze_tokens(args, ck, head)
    token_only = [o for o, v in (("--aggregation", args.aggregation), ("--target-token", args.target_token),
                                 ("--every-label", args.every_label or None)) if v is not None]
    if token_only:
        raise UsageError("cli_token_option_for_text_model", name=ck.name, option=token_only[0])
    target = _target(ck, args.target)
    if target is not None and not args.attributions:
        raise UsageError("cli_target_needs_attributions")
    a = analyze(ck, head, args.text, text_pair=args.text_pair)
    if args.flow:
        _refuse_costly(attention.flow_is_costly(len(a.tokens)), "--flow", len(a.tokens), attention.FLOW_WARN_TOKENS,
                       args.force)
        a = dataclasses.replace(a, flow=attention.flow(a.attentions))
    out = a.to_dict()
    summary = _summary(a)
    if args.attributions:
        from explorer.explain.attribution import OCCLUSION_WARN_TOKENS, attribute, occlusion_is_costly

        if args.attributions == "occlusion":
            _refuse_costly(occlusion_is_costly(len(a.tokens)), "--attributions occlusion", len(a.tokens),
                           OCCLUSION_WARN_TOKENS, args.force)

        r = attribute(ck, head, args.text, args.attributions, target=target, text_pair=args.text_pair)
        out["attributions"] = r.to_dict()
        summary += "\nattributions: " + " ".join(f"{tok}={s:+.3f}" for tok, s in zip(r.shown, r.scores))
        if r.converged is False:
            summary += (f"\nwarning: not converged: completeness error {r.error:.2%} is above "
                        f"{r.tolerance:.0%} after {r.n_steps} steps")
        if r.sampling is not None:
            s = r.sampling
            rho = "n/a" if s.agreement is None else f"{s.agreement:.2f}"
            summary += (f"\nsampled: {s.n_samples} samples, seed {s.seed}; Spearman over words against "
                        f"seed {s.second_seed}: {rho}")
    print(json.dumps(out) if args.json else summary)
    return 0


ATTRIBUTE_ROWS = 32  # rows per attribute_many call: their points share batches; each call's lines then print


def cmd_attribute(args) -> int:
    from explorer.data.dataset import read_csv, texts_of
    from explorer.explain.batched import attribute_many
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from explorer.runtime.budget import chunks

    _quiet_transformers()
    texts, pairs = texts_of(read_csv(args.csv, max_rows=args.max_rows), args.text_column, args.text_pair_column)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    head = build_head(ck, args.head, seed=args.seed)
    for rows in chunks(len(texts), ATTRIBUTE_ROWS):
        found = attribute_many(ck, head, [texts[i] for i in rows], args.method, n_steps=args.steps,
                               text_pairs=[pairs[i] for i in rows] if pairs else None)
        for i, r in zip(rows, found):
            if args.json:
                print(json.dumps({"row": i, **r.to_dict()}), flush=True)
            else:
                warn = "" if r.converged is not False else f"  (not converged: error {r.error:.2%})"
                print(f"row {i}: {r.target_label}: " + " ".join(f"{tok}={v:+.3f}" for tok, v in zip(r.shown, r.scores))
                      + warn, flush=True)
    return 0


def cmd_train_sentiment(args) -> int:
    from explorer.train.sentiment import train

    _quiet_transformers()
    print(json.dumps(train(epochs=args.epochs, seed=args.seed)))
    return 0


def cmd_inspect_data(args) -> int:
    from explorer.data.dataset import read_csv
    from explorer.data.labels import corrected_csv, label_report

    _quiet_transformers()
    if args.label_issues and not args.checkpoint:
        from explorer.data.dataset import DataError

        raise DataError("audit_needs_checkpoint")
    if args.out_csv is not None:  # refused before any costly work
        if not args.checkpoint:
            raise UsageError("out_csv_needs_checkpoint")
        if os.path.lexists(args.out_csv):
            raise UsageError("out_csv_exists", path=args.out_csv)
    if _token_data(args):
        return _inspect_tags(args)
    table = read_csv(args.csv, max_rows=args.max_rows)
    ck = None
    if args.checkpoint:
        from explorer.data.tags import check_kind
        from explorer.model.checkpoints import load_checkpoint

        ck = load_checkpoint(args.checkpoint, device=args.device)
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
    if int(os.environ.get("RANK", "0")) != 0:  # under torchrun/accelerate only one process prints
        return 0
    if args.out_csv is not None:
        if report.fix:
            _write_new(args.out_csv, corrected_csv(table, report, raw=args.raw_csv))
        else:
            print(f"note: {UsageError('out_csv_nothing', path=args.out_csv)}", file=sys.stderr)
    for note in found.notes if found else ():
        print(f"note: {note.message()}", file=sys.stderr)
    if args.json:
        print(json.dumps({**report.to_json(), **(found.to_json() if found else {})}))
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
        print("config.json: " + json.dumps(report.fix["config"], ensure_ascii=False))
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


def _token_data(args) -> bool:
    """Token data: --tokens-column/--tags-column given, or a CoNLL file or a tokens/tags header."""
    from explorer.data.tags import layout

    return bool(args.tokens_column or args.tags_column) or layout(args.csv) != "csv"


def _tag_data(args, ck):
    from explorer.data.dataset import MAX_ROWS
    from explorer.data.tags import read_tags

    return read_tags(args.csv, args.tokens_column, args.tags_column,
                     id2label=ck.model.config.id2label if ck is not None else None,
                     max_rows=getattr(args, "max_rows", MAX_ROWS))  # finetune has no --max-rows


def _inspect_tags(args) -> int:
    from explorer.data.tags import check_kind, tag_report
    from explorer.model.checkpoints import load_checkpoint

    if args.label_issues or args.out_csv is not None:
        raise UsageError("tags_sentence_option")
    ck = load_checkpoint(args.checkpoint, device=args.device) if args.checkpoint else None
    if ck is not None:  # before a sentence classifier's names could name numeric tags
        check_kind(ck, token_data=True)
    report = tag_report(_tag_data(args, ck), ck)
    if int(os.environ.get("RANK", "0")) != 0:
        return 0
    if args.json:
        print(json.dumps(report.to_json()))
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


def _write_new(path: str, data: bytes) -> None:
    """Write `data` to a new file at `path`: a temporary file beside it, hard-linked into place, which
    fails if `path` appeared meanwhile. Never overwrites, never leaves half a file."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".head-explorer-", suffix=".csv")
    except OSError as err:  # e.g. no such folder: said about the user's path, not the temporary one
        raise OSError(err.errno, err.strerror, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise UsageError("out_csv_exists", path=path) from None
    finally:
        os.unlink(tmp)


def cmd_finetune(args) -> int:
    from explorer.data.dataset import prepare, read_csv
    from explorer.data.tags import check_kind
    from explorer.model.checkpoints import load_checkpoint
    from explorer.train.finetune import export, finetune

    _quiet_transformers()
    if _token_data(args):
        return _finetune_tags(args)
    data = prepare(read_csv(args.csv), args.text_column, args.label_column, text_pair_column=args.text_pair_column)
    for note in data.notes:  # e.g. invisible characters removed from labels: said once, before training
        print(f"note: {note.message()}", file=sys.stderr)
    out = _out_folder(args)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    check_kind(ck, token_data=False)
    settings = _settings(args)
    result = finetune(ck, data, settings, name=os.path.basename(out.rstrip(os.sep)))
    if int(os.environ.get("RANK", "0")) != 0:  # under torchrun/accelerate only one process writes
        return 0
    export(result, out)
    summary = {"accuracy": result.metrics.get("accuracy"), "macro_f1": result.metrics.get("macro_f1"),
               "train_seconds": round(result.train_seconds, 3), "out": out, "metrics": result.metrics,
               "best_epoch": result.best_epoch, "kept_by": result.kept_by, "labels": list(result.labels),
               "text_column": data.text_column, "text_pair_column": data.text_pair_column}
    if args.json:
        print(json.dumps(summary))
    else:
        print(", ".join(f"{k}: {v}" for k, v in summary.items() if k != "metrics"))
    return 0


def _settings(args):
    from explorer.train.finetune import Settings

    return Settings(mode=args.mode, head=args.head, epochs=args.epochs, learning_rate=args.lr,
                    batch_size=args.batch_size, max_length=args.max_length, seed=args.seed,
                    early_stopping=not args.no_early_stopping)


def _out_folder(args) -> str:
    if not args.out.strip():
        raise UsageError("cli_out_empty")
    out = os.path.abspath(args.out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise UsageError("out_exists", out=args.out)
    return out


def _finetune_tags(args) -> int:
    from explorer.data.tags import is_token_classifier
    from explorer.model.checkpoints import load_checkpoint
    from explorer.train.finetune import export
    from explorer.train.finetune_tags import finetune_tags

    out = _out_folder(args)
    ck = load_checkpoint(args.checkpoint, seed=args.seed, device=args.device)
    token_model = is_token_classifier(ck)
    data = _tag_data(args, ck if token_model else None)
    if not token_model:  # a sentence classifier's encoder is kept, its head is not
        data = dataclasses.replace(data, notes=(*data.notes, Message("note_tags_new_head", name=ck.name)))
    for note in data.notes:
        print(f"note: {note.message()}", file=sys.stderr)
    settings = _settings(args)
    result = finetune_tags(ck, data, settings, name=os.path.basename(out.rstrip(os.sep)))
    if int(os.environ.get("RANK", "0")) != 0:
        return 0
    export(result, out)
    summary = {"task": result.problem_type, "f1": result.metrics["f1"], "precision": result.metrics["precision"],
               "recall": result.metrics["recall"], "accuracy": result.metrics["accuracy"],
               "train_seconds": round(result.train_seconds, 3), "out": out, "best_epoch": result.best_epoch,
               "kept_by": result.kept_by, "labels": list(result.labels), "layout": data.layout,
               "tokens_column": data.tokens_column, "tags_column": data.tags_column}
    print(json.dumps(summary) if args.json else ", ".join(f"{k}: {v}" for k, v in summary.items()))
    return 0


def cmd_convert_checkpoint(args) -> int:
    from explorer.model.convert import convert_checkpoint

    done = convert_checkpoint(args.checkpoint, args.out)
    if args.json:
        print(json.dumps(done.to_dict()))
    else:
        print(f"wrote {done.out}: {done.tensors} tensors in {', '.join(done.weights)}; copied: "
              f"{', '.join(done.copied) or 'nothing'}; left behind: {', '.join(done.skipped) or 'nothing'}")
    return 0


# `python -m streamlit`, less one legacy path. With a pages/ folder beside app.py, Streamlit marks the
# process as a pages/-folder app (a process-wide flag, set when the first session starts) and runs every
# script run through its legacy pages/ resolution until some run has called st.navigation. That
# resolution knows the pages only by file stem, not by app.py's url_path slugs: a shared link
# (/guided-lesson) opened as the server's first visit, or while that first run was still importing
# torch, drew "Page not found" over the page (streamlit#9624). app.py names its pages with
# st.navigation, so the flag is cleared before the server starts. Run in the child: only explorer.ui
# imports streamlit into this library's processes.
SERVE = ("from streamlit.runtime.pages_manager import PagesManager; PagesManager.uses_pages_directory = False; "
         "from streamlit.web.cli import main; main(prog_name='streamlit')")


def streamlit_command(extra: list[str]) -> list[str]:
    """`streamlit run <app.py>` (through SERVE), with .streamlit/config.toml's settings (headless, loopback only, static
    serving, no tracebacks for visitors) as flags: Streamlit reads that file only from the working
    directory, and an installed app is started from anywhere. Flags in `extra` win over those defaults."""
    import tomllib

    from explorer import resources

    with open(resources.STREAMLIT_CONFIG, "rb") as f:
        config = tomllib.load(f)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    given = {arg.split("=", 1)[0] for arg in extra if arg.startswith("--")}
    defaults = [f"--{section}.{key}={str(value).lower() if isinstance(value, bool) else value}"
                for section, options in config.items() for key, value in options.items()
                if f"--{section}.{key}" not in given]
    return [sys.executable, "-c", SERVE, "run", *defaults, str(resources.APP), *extra]


def cmd_app(args) -> int:
    import shlex

    cmd = streamlit_command(args.streamlit_args)
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    from explorer import resources

    try:  # static serving warns at start when the folder is missing; plotly.js is copied in on first use
        resources.STATIC.mkdir(exist_ok=True)
    except OSError:
        pass
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the server is this process: Ctrl+C and signals reach it directly


def _bounded(kind, lo, hi):
    """An argparse type: a finite number of `kind` within [lo, hi], else one clear line."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(str(UsageError("cli_not_a_number", value=text[:40]))) from None
        if not (lo <= value <= hi):  # also refuses NaN
            raise argparse.ArgumentTypeError(str(UsageError("cli_out_of_range", value=text[:40], lo=lo, hi=hi)))
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


SEED = _bounded(int, 0, 2**32 - 1)  # numpy and torch seeds


def _device_option(parser: argparse.ArgumentParser) -> None:
    from explorer.runtime.device import DEFAULT_DEVICE

    parser.add_argument("--device", default=DEFAULT_DEVICE,
                        help="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N or mps (default auto)")


def _pair_options(parser: argparse.ArgumentParser) -> None:
    from explorer.data.dataset import PAIR_NAMES

    group = parser.add_mutually_exclusive_group()
    group.add_argument("--text-pair-column", help="the second text of sentence pairs (NLI, paraphrase, QA), read with "
                       "the tokenizer's pair encoding; guessed from the header pairs "
                       + ", ".join(f"{a}/{b}" for a, b in PAIR_NAMES))
    group.add_argument("--no-text-pair", dest="text_pair_column", action="store_const", const="",
                       help="read one text even where the header names a pair")


def _tag_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokens-column", help="token data: the column of words (space-separated or a JSON list); "
                        "found without it when named tokens/words, as is a CoNLL file (token ... tag per line)")
    parser.add_argument("--tags-column", help="token data: the column of tags, one per word (tags, ner_tags, labels)")


def build_parser() -> argparse.ArgumentParser:
    from explorer.data.dataset import MAX_ROWS
    from explorer.explain.attribution import METHODS as ATTRIBUTION_METHODS
    from explorer.model.checkpoints import DEFAULT_CHECKPOINT
    from explorer.model.heads import ALL_KINDS, KINDS
    from explorer.model.token_analysis import AGGREGATIONS

    prog = "head-explorer" if os.path.basename(sys.argv[0]) == "head-explorer" else "python -m explorer"
    p = argparse.ArgumentParser(prog=prog, description="Head Explorer command line")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="run one text through a checkpoint and head")
    a.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    a.add_argument("--head", default="own", choices=ALL_KINDS,
                   help="own, a pooling kind for a sentence classifier, linear-per-token for a token classifier")
    _device_option(a)
    a.add_argument("--text", required=True)
    a.add_argument("--text-pair", default=None, help="a second text, for sentence-pair classifiers")
    a.add_argument("--seed", type=SEED, default=0, help="seed for new head weights")
    a.add_argument("--flow", action="store_true", help="also compute attention max-flow")
    a.add_argument("--force", action="store_true", help="compute flow or occlusion even on a long text (slow)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--attributions", choices=ATTRIBUTION_METHODS,
                   type=lambda m: "lig" if m == "ig" else m,  # "ig" is another name for lig (attribution.ALIASES)
                   help="also attribute the predicted label's logit to the tokens (ig: the same as lig; "
                        "kernel_shap, lime, gradient_shap: sampled, seed 0, with a second seed's agreement)")
    a.add_argument("--target", help="the label (name or index) --attributions explains; default the predicted one")
    a.add_argument("--aggregation", choices=AGGREGATIONS,
                   help="token classifiers: how entities are grouped, as pipeline()'s aggregation_strategy "
                        "(default simple)")
    a.add_argument("--target-token", type=_bounded(int, 0, 10**9),
                   help="token classifiers: the token --attributions explains, counted as `tokens` lists them "
                        "(special tokens included)")
    a.add_argument("--every-label", action="store_true",
                   help="token classifiers: also attribute every label at --target-token (a labels × tokens grid)")
    a.set_defaults(func=cmd_analyze)
    r = sub.add_parser("attribute", help="attribute each row of a CSV (several rows' points share batches)")
    r.add_argument("--csv", required=True)
    r.add_argument("--text-column", required=True)
    _pair_options(r)
    r.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="registry name, local folder or hub id")
    r.add_argument("--head", default="own", choices=KINDS)
    _device_option(r)
    r.add_argument("--method", default="lig", choices=("lig", "saliency", "input_x_gradient"),
                   type=lambda m: "lig" if m == "ig" else m,  # as analyze --attributions
                   help="attribute each row's predicted label's logit (default lig, refined to ≤ 1%% completeness)")
    r.add_argument("--steps", type=_bounded(int, 1, 10_000), help="lig: this many Gauss-Legendre steps, not adaptive")
    r.add_argument("--max-rows", type=_bounded(int, 1, 10**9), default=MAX_ROWS,
                   help=f"read at most this many rows (default {MAX_ROWS:,}, the app's limit)")
    r.add_argument("--seed", type=SEED, default=0, help="seed for new head weights")
    r.add_argument("--json", action="store_true", help="print one JSON object per row, as each is done")
    r.set_defaults(func=cmd_attribute)
    t = sub.add_parser("train-sentiment", help="rebuild the embedded sentiment head asset")
    t.add_argument("--epochs", type=_bounded(int, 1, 10_000), default=30)
    t.add_argument("--seed", type=SEED, default=0)
    t.set_defaults(func=cmd_train_sentiment)
    d = sub.add_parser("inspect-data", help="report what is wrong with a CSV's labels")
    d.add_argument("--csv", required=True)
    d.add_argument("--text-column")
    d.add_argument("--label-column", help="a column, or several 0/1 columns separated by commas")
    _pair_options(d)
    _tag_options(d)
    d.add_argument("--checkpoint", help="also check the labels against this checkpoint's predictions")
    _device_option(d)
    d.add_argument("--label-issues", action="store_true",
                   help="also find mislabelled rows (K-fold heads on the checkpoint's frozen features + cleanlab)")
    d.add_argument("--folds", type=_bounded(int, 1, 100), default=5, help="folds for --label-issues (default 5)")
    d.add_argument("--max-rows", type=_bounded(int, 1, 10**9), default=MAX_ROWS,
                   help=f"read at most this many rows (default {MAX_ROWS:,}, the app's limit)")
    d.add_argument("--show", type=_bounded(int, 0, 10**6), default=20, help="label issues listed without --json")
    d.add_argument("--out-csv", help="write the CSV with the suggested mapping applied to this new file "
                                     "(needs --checkpoint; an existing file is never overwritten)")
    d.add_argument("--raw-csv", action="store_true",
                   help="write CSV cells as they came: by default a text cell starting with = + - @, a tab or "
                        "a carriage return gets a leading ' so a spreadsheet does not run it as a formula")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=cmd_inspect_data)
    f = sub.add_parser("finetune", help="fine-tune a checkpoint on a CSV and save an HF folder")
    f.add_argument("--csv", required=True)
    f.add_argument("--text-column")
    f.add_argument("--label-column")
    _pair_options(f)
    _tag_options(f)
    f.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT)
    f.add_argument("--head", default="own", choices=KINDS)
    _device_option(f)
    f.add_argument("--mode", default="head", choices=("head", "full"))
    f.add_argument("--epochs", type=_bounded(int, 1, 10_000), help="default: 30 in head mode, 3 in full mode")
    f.add_argument("--lr", type=_bounded(float, 1e-12, 10.0), help="default: 1e-3 in head mode, 5e-5 in full mode")
    f.add_argument("--batch-size", type=_bounded(int, 1, 4096), default=32)
    f.add_argument("--max-length", type=_bounded(int, 8, 100_000), default=128,
                   help="tokens per text, at most the checkpoint's own maximum")
    f.add_argument("--seed", type=SEED, default=0)
    f.add_argument("--no-early-stopping", action="store_true",
                   help="keep the last epoch (default: the epoch with the lowest validation loss)")
    f.add_argument("--out", required=True, help="a new folder for the fine-tuned model")
    f.add_argument("--json", action="store_true", help="print one JSON object")
    f.set_defaults(func=cmd_finetune)
    c = sub.add_parser("convert-checkpoint", help="write a folder's pytorch_model.bin weights as safetensors",
                       description="Read pytorch_model.bin (or its shards) with torch.load(weights_only=True), "
                                   "which runs no code, and write a new folder with model.safetensors and the "
                                   "config and tokenizer files.")
    c.add_argument("--checkpoint", required=True, help="a local folder under the allowed roots")
    c.add_argument("--out", required=True, help="a new folder (it must not exist)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.set_defaults(func=cmd_convert_checkpoint)
    s = sub.add_parser("app", help="serve the Streamlit app (on 127.0.0.1:8501 unless told otherwise)",
                       description="Serve the app with `streamlit run`. Any further arguments go to Streamlit, "
                                   "e.g. `head-explorer app --server.port 8600`.")
    s.add_argument("--dry-run", action="store_true", help="print the streamlit command instead of running it")
    s.set_defaults(func=cmd_app, streamlit_args=[])
    return p


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class _Interrupted(BaseException):
    """SIGTERM/SIGHUP, raised where the program is, so `finally` blocks clean up as for Ctrl+C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, frame):
    raise _Interrupted(signum)


def _check_argv(argv: list[str]) -> None:
    # Bytes that are not UTF-8 reach Python as lone surrogates, which fail later in odd places.
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("cli_argv_encoding", position=i) from None


def main(argv: list[str] | None = None) -> int:
    """Run one command. Exit codes: 0 ok, 2 bad input, 1 unexpected error (one line; `--debug` adds the
    traceback), 130 Ctrl+C, 128+N on signal N. stderr carries only our one-line messages."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            handlers[sig] = signal.signal(sig, _raise_interrupted)
    try:
        with warnings.catch_warnings():
            if not debug:  # library warnings (torch, transformers) would break the one-line contract
                warnings.simplefilter("ignore")
            _check_argv(argv)
            return _run(argv)
    except KeyboardInterrupt:
        print(f"error: {UsageError('cli_interrupted')}", file=sys.stderr)
        return 130
    except _Interrupted as sig:
        print(f"error: {UsageError('cli_interrupted')}", file=sys.stderr)
        return 128 + sig.signum
    except (ExplorerError, OSError) as err:  # bad input: files, folders, values
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if debug:
            traceback.print_exc()
        print(f"error: {UsageError('cli_unexpected', kind=type(err).__name__, detail=_one_line(err))}",
              file=sys.stderr)
        return 1
    finally:
        for sig, old in handlers.items():
            signal.signal(sig, old)


def _run(argv: list[str]) -> int:
    parser = build_parser()

    def one_line_error(message: str):  # argparse's own errors: one line, exit 2
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)

    parser.error = one_line_error
    for sp in parser._subparsers._group_actions[0].choices.values():
        sp.error = one_line_error
    try:
        args, extra = parser.parse_known_args(argv)
        if args.command == "app":  # Streamlit's own flags pass through
            args.streamlit_args = extra
        elif extra:
            parser.error("unrecognized arguments: " + " ".join(extra))  # as parse_args words it
    except SystemExit as done:  # --help (0) or a usage error already printed (2)
        return int(done.code or 0)
    return args.func(args)
