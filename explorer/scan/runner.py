"""Run every registered check that applies, in order, over one forward pass, and gather one report."""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from explorer.model.checkpoints import TOKEN_CLASSIFICATION, Checkpoint
from explorer.runtime.jobs import Progress, span
from explorer.scan import checks as check_modules
from explorer.scan.base import CHECKS, SEVERITIES, Found, ScanData, as_consequence, explaining, matches, ordered
from explorer.scan.forward import run_rows
from explorer.scan.report import ScanReport
from explorer.text.errors import ExplorerError, Message

FORWARD_COST = 1.0  # the shared forward pass's share of the progress bar, in check costs


def scan_rows(ck: Checkpoint, texts: Sequence[str], *, given: Sequence[str] | None = None,
              pairs: Sequence[str] | None = None, seed: int = 0, batch_size: int = 64, max_length: int = 128,
              progress: Progress | None = None, checks: Sequence[str] | None = None) -> ScanReport:
    """Every check on `texts` (with `pairs`, sentence pairs) and their `given` labels (None: no labels).
    `checks`: only the checks whose id starts with one of these prefixes. `progress` may raise to stop."""
    if not len(texts):
        raise ExplorerError("scan_no_rows")
    start = time.perf_counter()
    check_modules.load_checks()
    chosen = ordered([c for c in CHECKS if checks is None or any(matches(c.name, p) for p in checks)])
    total = FORWARD_COST + sum(c.cost for c in chosen)
    if ck.task == TOKEN_CLASSIFICATION:  # no one label per text: only the head's checks apply, none reads a pass
        logits = np.zeros((len(texts), ck.model.config.num_labels), np.float32)
        vectors = np.zeros((len(texts), ck.model.config.hidden_size), np.float32)
    else:
        logits, vectors = run_rows(ck, list(texts), pairs=list(pairs) if pairs is not None else None, vectors=True,
                                   batch_size=batch_size, max_length=max_length,
                                   progress=span(progress, 0.0, FORWARD_COST / total, "forward: "))
    data = ScanData(ck, tuple(texts), tuple(pairs) if pairs is not None else None,
                    tuple(given) if given is not None else None, logits, vectors, seed, batch_size, max_length)
    found = Found()
    skipped: list[tuple[str, Message]] = []
    done = FORWARD_COST
    for c in chosen:
        if progress:  # a stop check between checks too, whether or not the check reports
            progress(done / total, c.name + ": ")
        why = c.applies(data)
        if why:
            skipped.append((c.name, Message(why)))
        else:
            new = c.run(data, found, span(progress, done / total, (done + c.cost) / total, c.name + ": ")
                        or _silent)
            cause = explaining(c, found)
            found.findings += [as_consequence(f, cause) for f in new] if cause else new
        done += c.cost
    if progress:
        progress(1.0, "")
    order = {s: i for i, s in enumerate(SEVERITIES)}
    findings = sorted(found.findings, key=lambda f: order[f.severity])  # stable: check order within a severity
    return ScanReport(rows=data.rows, checkpoint=ck.name, seconds=time.perf_counter() - start,
                      findings=tuple(findings), results=dict(found.results),
                      not_applicable=tuple(skipped + found.not_applicable), texts=data.texts, given=data.given,
                      predicted=tuple(found.names_of(data, data.predicted)),
                      predicted_checkpoint=tuple(ck.labels[i] for i in data.predicted),
                      ran=tuple(c.name for c in chosen if c.name not in {s for s, _ in skipped}), logits=data.logits)


def _silent(fraction: float, message: str = "") -> None:
    """The progress of a scan nobody listens to."""


def scan_table(ck: Checkpoint, table, *, text_column: str | None = None, label_column: str | None = None,
               text_pair_column: str | None = None, **options) -> ScanReport:
    """scan_rows over a table (explorer.data.dataset.Table): columns as the Data page reads them; a table of one
    column is texts without labels. Raises DataError (one line) for unusable columns."""
    from explorer.data.dataset import guess_columns, prepare
    from explorer.model.problem import ProblemType

    if len(table.frame) == 0:
        raise ExplorerError("scan_no_rows")
    if ck.task == TOKEN_CLASSIFICATION or (len(table.frame.columns) == 1 and not label_column):
        # Texts alone: a token classifier's tags are no label per text, so only the checks of the head apply.
        column = text_column or (table.frame.columns[0] if len(table.frame.columns) == 1 else
                                 guess_columns(table.frame, text_column, label_column)[0])
        if column not in table.frame.columns:
            raise ExplorerError("data_no_column", column=column, columns=", ".join(map(str, table.frame.columns)))
        return scan_rows(ck, table.frame[column].fillna("").astype(str).tolist(), **options)
    # No cap on a text's words: the scan reads each row's first max_length tokens, and the cell cap bounds the rest.
    # A label column the user named is one label per row (its cells may hold `,` or read as 0.5): prepare notes it.
    data = prepare(table, text_column, label_column, text_pair_column=text_pair_column, max_words=None,
                   single=bool(label_column) and "," not in label_column)
    given = [data.label_names[int(i)] for i in data.y] if data.problem_type == ProblemType.SINGLE else None
    return scan_rows(ck, data.texts, given=given, pairs=data.text_pairs, **options)


def scan_frame(df, ck: Checkpoint, *, text: str | None = None, label: str | None = None, text_pair: str | None = None,
               seed: int = 0, **options) -> ScanReport:
    """Scan a DataFrame's rows (`explorer.scan(df, ck)` checks the arguments, then calls this).

    Row indices in the report are 0-based positions among the frame's rows.

    Args:
        df: the rows.
        ck: a checkpoint from `explorer.load`.
        text: the text column, as `explorer.inspect` reads it (guessed when None).
        label: the label column (guessed when None); without one, only the checks that need none run.
        text_pair: the second text of sentence pairs ("" for one text; guessed when None).
        seed: seeds the typos, splits and samples.
        **options: go to `scan_rows` (batch_size, max_length, progress, checks).

    Returns:
        A ScanReport.
    """
    from explorer.data.dataset import frame_table

    if not isinstance(ck, Checkpoint):
        raise ExplorerError("api_not_a_checkpoint", kind=type(ck).__name__)
    return scan_table(ck, frame_table(df), text_column=text, label_column=label, text_pair_column=text_pair, seed=seed,
                      **options)
