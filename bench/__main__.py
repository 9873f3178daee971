"""`make bench`: run every bench/bench_*.py, print a table, write bench/results.json.

Each module has `run() -> list[dict]` with rows {name, value, baseline, ratio, target, unit, ok}.
Figures are ratios against a baseline measured in the same run, because these machines are noisy.
`--quick` (HEAD_EXPLORER_BENCH_QUICK=1): the modules that read it run at small sizes (a check that they run).
"""
from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(1)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    if "--quick" in argv:
        os.environ["HEAD_EXPLORER_BENCH_QUICK"] = "1"
    wanted = set(argv) - {"--quick"}
    rows = []
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and path.stem.removeprefix("bench_") not in wanted:
            continue
        module = importlib.import_module(f"bench.{path.stem}")
        for row in module.run():
            rows.append({"module": path.stem, **row})
            r = rows[-1]
            print(f"{r['name']:<58} {r['value']:>10.4g} {r.get('unit', ''):<4} baseline {r['baseline']:>10.4g} "
                  f"ratio {r['ratio']:>7.2f}  target {r['target']:<14} {'ok' if r['ok'] else 'MISSED'}", flush=True)
    (HERE / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
