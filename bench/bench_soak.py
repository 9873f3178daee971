"""Soak, the long loops: tests/test_soak.py with HEAD_EXPLORER_SOAK=full (20 distinct 20,000-character texts,
every page, 8 What-if edits, a refused full fine-tune) against one served app, in Chromium. `make test` runs
the same test as a smoke. Row: the server's peak RSS growth against its configured budgets plus the stated
margin (both from the test), which must not be exceeded; the ratio is growth / (budgets + margin)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from bench.server import ROOT
from bench.timing import row


def run() -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "tests/test_soak.py"],
                         cwd=ROOT, env=dict(os.environ, HEAD_EXPLORER_SOAK="full"), capture_output=True, text=True,
                         timeout=1800)
    m = re.search(r"peak (\d+) MB \(\+(\d+)\).*budgets (\d+) MB \+ margin (\d+)", out.stdout)
    if m is None:
        raise RuntimeError("the soak test printed no figures:\n" + out.stdout[-3000:] + out.stderr[-2000:])
    grew, allowed = float(m.group(2)), float(m.group(3)) + float(m.group(4))
    return [row("soak, full: server peak RSS growth (MB) vs budgets + margin", grew, allowed, "≤ 1.0×",
                out.returncode == 0 and grew <= allowed, unit="MB")]
