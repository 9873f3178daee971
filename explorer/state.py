"""The one streamlit glue module: cached loading, cached analyses, session state, translation.

Models are cached by name with st.cache_resource and shared by every session, so they are
read-only. A session's own fine-tuned models live in MODELS under unique names, bounded per session
and per process (explorer/session_models.py); the session holds only its owner key.
"""
from __future__ import annotations

import dataclasses
import re
import uuid
import weakref
from typing import Callable

import numpy as np
import streamlit as st
import torch
from streamlit.logger import get_logger

from . import analysis as _analysis
from . import attention, budget, checkpoints, finetune, heads, i18n, jobs, session_models
from .errors import ExplorerError

_log = get_logger("head_explorer")
# Sessions run in threads of one process: one intra-op thread per forward (by default) lets a class's
# requests share the cores instead of each taking them all (HEAD_EXPLORER_TORCH_THREADS to change it).
torch.set_num_threads(session_models.env_int("HEAD_EXPLORER_TORCH_THREADS", 1))

MODELS = session_models.ModelStore()  # every session's fine-tuned models, within the bounds
# Background jobs (fine-tunes), HEAD_EXPLORER_TRAINING at once: each holds a private model copy.
JOBS = jobs.Jobs()


class _Owner:
    """A session's key in MODELS and JOBS. When Streamlit forgets the session, this object dies and
    its models are dropped and its jobs stopped with it."""

    def __init__(self):
        self.id = uuid.uuid4().hex
        weakref.finalize(self, MODELS.drop_owner, self.id)
        weakref.finalize(self, _drop_results, self.id)
        weakref.finalize(self, JOBS.stop_owner, self.id)


def _drop_results(owner: str) -> None:
    ANALYSES.drop(lambda key: key[0] == owner)


def _owner() -> str:
    ss = st.session_state
    if "_model_owner" not in ss:  # not setdefault: a spare _Owner would die at once and run its finalizer
        ss["_model_owner"] = _Owner()
    return ss["_model_owner"].id


def lang() -> str:
    return st.session_state.get("lang", "en")


def t(key: str, **fmt) -> str:
    return i18n.t(key, lang(), **fmt)


@st.cache_resource(show_spinner=False, max_entries=8)
def _shared_checkpoint(name: str, seed: int) -> checkpoints.Checkpoint:
    return checkpoints.load_checkpoint(name, seed=seed)


def register_session_checkpoint(ck: checkpoints.Checkpoint) -> None:
    """Make a per-session model (e.g. just fine-tuned) selectable on every page of this session."""
    MODELS.add(_owner(), ck)


def session_checkpoint_names() -> list[str]:
    return MODELS.names(_owner())


def session_checkpoint(name: str) -> checkpoints.Checkpoint | None:
    return MODELS.get(_owner(), name)


def session_zip(name: str) -> Callable[[], bytes]:
    """Deferred download data: the zip is built when the button is clicked (it runs outside the
    script thread, hence the owner captured now) and never kept in the session."""
    owner = _owner()

    def build() -> bytes:
        ck = MODELS.get(owner, name)
        if ck is None:  # evicted since the page was drawn
            raise finetune.FinetuneError("model_evicted", name=name)
        return finetune.export_zip(ck)

    return build


def start_job(kind: str, name: str, work: jobs.Work) -> jobs.Job | None:
    """Run `work(progress, stop)` in the background for this session, or None when every slot is taken.
    The job stops when its tab has been disconnected for jobs.GRACE_S seconds: a closed tab's session
    lingers in Streamlit for a reconnect, so its finalizer alone could keep a core busy for minutes."""
    return JOBS.start(_owner(), kind, name, work, alive=_session_alive())


def _session_alive() -> Callable[[], bool] | None:
    """Is this session's browser still connected? Asked from the watchdog thread, hence the ids captured
    now; None without a server (bare mode), where only the owner's finalizer stops a job."""
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not runtime.exists():
        return None
    rt, session_id = runtime.get_instance(), ctx.session_id
    return lambda: rt.is_active_session(session_id)  # thread-safe in Streamlit's Runtime


def stop_if_gone() -> None:
    """For long work on the script thread (the label audit, attributions): end this run (st.stop) once
    its tab has been disconnected for jobs.GRACE_S seconds. Streamlit stops it only when it drops the
    session, minutes later; until then the work would keep a core for nobody."""
    alive = _session_alive()
    ss = st.session_state
    if alive is None or alive():
        ss.pop("_gone_since", None)
        return
    import time

    since = ss.setdefault("_gone_since", time.monotonic())
    if time.monotonic() - since >= jobs.GRACE_S:
        _log.info("script run stopped: its tab has been gone %.1f s", time.monotonic() - since)
        st.stop()


def progress_to(bar) -> Callable[[float, str], None]:
    """A core `progress(fraction, message)` drawn on `bar` (clamped to [0, 1]) that also ends the run
    once the tab is gone (stop_if_gone)."""
    def report(frac: float, msg: str) -> None:
        stop_if_gone()
        bar.progress(min(1.0, max(0.0, frac)), text=msg)

    return report


