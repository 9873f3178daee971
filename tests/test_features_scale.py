"""Scale-out of the frozen-encoder features: under `accelerate launch` of two CPU processes, each encoding
several batches, every process ends with the rows one process computes, in the same order."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, _free_port, accelerate_two

pytestmark = [pytest.mark.server, pytest.mark.slow]

TEXTS = [f"row {i} " + "word " * (i % 5) for i in range(14)]  # 7 batches of 2: 4 for rank 0, 3 for rank 1
SCRIPT = """
import sys
import numpy as np
from explorer.model.checkpoints import load_checkpoint
from explorer.model.features import encoder_features
from explorer.model.inference import rank
texts = {texts!r}
feats = encoder_features(load_checkpoint(sys.argv[1]), texts, batch_size=2)
np.save(sys.argv[2] + f".rank{{rank()}}.npy", feats)
"""


@pytest.mark.soak  # two processes: a scale test (`make soak`)
def test_two_cpu_processes_each_with_several_batches_gather_every_row(tiny_root, tmp_path):
    script = tmp_path / "features.py"
    script.write_text(SCRIPT.format(texts=TEXTS))
    out = tmp_path / "feats"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HEAD_EXPLORER_ROOTS=str(tiny_root), OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    args = [str(script), str(tiny_root / "tiny-bert")]
    one = subprocess.run([sys.executable, *args, str(out) + ".one"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    two = subprocess.run([*accelerate_two(), *args, str(out) + ".two"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert two.returncode == 0, two.stderr[-6000:]  # the launcher's summary ends it; the cause is above
    assert "WORLD_SIZE=2" in two.stderr  # two processes really shared the pass
    alone = np.load(str(out) + ".one.rank0.npy")
    assert np.abs(alone).sum(axis=(1, 2)).min() > 0  # every row encoded
    for r in (0, 1):
        np.testing.assert_allclose(np.load(str(out) + f".two.rank{r}.npy"), alone, rtol=0, atol=1e-5)


LEAVE = """
import atexit
import torch.distributed as dist
atexit.register(lambda: print("left:", not dist.is_initialized()))  # registered first, so it runs last
from explorer.model.inference import all_gathered
print(all_gathered(1), all_gathered(2))
"""


def test_a_program_that_gathered_leaves_the_process_group_at_exit(tmp_path):
    """A script or notebook that gathered under a launcher ends with the gloo group destroyed (its threads
    joined), not left to the interpreter's exit, where a finished rank can die by SIGABRT and fail the launch."""
    script = tmp_path / "leave.py"
    script.write_text(LEAVE)
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), RANK="0", LOCAL_RANK="0",
               WORLD_SIZE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2:] == ["left: True", ""], done.stdout
