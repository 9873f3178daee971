"""Timing helpers for the benchmarks."""
from __future__ import annotations

import time


def best_of(fn, repeat: int = 7, warmup: int = 1, clock=time.perf_counter) -> float:
    """Minimum wall time (or `clock`'s) of `fn()` over `repeat` runs, in seconds: the least noisy estimate."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def interleaved(fns, rounds: int, clock=time.perf_counter) -> list[float]:
    """best_of for each function, taken in alternating rounds, so load from other processes hits all alike.
    clock=time.thread_time counts the calling thread's CPU time (user + system): with one torch thread,
    the work itself, without the waits a loaded machine adds to every wall-clock run."""
    best = [float("inf")] * len(fns)
    for i in range(rounds):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], best_of(fn, repeat=1, warmup=1 if i == 0 else 0, clock=clock))
    return best


def row(name: str, value: float, baseline: float, target: str, ok: bool, unit: str = "s") -> dict:
    return {"name": name, "value": value, "baseline": baseline, "ratio": value / baseline if baseline else float("nan"),
            "target": target, "ok": bool(ok), "unit": unit}


def text_of_tokens(tokenizer, n: int, seed: str) -> str:
    """`seed` repeated and cut so that the tokenizer reads exactly `n` tokens, special tokens included."""
    specials = tokenizer.num_special_tokens_to_add()
    ids = tokenizer(" ".join([seed] * (n // 4 + 1)), add_special_tokens=False)["input_ids"][:n - specials]
    text = tokenizer.decode(ids)
    assert len(tokenizer(text)["input_ids"]) == n, n
    return text
