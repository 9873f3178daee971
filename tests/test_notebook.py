"""examples/explore.ipynb runs in a real Jupyter kernel (nbclient, ipykernel) started where the notebook lives,
with the project installed as `make setup` installs it and no PYTHONPATH, and the pages the library exports
open offline in Chromium without a single network request."""
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.server, pytest.mark.slow]

NOTEBOOK = ROOT / "examples" / "explore.ipynb"


def _outputs(cell) -> tuple[str, set[str]]:
    """(the cell's printed text, the mime types it displayed)."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    kinds = {k for o in cell.outputs if o.output_type in ("execute_result", "display_data") for k in o.data}
    return text, kinds


def _editable_install() -> list[str]:
    """The Makefile's editable install of the project, as its stamp rule runs it (with $(PY) left out)."""
    line = next(ln for ln in (ROOT / "Makefile").read_text().splitlines() if re.search(r"pip install .*-e \.$", ln))
    return line.split("-m pip ", 1)[1].split()


def _installed_python(folder: Path) -> Path:
    """A throwaway venv in `folder` with the project installed into it exactly as `make setup` installs it into
    .venv (editable, no dependencies, no build isolation: offline), the test venv's packages on its path (a .pth
    line) for the dependencies. Not .venv itself: an editable install there would point it at this checkout."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    py = folder / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True,
                          capture_output=True, text=True).stdout.strip()
    Path(site, "test-venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(py), "-m", "pip", *_editable_install()], cwd=ROOT, env=dict(env, PIP_NO_INDEX="1"),
                          capture_output=True, text=True, timeout=300)  # no index: a download would fail here
    assert done.returncode == 0, done.stderr[-2000:]
    return py


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook run top to bottom in a fresh kernel started in a copy of examples/ (its outputs land there,
    not in the checkout), on a venv with the project installed as `make setup` does, and no PYTHONPATH: a
    kernel started there must import explorer (ModuleNotFoundError when only the repository root worked)."""
    import nbformat
    from nbclient import NotebookClient

    tmp = tmp_path_factory.mktemp("notebook")
    py = _installed_python(tmp / "venv")
    spec = tmp / "jupyter" / "kernels" / "installed"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(py), "-m", "ipykernel_launcher", "-f",
                                                           "{connection_file}"], "display_name": "installed",
                                                  "language": "python"}))
    work = tmp / "examples"
    work.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = dict(JUPYTER_PATH=str(tmp / "jupyter"), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    old = {k: os.environ.get(k) for k in (*env, "PYTHONPATH")}
    os.environ.update(env)  # the kernel inherits this process's environment
    os.environ.pop("PYTHONPATH", None)
    try:
        NotebookClient(nb, kernel_name="installed", timeout=300, resources={"metadata": {"path": str(work)}}).execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return nb, work


def test_the_notebook_runs_and_shows_its_results(executed):
    nb, work = executed
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(o.output_type != "error" for c in cells for o in c.outputs)
    texts = {i: _outputs(c) for i, c in enumerate(cells)}
    result = next(o for o in cells[0].outputs if o.output_type == "execute_result")
    assert result.data["text/plain"] == "('negative', 'neutral', 'positive')"
    analysis_text, analysis_kinds = texts[1]
    assert "predicted: positive" in analysis_text and "text/html" in analysis_kinds  # the Analysis's own table
    assert "application/vnd.plotly.v1+json" in texts[2][1]  # the rollout, a plotly figure
    assert "saved: head_view.html" in texts[4][0]
    assert "converged: True" in texts[5][0] and "application/vnd.plotly.v1+json" in texts[5][1]
    assert "issues:" in texts[6][0] and "text/html" in texts[6][1]
    assert (work / "head_view.html").stat().st_size > 1_000_000  # plotly.js inlined


def _open_offline(browser, path: Path):
    """Load `path` in a fresh page; returns (page, every URL it requested)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    requests = []
    page.on("request", lambda req: requests.append(req.url))
    page.goto(path.resolve().as_uri())
    return ctx, page, requests


@pytest.mark.browser
def test_the_notebooks_head_view_opens_offline(executed, browser):
    _, work = executed
    ctx, page, requests = _open_offline(browser, work / "head_view.html")
    try:
        page.wait_for_selector("#headview .main-svg", timeout=30_000)  # plotly drew the head view
        assert page.evaluate("typeof window.Plotly") == "object"
        assert page.locator("#headview .scatterlayer .trace").count() > 0
        assert all(u.startswith(("file://", "data:", "blob:")) for u in requests), requests
    finally:
        ctx.close()


@pytest.mark.browser
def test_highlighted_text_opens_offline(tiny, browser, tmp_path):
    import explorer

    r = explorer.attribute(tiny["bert"], "a small test sentence", method="lig")
    path = explorer.figures.highlight(r, level="word").save(tmp_path / "highlight.html")
    ctx, page, requests = _open_offline(browser, path)
    try:
        assert page.locator("span[title]").count() == len(r.words()[0])
        assert all(u.startswith(("file://", "data:", "blob:")) for u in requests), requests
    finally:
        ctx.close()
