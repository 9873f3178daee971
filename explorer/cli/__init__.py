"""Command line: `head-explorer analyze|attribute|counterfactual|train-sentiment|inspect-data|scan|explain-data|finetune|convert-checkpoint|config|app ...`
(or `python -m explorer ...`): one module per command (its parser and its `run`), what they share in common.py.

Bad input exits with code 2 and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import warnings

from explorer.cli import (analyze, app, attribute, config, convert, counterfactual, explain_data, finetune,
                          inspect_data, scan, train_sentiment)
from explorer.cli.app import SERVE, streamlit_command
from explorer.cli.common import UsageError
from explorer.text.errors import ExplorerError

__all__ = ["SERVE", "UsageError", "build_parser", "main", "streamlit_command"]

COMMANDS = (analyze, attribute, counterfactual, train_sentiment, inspect_data, scan, explain_data, finetune, convert, config,
            app)  # in --help's order


class OneLineParser(argparse.ArgumentParser):
    """argparse's own errors as one line and exit 2 (its default prints the usage first). Subparsers are made
    with the same class (add_subparsers' default), so every command's parser says its errors this way."""

    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    prog = "head-explorer" if os.path.basename(sys.argv[0]) == "head-explorer" else "python -m explorer"
    p = OneLineParser(prog=prog, description="Head Explorer command line")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
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
        _leave_process_group()


def _leave_process_group() -> None:
    """The scale-out's gloo group destroyed as a command ends (explorer.model.inference.leave_process_group),
    without importing torch for a command that never gathered."""
    if "torch.distributed" in sys.modules:
        from explorer.model.inference import leave_process_group

        leave_process_group()


def _run(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if args.command == "app":  # Streamlit's own flags pass through
            args.streamlit_args = extra
        elif extra:
            parser.error("unrecognized arguments: " + " ".join(extra))  # as parse_args words it
    except SystemExit as done:  # --help (0) or a usage error already printed (2)
        return int(done.code or 0)
    return args.func(args)
