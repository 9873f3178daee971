"""Counterfactuals: the search's flips, edits and time against LIT's ablation flip, on the same tweets, same run.

Data: the first TEXTS demo tweets (balanced, 3 classes) through minilm-sentiment and its own head, one torch thread.
The baseline is LIT's ablation flip, written here: leave-one-out ranks the words, then deletions of every
combination of 1..max_edits of the ten best-ranked words, smallest first, the first flip found wins. It deletes
with the same word spans as the search (explorer.explain.counterfactual), so the texts it tries are among the
search's first candidates and the comparison is of the search, not of how a word is cut. Time is thread CPU time
(the work itself, not the waits of a machine shared with other jobs).
"""
from __future__ import annotations

import itertools
import os
import time

import numpy as np

from bench.timing import row
from explorer.explain.counterfactual import SURE, TOP_WORDS, Runs, counterfactual, goal_for, loo_order, word_slots
from explorer.model.analysis import analyze
from explorer.model.checkpoints import Checkpoint
from explorer.model.heads import Head

TEXTS = 30
MAX_EDITS = 3


def ablation_flip(ck: Checkpoint, head: Head, text: str, max_edits: int = MAX_EDITS) -> tuple[bool, int, int]:
    """LIT's ablation flip on `text`: (flipped, edits, forward passes)."""
    goal = goal_for(analyze(ck, head, text), None)
    slots = word_slots(ck, text)[0]
    runs = Runs(ck, head, text, "", goal)
    deletions = [frozenset([w.deletion()]) for w in slots]
    if len(slots) < 2:  # a text of one word has nothing to delete but itself
        return False, 0, runs.forwards + 1
    base = runs.run([frozenset()])[0]
    order = loo_order(goal, base, deleted=np.stack(runs.run(deletions)))
    top = [next(iter(deletions[k])) for k in order[:TOP_WORDS]]
    for size in range(1, max_edits + 1):
        sets = [frozenset(c) for c in itertools.combinations(top, size) if size < len(slots)]
        margins = runs.margins(sets)
        if len(sets) and (margins > SURE).any():
            return True, size, runs.forwards + 1
    return False, 0, runs.forwards + 1


def tweets(n: int) -> list[str]:
    from explorer.data.dataset import demo_frame

    return demo_frame(per_class=-(-n // 3), seed=0)["text"].head(n).tolist()


def compare(ck: Checkpoint, head: Head, texts: list[str], max_edits: int = MAX_EDITS) -> dict:
    """Both on every text, alternately: flips, edits per flip on texts both flip, thread seconds per text."""
    ours, base, ours_s, base_s = [], [], 0.0, 0.0
    for text in texts:
        t0 = time.thread_time()
        r = counterfactual(ck, head, text=text, max_edits=max_edits)
        t1 = time.thread_time()
        b = ablation_flip(ck, head, text, max_edits)
        t2 = time.thread_time()
        ours_s, base_s = ours_s + t1 - t0, base_s + t2 - t1
        ours.append((r.flipped, len(r.edits), r.forward_passes, r.minimal))
        base.append(b)
    both = [k for k in range(len(texts)) if ours[k][0] and base[k][0]]
    return {"texts": len(texts), "flips": sum(o[0] for o in ours), "base_flips": sum(b[0] for b in base),
            "minimal": sum(o[0] and o[3] for o in ours),
            "edits": float(np.mean([ours[k][1] for k in both])) if both else float("nan"),
            "base_edits": float(np.mean([base[k][1] for k in both])) if both else float("nan"), "both": len(both),
            "dominated": all(o[0] for o, b in zip(ours, base) if b[0]),
            "seconds": ours_s / len(texts), "base_seconds": base_s / len(texts),
            "forwards": float(np.mean([o[2] for o in ours])), "base_forwards": float(np.mean([b[2] for b in base]))}


def run() -> list[dict]:
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head

    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    n = 6 if os.environ.get("HEAD_EXPLORER_BENCH_QUICK") else TEXTS
    c = compare(ck, head, tweets(n))
    where = f"{c['texts']} demo tweets, max {MAX_EDITS} edits"
    return [
        row(f"counterfactual flips vs LIT's ablation flip, {where} ({c['minimal']} of ours minimal)",
            c["flips"], c["base_flips"], ">= 1x, every baseline flip", c["flips"] >= c["base_flips"] and c["dominated"],
            unit="texts"),
        row(f"mean edits on the {c['both']} texts both flip", c["edits"], c["base_edits"], "<= 1x",
            c["edits"] <= c["base_edits"], unit="edits"),
        row(f"thread CPU s per text ({c['forwards']:.0f} vs {c['base_forwards']:.0f} forward passes on average)",
            c["seconds"], c["base_seconds"], "<= 2x", c["seconds"] <= 2 * c["base_seconds"]),
    ]
