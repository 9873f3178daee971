"""Where the app's files are: app.py, pages/, assets/, static/ and .streamlit/config.toml (the one folder it
writes to at run time is explorer.runtime.scratch.cache_dir).

In a checkout they sit beside the `explorer` package (the repository root). `pip install .` puts the
same tree inside the package, as `explorer/_app/` (pyproject.toml maps the root there), so site-packages
holds no stray top-level folders. One home for that choice: every path the code reads from disk at
runtime starts here.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
_INSTALLED = PACKAGE / "_app"
ROOT = _INSTALLED if (_INSTALLED / "app.py").is_file() else PACKAGE.parent
APP = ROOT / "app.py"  # the Streamlit entry; pages/ beside it
ASSETS = ROOT / "assets"  # i18n catalogues, the sentiment head
STATIC = ROOT / "static"  # Streamlit serves the folder beside the entry script as app/static/
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"  # the server defaults `head-explorer app` passes on

def plotly_js_name() -> str:
    """The static copy of plotly.js, named by plotly's version so it always matches the figures' JSON."""
    import plotly

    return f"plotly-{plotly.__version__}.min.js"


def install_static() -> Path:
    """Copy plotly.js into static/ (`make setup` and the Dockerfile run this, with write access to the
    code): the app itself never writes there, so a read-only install serves the copy made at install
    time, or inlines plotly.js where there is none."""
    import shutil

    import plotly

    target = STATIC / plotly_js_name()
    if not target.exists():
        STATIC.mkdir(exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", tmp)
        os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file
    return target


if __name__ == "__main__":
    print(install_static())
