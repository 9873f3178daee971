"""Scale-out: under `accelerate launch --num_processes 2` (CPU) the feature pass is split across the
processes and gathered, and the audit flags exactly what one process flags."""
import inspect
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT, accelerate_two
from explorer.model.features import encoder_features
from test_audit import planted

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.soak]  # two processes: a scale test (`make soak`)


def test_two_cpu_processes_flag_the_same_rows_as_one(tiny_root, tmp_path):
    csv = tmp_path / "planted.csv"
    # Three copies told apart by a suffix: 288 rows are five feature batches, so each process runs several
    # and the gather must put every batch's rows back in place (one batch per process hid an order bug).
    rows = pd.concat([planted().assign(text=lambda d, k=k: d["text"] + f" ({k})") for k in range(3)],
                     ignore_index=True)
    batch = inspect.signature(encoder_features).parameters["batch_size"].default
    assert len(rows) > 4 * batch  # at least two batches for each of the two processes
    rows.to_csv(csv, index=False)
    args = ["-m", "explorer", "inspect-data", "--csv", str(csv), "--checkpoint", str(tiny_root / "tiny-bert"),
            "--label-issues", "--json"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", HEAD_EXPLORER_ROOTS=str(tiny_root), OMP_NUM_THREADS="1")
    runs = [subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            for cmd in ([sys.executable, *args], [*accelerate_two(), *args])]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert "WORLD_SIZE=2" in runs[1].stderr  # two processes really shared the feature pass
    one, two = (json.loads(run.stdout) for run in runs)  # only rank 0 prints: stdout is one JSON object
    assert one["label_issues"], "a random tiny model should disagree with some labels"
    assert [i["row"] for i in two["label_issues"]] == [i["row"] for i in one["label_issues"]]
    for a, b in zip(one["label_issues"], two["label_issues"]):
        assert abs(a["score"] - b["score"]) < 1e-4 and a["suggested"] == b["suggested"]
    assert two["label_issue_summary"]["flagged"] == one["label_issue_summary"]["flagged"]
