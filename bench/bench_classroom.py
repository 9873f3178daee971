"""Classroom load, measured on the server: 1, 8 and 30 students editing the text on the attention page, and a
mixed class (of 30: 23 edit, 5 run lig on the Attributions page, 2 start a head-mode fine-tune).

No browser: each student is a bench/ws_client.Session speaking Streamlit's own websocket protocol to one
server on loopback (bench/server.py: `head-explorer app`'s command). In a class every browser draws on its
student's own machine; what the class shares is this server, so a browser here would measure Chromium
(about 1 CPU-s per edit) instead.
A student opens the app, goes to its page, then edits the sidebar text EDITS times, thinking THINK seconds
(with jitter) between edits: the figure is the time from the edited value sent to the run finished, and an
edit counts as an error when the run drew an error or its attention chart lacks the edit's unique word.
The server runs with one job slot (HEAD_EXPLORER_TRAINING=1) shared by fine-tunes and heavy attributions (lig's
automatic path), so the second fine-tune and the lig runs wait in the one queue: the bench checks that a waiting
student is shown a place and an estimate, and that the page answers; an attributor's time is edit -> lig drawn,
its wait in line included.
HEAD_EXPLORER_BENCH_QUICK=1 runs 4 edits per student instead of 10 (about 7 minutes at a load of 10 on 2 cores).
On a machine with 2 cores or more, the server is pinned to core 0 and the clients to the others (measured
fairly, the 30 protobuf clients otherwise compete with the server they measure); the server's CPU time per edit
gives how many students one core holds at the bench's think time.
"""
from __future__ import annotations

import asyncio
import os
import random
import re

import numpy as np

from bench.server import cpu_seconds, serve
from bench.timing import row
from bench.ws_client import Session

QUICK = os.environ.get("HEAD_EXPLORER_BENCH_QUICK", "") not in ("", "0")
EDITS = 4 if QUICK else 10  # per student per phase
THINK = 2.0  # mean seconds between a student's edits: type, read, type again
CLASS = 30
ATTRIBUTORS, FINETUNERS = 5, 2
WORDS = ["apple", "river", "window", "garden", "doctor", "summer", "market", "silver", "forest", "engine",
         "pencil", "ocean", "castle", "rabbit", "violin", "harbor"]
WAITING = re.compile(r"place \d+ in the queue, about \d+ (s|min)")


async def _open(url: str, page: str) -> Session:
    s = Session(url)
    await s.connect()
    await s.run()
    await s.run(page)
    return s


async def _edit(s: Session, who: str, n: int, rng: random.Random, out: list[float], errors: list[str],
                check: bool = True, seen: dict | None = None) -> None:
    for i in range(n):
        await asyncio.sleep(rng.uniform(0.5, 1.5) * THINK)
        word = WORDS[rng.randrange(len(WORDS))]
        # Unique per student and edit, so no student is served from another's cached analysis.
        s.set_text("text", f"{who} says the {word} was lovely on day {i}.")
        try:
            r = await s.run(needle=word if check else "")
            out.append(r.seconds)
            if seen is not None and any(WAITING.search(i) for i in r.infos):
                seen["attr_waiting"] = seen.get("attr_waiting", 0) + 1
            if r.errors or not r.found:
                errors.append(f"{who} edit {i}: " + ("; ".join(r.errors)[:200] or "the chart lacks the edit"))
        except Exception as err:  # noqa: BLE001 - a failed edit is counted, not fatal
            errors.append(f"{who} edit {i}: {type(err).__name__}")


async def _finetune(s: Session, who: str, stop: asyncio.Event, seen: dict, errors: list[str]) -> None:
    """Press Start, then look at the page every 2 s (the page's own fragment would) until the class ends."""
    s.press("ft_start")
    looks = []
    while True:  # the Start press's own run first: a queued job shows its place there
        r = await s.run()
        looks.append(r.seconds)
        errors.extend(f"{who}: {e[:200]}" for e in r.errors)
        if any(WAITING.search(i) for i in r.infos):
            seen["waiting"] = seen.get("waiting", 0) + 1
        if stop.is_set():
            break
        await asyncio.sleep(2.0)
    seen.setdefault("look_s", []).extend(looks)
    s.press("ft_stop")  # leave the queue / stop the run, so the server is quiet for what follows
    await s.run()


