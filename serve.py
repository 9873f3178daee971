"""The app as a container, a replica or any host serves it: `streamlit run serve.py` serves app.py (Streamlit
1.67 runs an `st.App` it finds in the script) with Streamlit's legacy pages/ resolution off from the start,
so a shared link opens its page even for the server's first visitor, plus GET /healthz: 200 once the
default model is loaded, 503 before; the session count and memory only on loopback (not forwarded by a
proxy) or with HEAD_EXPLORER_HEALTH_TOKEN as a bearer token.

Only light imports here: the model is loaded by a thread started once the server runs, so
/_stcore/health answers at once and /healthz says when the app is really usable."""
import gc
import importlib
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.responses import JSONResponse
from starlette.routing import Route
from streamlit.runtime.pages_manager import PagesManager


def _warm() -> None:
    from streamlit.runtime import Runtime

    while not Runtime.exists():  # ui.boot starts its reporter only inside a running server
        time.sleep(0.1)
    importlib.import_module("explorer.ui").boot()  # loads the default model, then logs "ready: model loaded"
    gc.freeze()  # as app.py does after its first imports: torch's objects live as long as the process


@asynccontextmanager
async def _lifespan(_app):
    # Before the server accepts anything. With pages/ beside app.py, the first session would otherwise
    # arm Streamlit's legacy resolution (one flag for the process), which knows pages by file stem only
    # and draws "Page not found" over a shared link like /guided-lesson (streamlit#9624) until app.py's
    # first run clears it. app.py names its pages with st.navigation: the legacy mode is never wanted.
    PagesManager.uses_pages_directory = False
    threading.Thread(target=_warm, name="head-explorer-warm", daemon=True).start()
    yield


async def _healthz(request) -> JSONResponse:
    report = sys.modules.get("explorer.ui.report")
    if report is None:
        body = {"ready": False}
    else:  # ready or not to anyone; the numbers on loopback or with the token (explorer/ui/report.py)
        body = report.status(full=report.trusted(request.client.host if request.client else None, request.headers))
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


app = st.App(Path(__file__).resolve().parent / "app.py", lifespan=_lifespan, routes=[Route("/healthz", _healthz)])
