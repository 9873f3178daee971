"""Every limit the browser enforces, enforced by the server too, before a value reaches a session.

A browser keeps a text area under its max_chars and a number input inside its range, but anything that
speaks Streamlit's websocket protocol can send a 12 MB text or a NaN seed. Streamlit's own deserializers
truncate long texts and reset out-of-range numbers (after the whole value was stored in the session), and
raise on a NaN for an integer input, before the app's script runs, so every later run of that session
failed. So each rerun request is checked where it arrives (AppSession.handle_backmsg): a widget value that
breaks its widget's limits, or the app's (MAX_TEXT_CHARS characters for any text, finite numbers), is
dropped from the request, the session keeps its previous value, and its next run shows one line.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession

from explorer.model.analysis import MAX_TEXT_CHARS


@dataclass(frozen=True)
class Refusal:
    """One widget value a request carried and the server did not take: a message key and its fields."""
    key: str  # the widget's user key (the end of its element id)
    reason: str  # an errors.* message key
    fields: tuple[tuple[str, object], ...] = ()


_LOCK = threading.Lock()
_REFUSED: dict[str, list[Refusal]] = {}  # session id -> refusals its next run reports
_KEPT_PER_SESSION = 8  # one line each; a client sending thousands gets the last few
_installed = False


def _limits(wid: str, session: AppSession):
    """The widget's own limits as Streamlit registered them (min/max, max_chars), or None. No public API
    gives them; where these internals differ, only the app's own limits apply."""
    widgets = getattr(getattr(session, "_session_state", None), "_new_widget_state", None)
    metadata = getattr(widgets, "widget_metadata", {}).get(wid)
    return getattr(getattr(metadata, "deserializer", None), "__self__", None)


def check(state: WidgetState, limits=None) -> Refusal | None:
    """Why `state` breaks its widget's limits or the app's, or None when it is fine."""
    key = state.id.rsplit("-", 1)[-1]
    kind = state.WhichOneof("value")
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


def _gated(handle):
    def handle_backmsg(self: AppSession, msg) -> None:
        if msg.WhichOneof("type") == "rerun_script":
            widgets = msg.rerun_script.widget_states.widgets
            found = [(i, check(w, _limits(w.id, self))) for i, w in enumerate(widgets)]
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


def install() -> None:
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
