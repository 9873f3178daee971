"""`pip install .` in a fresh venv gives the library, its app and assets, and the `head-explorer` script.

The venv borrows the dev venv's packages through a .pth file and pip runs with --no-index --no-deps
--no-build-isolation: nothing is downloaded (a resolved torch would be a multi-GB CUDA build). The
source is a copy of the tree, so the build writes nothing here, and every command runs from another
folder, so only the installed copy can answer.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

from explorer.cli import SERVE

pytestmark = [pytest.mark.server, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "models", "static", "build", "*.egg-info", "__pycache__",
                                     ".pytest_cache", "bench", "tests")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("packaging")
    src, env_dir, elsewhere = tmp / "src", tmp / "venv", tmp / "elsewhere"
    shutil.copytree(ROOT, src, ignore=_NOT_SOURCE)
    elsewhere.mkdir()
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    borrowed = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))  # pip, setuptools, torch...
    (site / "_dev_venv.pth").write_text("".join(f"{p}\n" for p in borrowed))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation", str(src)],
                   check=True, cwd=elsewhere, env=env, capture_output=True, timeout=120)
    return {"python": python, "script": env_dir / "bin" / "head-explorer", "site": site, "cwd": elsewhere, "env": env}


def _run(installed, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=installed["cwd"], env=installed["env"], capture_output=True,
                          text=True, timeout=timeout)


def test_installed_package_holds_the_app_and_assets(installed):
    out = _run(installed, installed["python"], "-c",
               "import json, explorer, explorer.resources as r; print(json.dumps([explorer.__file__, str(r.ROOT)]))")
    assert out.returncode == 0, out.stderr
    module, root = map(Path, json.loads(out.stdout))
    assert module.is_relative_to(installed["site"]), module  # the installed copy, not the checkout
    assert root == installed["site"] / "explorer" / "_app"
    assert (root / "app.py").is_file() and (root / ".streamlit" / "config.toml").is_file()
    assert sorted(p.name for p in (root / "pages").glob("*.py")) == sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert (root / "assets" / "minilm-sentiment" / "head.safetensors").is_file()
    shipped = sorted(p.relative_to(root / "assets") for p in (root / "assets" / "i18n").rglob("*") if p.is_file())
    assert shipped == sorted(p.relative_to(ROOT / "assets") for p in (ROOT / "assets" / "i18n").rglob("*") if p.is_file())


def test_console_script_analyzes_from_another_folder(installed):
    out = _run(installed, installed["script"], "analyze", "--checkpoint", "minilm-sentiment",
               "--text", "I love this, what a wonderful day!", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["labels"] == ["negative", "neutral", "positive"]
    assert result["predicted"] == "positive"
    assert sum(result["softmax"]) == pytest.approx(1, abs=1e-4) and len(result["logits"]) == 3
    assert result["new_weights"] == []  # the sentiment head asset was found inside the package


def test_console_script_help(installed):
    out = _run(installed, installed["script"], "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: head-explorer")
    for command in ("analyze", "train-sentiment", "inspect-data", "finetune", "app"):
        assert command in out.stdout


def test_unknown_flags_stay_an_error_outside_app(capsys):
    from explorer.cli import main

    assert main(["analyze", "--text", "x", "--no-such-flag"]) == 2
    assert capsys.readouterr().err.strip() == "error: unrecognized arguments: --no-such-flag"
    assert main(["app", "--help"]) == 0
    assert "--dry-run" in capsys.readouterr().out


def test_app_command_serves_the_installed_app_on_loopback(installed):
    out = _run(installed, installed["script"], "app", "--dry-run", "--server.port", "8600")
    assert out.returncode == 0, out.stderr
    cmd = shlex.split(out.stdout)
    app = str(installed["site"] / "explorer" / "_app" / "app.py")
    assert cmd[1:4] == ["-c", SERVE, "run"] and app in cmd  # SERVE: deep links open on a fresh server
    assert {"--server.headless=true", "--server.address=127.0.0.1", "--server.enableStaticServing=true",
            "--client.showErrorDetails=none"} <= set(cmd)
    # no source watching: it re-resolved every module's path on the event loop after each run (bench_classroom)
    assert {"--server.fileWatcherType=none", "--server.runOnSave=false"} <= set(cmd)
    assert cmd[cmd.index(app) + 1:] == ["--server.port", "8600"]  # the caller's port, not the default's
    assert not any(c.startswith("--server.port=") for c in cmd)


def test_installed_app_runs(installed):
    """The installed app.py renders its first page: pages, i18n and the head all resolve inside the package."""
    script = """if True:
        import sys
        from streamlit.testing.v1 import AppTest
        import explorer.resources as r
        at = AppTest.from_file(str(r.APP), default_timeout=90).run()
        if at.exception or at.error:
            sys.exit(f"exception: {list(at.exception)} error: {[e.value for e in at.error]}")
        print(" ".join(m.value for m in at.metric))
    """
    out = _run(installed, installed["python"], "-c", script)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "positive" in out.stdout.split()  # the home page's prediction: the default text, the sentiment head


def test_pyproject_lists_every_package():
    """The packages are listed by hand (explorer._app maps the repo root): a new one must be added there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "explorer").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"explorer._app", "explorer._app.pages"}
    assert config["package-dir"] == {"explorer._app": ".", "explorer._app.pages": "pages"}
    requirements = {line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.startswith("#")}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {*project["dependencies"], *(p for extra in project["optional-dependencies"].values() for p in extra)} == requirements  # same pins
    assert "torch==2.13.0" in project["dependencies"]  # an unpinned torch resolves to a CUDA build
