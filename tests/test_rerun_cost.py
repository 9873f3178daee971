"""Less work per rerun, nothing shown changed: what keeps a class of sessions from queueing on one server."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

COLD_RUN = """
import gc, json
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120)
at.run()
print(json.dumps({"frozen": gc.get_freeze_count(), "errors": [e.value for e in at.exception],
                  "metrics": len(at.metric)}))
"""


@pytest.mark.server
def test_a_cold_start_leaves_the_imported_libraries_out_of_garbage_collection():
    """Streamlit runs a full gc.collect() after every script run; over torch's and transformers' objects
    that took 0.3-0.7 s per rerun with the GIL held. The first run freezes them (a fresh process: only
    there is app.py booting), and the page still renders."""
    out = subprocess.run([sys.executable, "-c", COLD_RUN], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["errors"] == [] and res["metrics"]
    assert res["frozen"] > 100_000  # torch + transformers + streamlit: about half a million objects
