"""Where the app's files are: app.py, pages/, assets/, static/ and .streamlit/config.toml.

In a checkout they sit beside the `explorer` package (the repository root). `pip install .` puts the
same tree inside the package, as `explorer/_app/` (pyproject.toml maps the root there), so site-packages
holds no stray top-level folders. One home for that choice: every path the code reads from disk at
runtime starts here.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
_INSTALLED = PACKAGE / "_app"
ROOT = _INSTALLED if (_INSTALLED / "app.py").is_file() else PACKAGE.parent
APP = ROOT / "app.py"  # the Streamlit entry; pages/ beside it
ASSETS = ROOT / "assets"  # i18n catalogues, the sentiment head
STATIC = ROOT / "static"  # Streamlit serves the folder beside the entry script as app/static/
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"  # the server defaults `head-explorer app` passes on
