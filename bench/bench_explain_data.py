"""Explaining a whole dataset: `explain` (lig on every row in shared batches, the given label where
it differs, then ERASER's erasures and the random baseline in length-sorted batches) on demo tweets, in rows per
second, against a text-by-text loop of `attribute` (lig alone, no faithfulness, no given labels) on the same rows,
in one run. Targets: at least half the loop's rate (ours does the loop's work, the given label on wrong rows
and the erasures besides), and 1,000 tweets within the README's stated 40 minutes at the measured rate (one
torch thread on this 2-core machine). Sizes: 60 tweets (a class's walk of the page) and 200; with
HEAD_EXPLORER_BENCH_QUICK=1, 40.

Where the time goes is each row's last words: the parts of our run, read from the progress it reports (its
message names the part it is in: the label check's forward before the first report, lig, the given labels, the
erasures), in CPU seconds of this thread (torch runs on it: one thread), which a busy machine does not inflate.
"""
from __future__ import annotations

import os
import time

from bench.timing import row
from explorer.data.dataset import demo_frame
from explorer.explain.attribution import attribute
from explorer.explain.dataset import explain
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.text import i18n

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
SIZES = (40,) if QUICK else (60, 200)
BUDGET_S = 40 * 60  # for 1,000 rows: the README's stated time


def _parts():
    """({part: CPU seconds of this thread}, a progress callback, a close()): each report books the time since the
    report before to the part that one named (each part reports as it starts; before the first: "check", the
    label check's forward), close() books the rest of the run to the last part."""
    spent: dict[str, float] = {}
    at = [time.thread_time(), "check"]
    given, faith = i18n.t("explain.given_step", "en"), i18n.t("explain.progress_faithfulness", "en")

    def progress(_done: float, message: str) -> None:
        now = time.thread_time()
        spent[at[1]] = spent.get(at[1], 0.0) + now - at[0]
        at[0] = now
        at[1] = "erasures" if faith in message else "given labels" if given in message else "lig"

    def close() -> None:
        progress(1.0, faith)

    return spent, progress, close


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    out = []
    for rows in SIZES:
        df = demo_frame(per_class=-(-rows // 3), seed=0).head(rows)
        texts, labels = list(df["text"]), list(df["label"])
        load = os.getloadavg()[0]
        spent, progress, close = _parts()
        start, cpu = time.perf_counter(), time.thread_time()
        found = explain(ck, head, texts=texts, given_names=labels, methods=("lig",), progress=progress)
        t_ours, c_ours = time.perf_counter() - start, time.thread_time() - cpu
        close()
        start, cpu = time.perf_counter(), time.thread_time()
        for text in texts:
            attribute(ck, head, text=text, method="lig")
        t_loop, c_loop = time.perf_counter() - start, time.thread_time() - cpu
        ours, loop = len(texts) / t_ours, len(texts) / t_loop
        thousand = 1000 / ours
        wrong = sum(r.given is not None and r.given != r.predicted for r in found.rows)
        parts = ", ".join(f"{k} {v:.1f}" for k, v in spent.items())
        out.append(row(
            f"explain-data, {len(texts)} demo tweets, lig + faithfulness (rows/s, the page's figure; 1,000 rows ≈ "
            f"{thousand / 60:.1f} min) vs a text-by-text `attribute` loop, lig only; load {load:.1f}; CPU s: ours "
            f"{c_ours:.1f} ({parts}; {wrong} rows given another label), the loop {c_loop:.1f}",
            ours, loop, "≥0.5× the loop's rate, 1,000 rows ≤40 min", ours >= 0.5 * loop and thousand <= BUDGET_S,
            unit="rows/s"))
    return out
