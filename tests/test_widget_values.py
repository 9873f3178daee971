"""What a client sends past the browser reaches no session as it came: a widget value of the wrong type or an
option its widget lacks is refused at the gate (explorer/ui/gate.py), a kept value that no longer fits its
widget starts over before a page reads it (ui.sticky's options), a client's clear_cache empties nothing
shared, and a sidebar seed adds a head's new weights, not a model (checkpoints.reseeded).
tests/test_server_limits.py sends the same over the websocket."""
from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
import streamlit as st
import torch
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession
from streamlit.testing.v1 import AppTest

from explorer.model import checkpoints
from explorer.ui import cache, gate

ROOT = Path(__file__).resolve().parent.parent


def _state(key: str, **value) -> WidgetState:
    return WidgetState(id=f"$$ID-0123-{key}", **value)


@pytest.mark.parametrize("value, value_type", [
    (dict(string_value="abc"), "double_value"),  # the seed as a string
    (dict(int_value=5), "string_value"),  # the text as a number
    (dict(double_value=1e-3), "string_array_value"),  # a select_slider's value as a number
    (dict(bool_value=True), "int_value"),
])
def test_a_value_of_another_type_than_its_widget_takes_is_refused(value, value_type):
    r = gate.refusal(_state("w", **value), None, value_type)
    assert r is not None and (r.key, r.reason) == ("w", "input_wrong_type")


def test_a_number_widget_takes_an_int_and_unknown_widgets_are_not_type_checked():
    """A browser's number input sends an int_value for a whole number; a widget with no registration
    (value_type None) keeps only the app's own limits."""
    assert gate.refusal(_state("seed", int_value=3), None, "double_value") is None
    assert gate.refusal(_state("text", string_value="fine"), None, "string_value") is None
    assert gate.refusal(_state("text", int_value=3), None, None) is None


@pytest.mark.parametrize("limits, value", [
    (SimpleNamespace(formatted_option_to_option_index={"1": 0, "2": 1}), dict(string_value="99")),  # selectbox
    (SimpleNamespace(formatted_option_to_option_index={"1": 0, "2": 1}), dict(string_value="abc")),
    (SimpleNamespace(formatted_option_to_index={"1e-03": 0}), dict(string_array_value={"data": ["7"]})),  # slider
])
def test_an_option_the_widget_lacks_is_refused(limits, value):
    kind = next(iter(value))
    r = gate.refusal(_state("tokens_layer", **value), limits, kind)
    assert r is not None and r.reason == "input_not_an_option"
    ok = {"string_value": "1"} if kind == "string_value" else {"string_array_value": {"data": ["1e-03"]}}
    assert gate.refusal(_state("tokens_layer", **ok), limits, kind) is None  # its own options pass


def test_stored_values_that_no_longer_fit_their_widget_start_over():
    """A layer this model lacks (a string, or past its 6 layers) and a head it lacks, kept in the session,
    reset to the widgets' defaults before the Tokens page compares them: no error line, no traceback."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/tokens.py")
    for key, value in {"checkpoint": "minilm-sentiment", "head": "own", "text": "a fine day", "seed": 0,
                       "lang": "en", "tokens_layer": "99", "tokens_head": 77, "dropout_which": "x"}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == []
    assert at.session_state["tokens_layer"] == 6 and at.session_state["tokens_head"] == "all"


def test_a_clients_clear_cache_clears_nothing_shared(caplog):
    """Streamlit answers a clear_cache BackMsg by emptying every cache of the process and the sender's state;
    behind the gate it is logged and dropped, whatever the session."""
    gate.guard_reruns()
    loads = []

    @st.cache_resource
    def shared() -> object:
        loads.append(1)
        return object()

    first = shared()
    cleared = []
    session = SimpleNamespace(id="s1", _session_state=SimpleNamespace(clear=lambda: cleared.append(1)))
    # Streamlit's own handler, reached if the gate passes the message on: it would clear for everyone.
    session._handle_clear_cache_request = lambda: AppSession._handle_clear_cache_request(session)
    session._handle_backmsg_exception = lambda err: (_ for _ in ()).throw(err)
    msg = BackMsg()
    msg.clear_cache = True
    with caplog.at_level(logging.WARNING, logger="explorer.ui.gate"):
        AppSession.handle_backmsg(session, msg)
    assert shared() is first and loads == [1] and cleared == []
    assert any("clear_cache" in r.getMessage() and "s1" in r.getMessage() for r in caplog.records)


def _storages(cks) -> dict[int, int]:
    """Every distinct tensor storage the checkpoints' models hold: data pointer -> bytes."""
    out = {}
    for ck in cks:
        for t in [*ck.model.parameters(), *ck.model.buffers()]:
            out[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return out


def test_forty_sidebar_seeds_add_their_new_weights_not_forty_models():
    """The sidebar's seed draws the weights a checkpoint's files lack (MiniLM's classifier); each seed's copy
    shares every other tensor with the one load, so 40 seeds add at most 40 x those weights (a few KB),
    checked after every seed. Each copy's numbers are those a load with its seed gives."""
    base = cache.shared_checkpoint("minilm", 0)
    assert base.new_weights  # the seed matters here: the classifier is new
    one_model = sum(_storages([base]).values())
    params = dict(base.model.named_parameters())
    new_bytes = sum(params[n].numel() * params[n].element_size() for n in base.new_weights)
    kept = [base]
    for seed in range(1, 40):
        kept.append(cache.shared_checkpoint("minilm", seed))
        grown = sum(_storages(kept).values()) - one_model
        assert grown <= seed * new_bytes, (seed, grown, new_bytes)
    weight = "classifier.weight"
    seven = dict(kept[7].model.named_parameters())[weight]
    fresh = dict(checkpoints.load_checkpoint("minilm", seed=7).model.named_parameters())[weight]
    assert torch.equal(seven.cpu(), fresh) and not torch.equal(seven, params[weight])  # seeds still matter
    assert cache.shared_checkpoint("minilm-sentiment", 5) is cache.shared_checkpoint("minilm-sentiment", 0)
