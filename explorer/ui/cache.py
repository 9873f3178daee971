"""Cached loading and cached analyses: models are cached by name with st.cache_resource and shared by
every session, so they are read-only; analyses and pages' results share one byte budget."""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, Hashable, TypeVar

import streamlit as st

from explorer import resources
from explorer.model import attention
from explorer.model import analysis as _analysis
from explorer.model import checkpoints, heads
from explorer.runtime import budget, device
from explorer.runtime.config import env_config
from explorer.runtime.jobs import Progress
from explorer.runtime.session_models import freeze_long_lived
from explorer.text.errors import ExplorerError
from explorer.ui.render import show_error, plain
from explorer.ui.session import WHEN_GONE, Selection, other_is_empty, owner, selection, session_checkpoint, t

T = TypeVar("T")


@st.cache_resource(show_spinner=False, max_entries=8)
def _loaded(name: str) -> checkpoints.Checkpoint:
    # HEAD_EXPLORER_DEVICE (default auto: cuda, then mps, then cpu); a device not here is one line on the page.
    loaded = checkpoints.load_checkpoint(name, seed=checkpoints.DEFAULT_SEED, device=device.app_device())
    freeze_long_lived()  # the model lives as long as the process: out of the per-run collection
    return loaded


# One load per name, whatever the sidebar's seed: a seed draws only the weights the checkpoint's files lack,
# and each seed's copy shares every other tensor with the loaded one (checkpoints.reseeded): a visitor trying
# seeds adds heads, not models, which no budget would count (the model budget counts fine-tuned models only).
@st.cache_resource(show_spinner=False, max_entries=32)
def shared_checkpoint(name: str, seed: int) -> checkpoints.Checkpoint:
    base = _loaded(name)
    return base if seed == checkpoints.DEFAULT_SEED else checkpoints.reseeded(base, seed)


def checkpoint(name: str, seed: int = 0) -> checkpoints.Checkpoint:
    own = session_checkpoint(name)
    if own is not None:
        return own
    with st.spinner(t("app.loading_checkpoint", name=plain(name))):
        return shared_checkpoint(name, seed)


@st.cache_resource(max_entries=32)
def _shared_head(name: str, kind: str, seed: int) -> heads.Head:
    return heads.build_head(shared_checkpoint(name, seed), kind, seed)


def head(name: str, kind: str, seed: int = 0) -> heads.Head:
    own = session_checkpoint(name)
    if own is not None:  # session models have unique names, so this is cheap to rebuild
        return heads.build_head(own, kind, seed)
    return _shared_head(name, kind, seed)


# Analyses (~88 MB for a 512-token MiniLM text: its attentions and hidden states), their max-flows and
# the What-if and Attributions pages' results, for every session together, under one byte budget
# (HEAD_EXPLORER_ANALYSES_MB), oldest evicted first. Entries are shared between sessions, like the
# cached models: read-only. A page's results are keyed by its session's owner and go with the session.
ANALYSES = budget.ByteCache(lambda: env_config().analyses_mb)
WHEN_GONE.append(lambda gone: ANALYSES.drop(lambda key: key[0] == gone))


def selection_key(what: str, sel: Selection, *fields: str) -> tuple:
    """The shared cache's key for `what` computed from the picks `sel`: the picks it depends on (`fields`, every
    pick by default; Selection.key), after its name. The one place such a key is built."""
    return (what, *sel.key(*fields))


def _cached_analysis(sel: Selection) -> _analysis.Analysis:
    return ANALYSES.get_or_compute(selection_key("analysis", sel), lambda: _analysis.analyze(
        shared_checkpoint(sel.name, sel.seed), _shared_head(sel.name, sel.head_name, sel.seed), sel.text,
        text_pair=sel.text_pair))


def _cached_flow(sel: Selection):  # (layers, seq)
    return ANALYSES.get_or_compute(selection_key("flow", sel), lambda: attention.flow(_cached_analysis(sel).attentions))


