"""Explore pages: from a changed text to every chart of the tokens page (flow excluded), through
the page's pure functions, against the analyze call alone. Target: ≤ 1.5× analyze.
And `analyze` at 256 tokens against one plain forward from the same text that returns attentions
(tokenizer, then the model with output_attentions=True). Target: ≤ 1.1×."""
from __future__ import annotations

import itertools
import time
from functools import partial

import plotly.io as pio
import torch

from bench.timing import best_of, interleaved, row, text_of_tokens
from explorer import plots
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.tokens import token_rows
from explorer.text import i18n

TEXT = "The plot was thin, but the actors carried it with warmth and surprising wit, number {}."


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck)
    t = partial(i18n.t, lang="en")
    fresh = itertools.count()  # a new text every call, as when the user types

    def analyze_only():
        analyze(ck, head, TEXT.format(next(fresh)))

    def tokens_page():
        a = analyze(ck, head, TEXT.format(next(fresh)))
        token_rows(a)
        for fig in plots.attention.tokens_page(a, 6, head=None, hide_special=False, t=t).values():
            pio.to_json(fig, validate=False)  # what st.plotly_chart sends

    # Interleaved rounds, best of each: both sides see the same machine state (a shared 2-core box
    # swings single timings by tens of percent).
    base, page = float("inf"), float("inf")
    for _ in range(15):
        base = min(base, best_of(analyze_only, repeat=2, warmup=0))
        page = min(page, best_of(tokens_page, repeat=2, warmup=0))
    return [row("tokens page: changed text -> all charts (no flow) vs analyze", page, base, "≤ 1.5×",
                page <= 1.5 * base), *analyze_rows()]


def analyze_rows(tokens: int = 256) -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck)
    text = text_of_tokens(ck.tokenizer, tokens, TEXT.format(0))

    def plain():
        with torch.inference_mode():
            ck.model(**ck.tokenizer(text, return_tensors="pt"), output_attentions=True)

    fns = [plain, lambda: analyze(ck, head, text), lambda: analyze(ck, head, text).cls_rollout]
    # CPU time of this thread (one torch thread: all the work), then wall time: at the loads this shared
    # 2-core box runs at, every wall-clock run is cut by waits, and the min of 25 does not remove them.
    (t_plain, t_analyze, t_rollout), (w_plain, w_analyze, _) = (interleaved(fns, rounds=25, clock=clock)
                                                                for clock in (time.thread_time, time.perf_counter))
    return [row(f"analyze at {tokens} tokens vs one forward returning attentions (CPU time; wall clock "
                f"{w_analyze / w_plain:.2f}×)", t_analyze, t_plain, "≤ 1.1×", t_analyze <= 1.1 * t_plain),
            # Rollout is computed on its first read: what the tokens page and --json pay on top.
            row(f"analyze at {tokens} tokens, [CLS] rollout read, vs the same forward (CPU time)", t_rollout,
                t_plain, "info", True)]
