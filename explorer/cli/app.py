"""`app`: serve the Streamlit app with `streamlit run`, .streamlit/config.toml's settings passed as flags."""
from __future__ import annotations

import os
import sys


def add_parser(sub) -> None:
    s = sub.add_parser("app", help="serve the Streamlit app (on 127.0.0.1:8501 unless told otherwise)",
                       description="Serve the app with `streamlit run`. Any further arguments go to Streamlit, "
                                   "e.g. `head-explorer app --server.port 8600`.")
    s.add_argument("--dry-run", action="store_true", help="print the streamlit command instead of running it")
    s.set_defaults(func=run, streamlit_args=[])


# `python -m streamlit`, less one legacy path. With a pages/ folder beside app.py, Streamlit marks the
# process as a pages/-folder app (a process-wide flag, set when the first session starts) and runs every
# script run through its legacy pages/ resolution until some run has called st.navigation. That
# resolution knows the pages only by file stem, not by app.py's url_path slugs: a shared link
# (/guided-lesson) opened as the server's first visit, or while that first run was still importing
# torch, drew "Page not found" over the page (streamlit#9624). app.py names its pages with
# st.navigation, so the flag is cleared before the server starts. Run in the child: only explorer.ui
# imports streamlit into this library's processes.
SERVE = ("from streamlit.runtime.pages_manager import PagesManager; PagesManager.uses_pages_directory = False; "
         "from streamlit.web.cli import main; main(prog_name='streamlit')")



def streamlit_command(extra: list[str]) -> list[str]:
    """`streamlit run <app.py>` (through SERVE), with .streamlit/config.toml's settings (headless, loopback only, static
    serving, no tracebacks for visitors) as flags: Streamlit reads that file only from the working
    directory, and an installed app is started from anywhere. Flags in `extra` win over those defaults."""
    import tomllib

    from explorer import resources

    with open(resources.STREAMLIT_CONFIG, "rb") as f:
        config = tomllib.load(f)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    given = {arg.split("=", 1)[0] for arg in extra if arg.startswith("--")}
    defaults = [f"{name}={str(value).lower() if isinstance(value, bool) else value}"
                for name, value in _flags(config) if name not in given]
    return [sys.executable, "-c", SERVE, "run", *defaults, str(resources.APP), *extra]



def _flags(table: dict, prefix: str = "--") -> list[tuple[str, object]]:
    """(--section.key, value) for every option of a config table; nested tables ([theme.light]) as dotted names."""
    return [flag for key, value in table.items()
            for flag in (_flags(value, f"{prefix}{key}.") if isinstance(value, dict) else [(f"{prefix}{key}", value)])]


def run(args) -> int:
    import shlex

    cmd = streamlit_command(args.streamlit_args)
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    from explorer import resources

    try:  # static serving warns at start when the folder is missing; plotly.js is copied in on first use
        resources.STATIC.mkdir(exist_ok=True)
    except OSError:
        pass
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the server is this process: Ctrl+C and signals reach it directly