async def _phase(url: str, editors: int, attributors: int = 0, finetuners: int = 0, seed: int = 0):
    rng = random.Random(seed)
    sessions = [await _open(url, "attention") for _ in range(editors)]  # one by one: loading is not measured
    attr_s = [await _open(url, "attribution") for _ in range(attributors)]
    ft_s = [await _open(url, "fine-tune") for _ in range(finetuners)]
    edits, attr_times, errors, seen = [], [], [], {}
    stop = asyncio.Event()
    fts = [asyncio.create_task(_finetune(s, f"tuner{k}", stop, seen, errors)) for k, s in enumerate(ft_s)]
    await asyncio.gather(
        *(_edit(s, f"student{k}", EDITS, random.Random(rng.random()), edits, errors) for k, s in enumerate(sessions)),
        *(_edit(s, f"attributor{k}", max(2, EDITS // 2), random.Random(rng.random()), attr_times, errors, check=False,
                seen=seen)
          for k, s in enumerate(attr_s)))
    stop.set()
    await asyncio.gather(*fts)
    for s in sessions + attr_s + ft_s:
        await s.close()
    return edits, attr_times, errors, seen


def _p(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def run() -> list[dict]:
    cores = sorted(os.sched_getaffinity(0))
    server_cpus, client_cpus = ({cores[0]}, set(cores[1:])) if len(cores) > 1 else (None, None)
    spent = {}  # phase -> the server's CPU seconds over it
    with serve(server_cpus, HEAD_EXPLORER_TRAINING="1") as url:
        if client_cpus:
            os.sched_setaffinity(0, client_cpus)
        asyncio.run(_phase(url, 1, seed=99))  # warm the server's caches: the first runs import and load
        phases = {}
        for n in (1, 8, CLASS):
            before = cpu_seconds(url.pid)
            phases[n] = asyncio.run(_phase(url, n, seed=n))
            spent[n] = cpu_seconds(url.pid) - before
        mixed = asyncio.run(_phase(url, CLASS - ATTRIBUTORS - FINETUNERS, ATTRIBUTORS, FINETUNERS, seed=7))
    if client_cpus:
        os.sched_setaffinity(0, set(cores))
    for edits, _, errors, _ in [*phases.values(), mixed]:
        for e in errors[:5]:
            print("  error:", e)
    solo = phases[1][0]
    rows = []
    for n in (8, CLASS):
        edits, _, errors, _ = phases[n]
        ok = not errors and len(edits) == n * EDITS
        rows.append(row(f"classroom: edit -> run finished p50, {n} / 1 session", _p(edits, 50), _p(solo, 50),
                        "info", True))
        rows.append(row(f"classroom: edit -> run finished p95, {n} / 1 session ({len(errors)} errors)",
                        _p(edits, 95), _p(solo, 95), "≤ 3×, 0 errors" if n == CLASS else "info",
                        ok and (n != CLASS or _p(edits, 95) <= 3 * _p(solo, 95))))
    # Opening the page counts in a phase's CPU (each student opens once): an upper bound on an edit's share.
    per_edit = spent[CLASS] / max(1, len(phases[CLASS][0]))
    rows.append(row(f"classroom: server CPU per edit, 30 students (server {'on core ' + str(cores[0]) if server_cpus else 'unpinned'}; "
                    f"one core holds about {THINK / per_edit:.0f} students at {THINK:.0f} s between edits)",
                    per_edit, spent[1] / max(1, len(phases[1][0])), "info", True))
    edits, attr_times, errors, seen = mixed
    rows.append(row(f"classroom mixed: editor p95 / 1 session ({len(errors)} errors)", _p(edits, 95), _p(solo, 95),
                    "≤ 5×, 0 errors", not errors and _p(edits, 95) <= 5 * _p(solo, 95)))
    rows.append(row(f"classroom mixed: lig edit -> drawn p50 (queue wait included; shown its place "
                    f"{seen.get('attr_waiting', 0)}×) / editor p50", _p(attr_times, 50), _p(edits, 50), "info", True))
    looks = seen.get("look_s", [])
    rows.append(row(f"classroom mixed: queued fine-tune page p95, shown its place {seen.get('waiting', 0)}×",
                    _p(looks, 95), _p(solo, 95), "place shown, ≤ 5×",
                    seen.get("waiting", 0) > 0 and _p(looks, 95) <= 5 * _p(solo, 95)))
    return rows