def show_evictions() -> None:
    """Say which of this session's models were evicted to stay within the memory bounds."""
    for name, why in MODELS.take_evicted(_owner()):
        st.info(t(f"safety.evicted_{why}", name=plain(name), n=MODELS.per_owner, mb=MODELS.budget_bytes // 2**20))


def checkpoint(name: str, seed: int = 0) -> checkpoints.Checkpoint:
    own = session_checkpoint(name)
    if own is not None:
        return own
    with st.spinner(t("app.loading_checkpoint", name=name)):
        return _shared_checkpoint(name, seed)


@st.cache_resource(max_entries=32)
def _shared_head(name: str, kind: str, seed: int) -> heads.Head:
    return heads.build_head(_shared_checkpoint(name, seed), kind, seed)


def head(name: str, kind: str, seed: int = 0) -> heads.Head:
    own = session_checkpoint(name)
    if own is not None:  # session models have unique names, so this is cheap to rebuild
        return heads.build_head(own, kind, seed)
    return _shared_head(name, kind, seed)


# Analyses (~88 MB for a 512-token MiniLM text: its attentions and hidden states), their max-flows and
# the What-if and Attributions pages' results, for every session together, under one byte budget
# (HEAD_EXPLORER_ANALYSES_MB), oldest evicted first. Entries are shared between sessions, like the
# cached models: read-only. A page's results are keyed by its session's owner and go with the session.
ANALYSES = budget.ByteCache(budget.ANALYSES_ENV, budget.DEFAULT_ANALYSES_MB)


def _cached_analysis(name: str, kind: str, text: str, seed: int, text_pair: str = "") -> _analysis.Analysis:
    return ANALYSES.get_or_compute(("analysis", name, kind, text, seed, text_pair), lambda: _analysis.analyze(
        _shared_checkpoint(name, seed), _shared_head(name, kind, seed), text, text_pair=text_pair))


def _cached_flow(name: str, kind: str, text: str, seed: int, text_pair: str = ""):  # (layers, seq)
    return ANALYSES.get_or_compute(("flow", name, kind, text, seed, text_pair), lambda: attention.flow(
        _cached_analysis(name, kind, text, seed, text_pair).attentions))


def kept_result(page: str, params: tuple):
    """A result this session's `page` computed for `params` and the budget still holds, or None."""
    return ANALYSES.get((_owner(), page, params))


def keep_result(page: str, params: tuple, value) -> None:
    """Keep a page's result for this session, within the analyses' byte budget."""
    ANALYSES.put((_owner(), page, params), value)


def analysis(name: str, kind: str, text: str, seed: int = 0, flow: bool = False,
             text_pair: str = "") -> _analysis.Analysis:
    """Cached by name. Flow is added to the cached analysis, so turning it on never reruns the encoder."""
    if session_checkpoint(name) is not None:
        return _analysis.analyze(checkpoint(name, seed), head(name, kind, seed), text, flow=flow, text_pair=text_pair)
    checkpoint(name, seed)  # a first load shows its spinner
    a = _cached_analysis(name, kind, text, seed, text_pair)
    if not flow:
        return a
    with st.spinner(t("tokens.computing_flow")):
        return dataclasses.replace(a, flow=_cached_flow(name, kind, text, seed, text_pair))


class Selection(tuple):
    """(checkpoint name, head kind, text, seed), unpacked as four; `.text_pair` is the optional text B."""

    def __new__(cls, name: str, kind: str, text: str, seed: int, text_pair: str = ""):
        sel = super().__new__(cls, (name, kind, text, seed))
        sel.text_pair = text_pair
        return sel


def selection() -> Selection:
    """(checkpoint name, head kind, text, seed) as picked in the sidebar, plus `.text_pair`."""
    ss = st.session_state
    name = ss.get("checkpoint_other") if ss.get("checkpoint") == OTHER else ss.get("checkpoint")
    # Keys are absent when a page runs without the sidebar (AppTest's switch_page): use the defaults.
    text = ss.get("text", i18n.t("app.text_default", "en"))
    return Selection(name or checkpoints.DEFAULT_CHECKPOINT, ss.get("head", "own"), text, int(ss.get("seed", 0)),
                     (ss.get("text_pair") or "").strip() and ss.get("text_pair"))


OTHER = "other…"


def current_analysis(flow: bool = False) -> _analysis.Analysis | None:
    """The analysis for the sidebar's picks, or None after showing a one-line st.error."""
    sel = selection()
    name, kind, text, seed = sel
    try:
        return analysis(name, kind, text, seed, flow, sel.text_pair)
    except ExplorerError as err:
        error(err)
        return None


# Characters that start Markdown (and Streamlit's :color[...] / :emoji:) anywhere in a line, and the
# list or heading markers that only count at its start.
# `_` inside a word and `:` before anything but a letter are literal already (CommonMark, Streamlit's
# :color[...] and :emoji: forms), so LABEL_0 and "error: x" stay as typed.
_MARKDOWN = re.compile(r"([\\`*\[\]<>!~|$#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=[A-Za-z]))")
_LINE_START = re.compile(r"^(\s*|\s*\d+)((?<=\d)[.)]|(?<!\d)[-+=])", re.M)


def plain(text: object) -> str:
    """User data (labels, texts, file and column names) as literal text inside Markdown: Markdown
    characters are backslash-escaped, so `![x](http://…)` shows as typed and fetches nothing."""
    out = _LINE_START.sub(lambda m: m[1] + "\\" + m[2], _MARKDOWN.sub(r"\\\1", str(text)))
    return out.replace("\n", "  \n")


def error(err: BaseException | str) -> None:
    """One st.error line: a core error in the session's language, user data kept literal. Any other
    exception (e.g. from a background thread) is logged and shown as the translated "unexpected" line."""
    if isinstance(err, ExplorerError):
        text = err.message(lang())
    elif isinstance(err, str):
        text = err
    else:
        _log.error("unexpected error", exc_info=err)
        text = t("errors.unexpected", kind=type(err).__name__)
    st.error(plain(text.strip().splitlines()[0] if text.strip() else type(err).__name__))


def guarded(run: Callable[[], object]) -> None:
    """Run a page (or a fragment). Bad input that escaped the page shows as its one line; anything else
    as one translated line, the traceback going only to the server log. st.rerun, st.stop and
    st.switch_page raise BaseExceptions (Streamlit's ScriptControlException), which pass through."""
    try:
        run()
    except ExplorerError as err:
        error(err)
    except Exception as err:  # noqa: BLE001 - the page boundary: visitors never see a traceback
        _log.exception("unexpected error while running a page")
        st.error(t("errors.unexpected", kind=type(err).__name__))


def table(rows: list[dict], **grid) -> None:
    """A data table: the interactive grid, or in presenter view an HTML table, which takes the larger
    type (the grid is drawn on a canvas that CSS cannot enlarge). User strings stay literal."""
    if st.session_state.get("presenter"):
        def cell(v):  # ✓ for a flag (no English true/false), blank for none, user text literal
            if isinstance(v, (bool, np.bool_)):
                return "✓" if v else ""
            return "" if v is None else plain(v) if isinstance(v, str) else v
        st.table([{k: cell(v) for k, v in row.items()} for row in rows], hide_index=True)
    else:
        st.dataframe(rows, hide_index=True, **grid)


def headers(rows: list[dict], prefix: str) -> list[dict]:
    """Table rows from the core with their column names translated (`prefix` + column name)."""
    return [{t(prefix + k): v for k, v in row.items()} for row in rows]


STEP_KEYS = {"first token": "first", "last non-pad token": "last", "mean pool": "mean"}


def step_label(name: str) -> str:
    """A head step's name as shown: the pooling steps are words, the others module names."""
    return t(f"app.step_{STEP_KEYS[name]}") if name in STEP_KEYS else name


def _save(key: str) -> None:
    st.session_state[f"_keep_{key}"] = st.session_state[key]


def sticky(key: str, default=None) -> dict:
    """Widget kwargs that keep a value when the widget is rebuilt or was not drawn for a while.

    Streamlit gives a widget a new identity when its label changes (a language switch does
    that), and drops its value when a run does not draw it (another page was open); the value is
    kept under a second key and restored first. `default` is the first value: pass it here, not to
    the widget, which would warn that its value was also set through session state.
    """
    kept = f"_keep_{key}"
    if default is not None:
        st.session_state.setdefault(kept, default)
    if kept in st.session_state:
        st.session_state[key] = st.session_state[kept]
    elif key in st.session_state:
        st.session_state[kept] = st.session_state[key]
    return {"key": key, "on_change": _save, "args": (key,)}


def persist(prefixes: tuple[str, ...]) -> None:
    """Keep widget values across page switches: streamlit drops the state of widgets that were not
    drawn in the last run, unless the value is re-assigned through session state. Call it on every
    run (from app.py), and only for pages without buttons or uploaders, whose keys cannot be set."""
    ss = st.session_state
    for key in [k for k in ss if isinstance(k, str) and k.startswith(prefixes)]:
        ss[key] = ss[key]


def current_head() -> heads.Head:
    """The head for the sidebar's picks (call after current_analysis() succeeded)."""
    name, kind, _, seed = selection()
    return head(name, kind, seed)


_STATIC = __import__("pathlib").Path(__file__).resolve().parent.parent / "static"  # served as app/static/


@st.cache_resource(show_spinner=False)
def plotly_js_src() -> str | None:
    """A relative URL of plotly.js under Streamlit's static serving, so a page in an st.iframe loads
    the 4.8 MB library as a file instead of carrying it in every rerun's message; None (inline it)
    where static serving is off or the copy cannot be written. The copy is named by plotly's version,
    so it always matches the figures' JSON."""
    import os
    import shutil

    import plotly

    if not st.get_option("server.enableStaticServing"):
        return None
    name = f"plotly-{plotly.__version__}.min.js"
    target = _STATIC / name
    if not target.exists():
        try:
            _STATIC.mkdir(exist_ok=True)
            tmp = target.with_name(f"{name}.{os.getpid()}.tmp")
            shutil.copyfile(os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js"), tmp)
            os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file
        except OSError:
            return None
    return f"app/static/{name}"

