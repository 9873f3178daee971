"""Every limit the browser enforces, enforced by the server too, before a value reaches a session.

A browser keeps a text area under its max_chars and a number input inside its range, but anything that
speaks Streamlit's websocket protocol can send a 12 MB text or a NaN seed. Streamlit's own deserializers
truncate long texts and reset out-of-range numbers (after the whole value was stored in the session), and
raise on a NaN for an integer input, before the app's script runs, so every later run of that session
failed. So each rerun request is checked where it arrives (AppSession.handle_backmsg): a widget value that
breaks its widget's limits, or the app's (MAX_TEXT_CHARS characters for any text, finite numbers), is
dropped from the request, the session keeps its previous value, and its next run shows one line.

The same holds for a value of the wrong type (a text sent as a number, a seed as a string) and for an option a
choice widget does not have: Streamlit stores either as it came, and the page's code, which compares it with
its own options, failed on every later run. Each widget's value type is the one Streamlit registered for it
(its proto's value field); a number widget takes an int_value too, as a browser may send one.

Two other messages a client may send are kept from reaching what sessions share: a `clear_cache` request,
which Streamlit answers by emptying every cache of the process (every session's models), is ignored and
logged; a query string past Streamlit's own limit, which Streamlit drops without a word, is noted for the
session's first run, so a shared link's lost text is said (explorer/teach/links.py).
"""
from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.state.query_params import CLIENT_STATE_QUERY_STRING_MAX_LENGTH, sanitize_query_string

from explorer.model.analysis import MAX_TEXT_CHARS


@dataclass(frozen=True)
class Refusal:
    """One widget value a request carried and the server did not take: a message key and its fields."""
    key: str  # the widget's user key (the end of its element id)
    reason: str  # an errors.* message key
    fields: tuple[tuple[str, object], ...] = ()


_LOCK = threading.Lock()
_REFUSED: dict[str, list[Refusal]] = {}  # session id -> refusals its next run reports
_DROPPED_QUERY: dict[str, int] = {}  # session id -> the length of a query string Streamlit dropped
_KEPT_PER_SESSION = 8  # one line each; a client sending thousands gets the last few
_installed = False
log = logging.getLogger("explorer.ui.gate")
# The value fields a widget registered with `value_type` also takes: a browser's number input may send an int.
_ALSO_TAKES = {"double_value": ("int_value",)}


def _metadata(wid: str, session: AppSession):
    """The widget's registration (its value type and its deserializer), or None. No public API gives it;
    where these internals differ, only the app's own limits apply."""
    widgets = getattr(getattr(session, "_session_state", None), "_new_widget_state", None)
    return getattr(widgets, "widget_metadata", {}).get(wid)


def _limits(metadata):
    """The widget's own limits as Streamlit registered them (min/max, max_chars, options), or None."""
    return getattr(getattr(metadata, "deserializer", None), "__self__", None)


def _options(limits) -> dict | None:
    """A choice widget's options by their formatted names (what a client sends), or None for other widgets."""
    for name in ("formatted_option_to_option_index", "formatted_option_to_index"):  # selectbox/radio, select_slider
        options = getattr(limits, name, None)
        if isinstance(options, dict):
            return options
    return None


def refusal(state: WidgetState, limits=None, value_type: str | None = None) -> Refusal | None:
    """Why `state` breaks its widget's limits or the app's, or None when it is fine. `value_type` is the
    value field the widget was registered with (None: not known, no type check)."""
    key = state.id.rsplit("-", 1)[-1]
    kind = state.WhichOneof("value")
    if value_type and kind is not None and kind != value_type and kind not in _ALSO_TAKES.get(value_type, ()):
        return Refusal(key, "input_wrong_type")
    options = _options(limits)
    if options is not None and kind in ("string_value", "string_array_value"):
        sent = [state.string_value] if kind == "string_value" else list(state.string_array_value.data)
        if any(s not in options for s in sent):
            return Refusal(key, "input_not_an_option")
    if kind == "string_value":
        cap = min(MAX_TEXT_CHARS, getattr(limits, "max_chars", None) or MAX_TEXT_CHARS)
        if len(state.string_value) > cap:
            return Refusal(key, "input_too_long", (("n", len(state.string_value)), ("limit", cap)))
        return None
    if kind in ("double_value", "int_value"):
        numbers = [getattr(state, kind)]
    elif kind == "double_array_value":
        numbers = list(state.double_array_value.data)
    else:
        return None
    lo, hi = getattr(limits, "min_value", None), getattr(limits, "max_value", None)
    for x in numbers:
        if not math.isfinite(x):
            return Refusal(key, "input_not_finite", (("value", repr(x)),))
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and not lo <= x <= hi:
            return Refusal(key, "input_out_of_range", (("value", _shown(x)), ("lo", _shown(lo)), ("hi", _shown(hi))))
    return None


def _shown(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _checked(w: WidgetState, session: AppSession) -> Refusal | None:
    metadata = _metadata(w.id, session)
    return refusal(w, _limits(metadata), getattr(metadata, "value_type", None))


def _gated(handle):
    def handle_backmsg(self: AppSession, msg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "clear_cache":
            log.warning("ignored a client's clear_cache request (session %s): the caches are every session's", self.id)
            return None
        if kind == "rerun_script":
            query = msg.rerun_script.query_string
            if query and not sanitize_query_string(query):  # Streamlit drops it whole and says nothing
                with _LOCK:
                    _DROPPED_QUERY[self.id] = len(query)
            widgets = msg.rerun_script.widget_states.widgets
            found = [(i, _checked(w, self)) for i, w in enumerate(widgets)]
            refused = [(i, r) for i, r in found if r is not None]
            for i, _ in reversed(refused):
                del widgets[i]  # the session keeps the value it had
            if refused:
                with _LOCK:
                    kept = _REFUSED.setdefault(self.id, [])
                    kept.extend(r for _, r in refused)
                    del kept[:-_KEPT_PER_SESSION]
        return handle(self, msg)

    return handle_backmsg


def guard_reruns() -> None:
    """Check every rerun request of every session in this process (once; later calls do nothing)."""
    global _installed
    with _LOCK:
        if not _installed:
            AppSession.handle_backmsg = _gated(AppSession.handle_backmsg)
            _installed = True


def take(session_id: str) -> list[Refusal]:
    """The refusals of `session_id` not yet shown; each is shown once."""
    with _LOCK:
        return _REFUSED.pop(session_id, [])


def take_dropped_query(session_id: str) -> tuple[int, int] | None:
    """(its length, Streamlit's limit) of the last query string of `session_id` that Streamlit dropped for its
    size, or None; each is taken once."""
    with _LOCK:
        n = _DROPPED_QUERY.pop(session_id, None)
    return None if n is None else (n, CLIENT_STATE_QUERY_STRING_MAX_LENGTH)