def flow_work(sel: Selection, a: _analysis.Analysis) -> Callable[[Progress], object]:
    """`work(progress)` giving `a` (the analysis of `sel`) its max-flow, safe on a job's thread (no streamlit): a
    shared model's flow joins the shared cache, as analysis(flow=True) keeps it."""
    att = a.attentions  # all the work reads: a job waiting in line holds no more of the analysis
    if session_checkpoint(sel.name) is not None:
        return lambda progress: attention.flow(att, progress=progress)
    key = selection_key("flow", sel)
    return lambda progress: ANALYSES.get_or_compute(key, lambda: attention.flow(att, progress=progress))


def cached_flow(sel: Selection):
    """The shared cache's max-flow for `sel`, or None (a session model's, or not computed yet)."""
    return ANALYSES.get(selection_key("flow", sel))


def memo(page: str, params: Hashable, compute: Callable[[], T] | None = None) -> T | None:
    """A page's result for `params`: this session's kept one, or `compute()` kept now within the
    analyses' byte budget (oldest evicted first), or None when nothing is kept and there is no
    `compute` (a page that asks before costly work looks first). The one cache pages use."""
    me = owner()
    key = (me, page, params)
    if compute is None:
        return ANALYSES.get(key)
    value = ANALYSES.get(key)
    if value is None:
        value = compute()
        ANALYSES.put(key, value)
        fit_session(me)
    return value


def session_bytes() -> int:
    """What this session keeps in its state (texts, uploads, data versions, audit results), counted as
    every budget counts (budget.nbytes)."""
    ss = st.session_state
    return budget.nbytes({k: ss[k] for k in list(ss.keys()) if k in ss})


def fit_session(session: str) -> int:
    """Keep this session within HEAD_EXPLORER_SESSION_MB: its state plus its page results, the oldest
    results evicted first (the newest kept). Returns the bytes evicted."""
    limit = env_config().session_mb * 2**20
    return ANALYSES.trim(lambda key: key[0] == session, limit, extra=session_bytes())


def timed(compute: Callable[[], T]) -> tuple[T, float]:
    """compute() and the seconds it took, to keep together in a memo (a page shows how long it took)."""
    start = time.perf_counter()
    return compute(), time.perf_counter() - start


def analysis(name: str, kind: str, text: str, seed: int = 0, flow: bool = False,
             text_pair: str = "") -> _analysis.Analysis:
    """Cached by name. Flow is added to the cached analysis, so turning it on never reruns the encoder."""
    if session_checkpoint(name) is not None:
        return _analysis.analyze(checkpoint(name, seed), head(name, kind, seed), text, flow=flow, text_pair=text_pair)
    checkpoint(name, seed)  # a first load shows its spinner
    sel = Selection(name, kind, text, seed, text_pair)
    a = _cached_analysis(sel)
    if not flow:
        return a
    with st.spinner(t("tokens.computing_flow")):
        return dataclasses.replace(a, flow=_cached_flow(sel))


def show_other_prompt() -> bool:
    """True, after a prompt for the path, when "other…" is picked with no path yet: the page then shows no
    model's numbers (selection() would fall back to the default model, which nobody picked)."""
    if other_is_empty():
        st.info(t("app.other_empty"))
        return True
    return False


def current_analysis(flow: bool = False) -> _analysis.Analysis | None:
    """The analysis for the sidebar's picks, or None after showing a one-line st.error."""
    if show_other_prompt():
        return None
    sel = selection()
    try:
        return analysis(sel.name, sel.head_name, sel.text, sel.seed, flow, sel.text_pair)
    except ExplorerError as err:
        show_error(err)
        return None


def current_head() -> heads.Head:
    """The head for the sidebar's picks (call after current_analysis() succeeded)."""
    sel = selection()
    return head(sel.name, sel.head_name, sel.seed)


@st.cache_resource(show_spinner=False)
def plotly_js_src() -> str | None:
    """A relative URL of plotly.js under Streamlit's static serving, so a page in an st.iframe loads
    the 4.8 MB library as a file instead of carrying it in every rerun's message; None (inline it)
    where static serving is off or the install step (resources.install_static) made no copy. Nothing
    is written here: Streamlit serves only static/ beside app.py, which a read-only install cannot change."""
    name = resources.plotly_js_name()
    if not st.get_option("server.enableStaticServing") or not (resources.STATIC / name).is_file():
        return None
    return f"app/static/{name}"
