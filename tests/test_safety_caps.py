"""Caps and shared state under load: characters read, flow guarded by token count, the shared
tokenizer never changed by use, and user data rendered as plain text."""
import json
import threading

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.data.dataset import prepare, read_csv
from explorer.model.attention import FLOW_WARN_TOKENS
from explorer.model import tokenizer as shared_tokenizer
from explorer.model.analysis import MAX_TEXT_CHARS, analyze, encode
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.text.i18n import t
from explorer.train.finetune import Settings, finetune
from explorer.ui import plain
from tests.conftest import ROOT
from tests.test_app import _app as _open

EVIL = "![x](http://evil.example/p.png)"


def test_only_max_text_chars_are_read(tiny):
    ck = tiny["bert"]
    huge = "a wonderful film. " * 300_000  # 5.4 MB
    enc, dropped = encode(ck, huge)
    capped, dropped_capped = encode(ck, huge[:MAX_TEXT_CHARS])
    assert enc["input_ids"].tolist() == capped["input_ids"].tolist() and dropped == dropped_capped > 0
    head = build_head(ck)
    np.testing.assert_array_equal(analyze(ck, head, huge).logits, analyze(ck, head, huge[:MAX_TEXT_CHARS]).logits)


def _app(**state) -> AppTest:
    return _open(None, **state)  # the app's own AppTest opener; roots come from the fixtures here


def test_sidebar_shows_the_character_limit(tiny_root):
    at = _app()
    assert at.sidebar.text_area(key="text").proto.max_chars == MAX_TEXT_CHARS


@pytest.mark.slow
def test_flow_on_a_long_text_asks_first(tiny_root):
    long_text = " ".join(f"word{i % 7}" for i in range(FLOW_WARN_TOKENS + 20))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/tokens.py")
    for key, value in {"checkpoint": "other…", "checkpoint_other": str(tiny_root / "tiny-bert"), "head": "own",
                       "text": long_text, "seed": 0, "lang": "en", "tokens_flow": True}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("Max-flow on" in w for w in warnings), warnings
    assert at.button(key="tokens_flow_anyway").label == t("safety.compute_anyway", "en")
    assert t("tokens.flow_title", "en") not in _titles(at)
    at.button(key="tokens_flow_anyway").click().run()
    assert not at.exception and t("tokens.flow_title", "en") in _titles(at)
    at.run()  # confirmed for this text: no second question
    assert not any("Max-flow on" in w.value for w in at.warning)


def _titles(at) -> list[str]:
    """Chart titles without the note on special tokens ("(special tokens hidden, renormalised)")."""
    return [json.loads(c.proto.spec)["layout"]["title"]["text"].split(" (special tokens")[0]
            for c in at.get("plotly_chart")]


def test_cached_tokenizer_state_is_unchanged_by_finetuning(tiny_root, monkeypatch):
    ck = load_checkpoint(str(tiny_root / "tiny-bert"))
    before = shared_tokenizer.state(ck.tokenizer)
    rows = "".join(f"sentence number {i} is here,{['pos', 'neg'][i % 2]}\n" for i in range(30))
    data = prepare(read_csv(("text,label\n" + rows).encode()))
    copies = []
    real = shared_tokenizer.private
    monkeypatch.setattr(shared_tokenizer, "private", lambda tok: copies.append(real(tok)) or copies[-1])
    for mode in ("head", "full"):
        result = finetune(ck, data, settings=Settings(mode=mode, epochs=1, max_length=16))
        assert copies[-1] is not ck.tokenizer  # training works on a private copy
        assert result.checkpoint.tokenizer is ck.tokenizer  # the kept model reads with the shared one
    encode(ck, "a short text")
    assert shared_tokenizer.state(ck.tokenizer) == before


def test_concurrent_encodes_keep_their_own_settings(tiny_root):
    tok = load_checkpoint(str(tiny_root / "tiny-bert")).tokenizer
    wrong = []

    def work(n):
        for _ in range(200):
            got = len(tok("word " * 300, truncation=True, max_length=n)["input_ids"])
            if got != n:
                wrong.append((n, got))

    threads = [threading.Thread(target=work, args=(n,)) for n in (16, 64, 128)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == []


def test_plain_escapes_markdown():
    assert plain(EVIL) == "\\!\\[x\\](http:\u2060//evil.example/p.png)"
    assert plain("- a\n1. b :red[c] `d` _e_ LABEL_0 f: g") == \
        "\\- a  \n1\\. b \\:red\\[c\\] \\`d\\` \\_e\\_ LABEL_0 f: g"


def _markdown_bodies(at) -> list[str]:
    out = [e.value for kind in ("markdown", "caption", "warning", "info", "error", "success", "metric")
           for e in at.get(kind) if isinstance(getattr(e, "value", None), str)]
    for table in at.get("table"):
        out.append(table.proto.SerializeToString().decode("utf-8", "replace"))
    return out


@pytest.fixture
def evil_root(tmp_path, monkeypatch):
    from tests.hostile import broken_checkpoints

    folder = broken_checkpoints(tmp_path)["ok"]
    cfg = json.loads((folder / "config.json").read_text())
    names = [EVIL, EVIL.replace("x", "y"), EVIL.replace("x", "z")]
    cfg.update(id2label={str(i): n for i, n in enumerate(names)}, label2id={n: i for i, n in enumerate(names)})
    (folder / "config.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("HEAD_EXPLORER_ROOTS", str(tmp_path))
    return folder


def test_labels_render_as_plain_text_on_home_and_data(evil_root):
    at = _app(checkpoint="other…", checkpoint_other=str(evil_root))
    assert at.metric and plain(EVIL)[:4] in at.metric[0].value
    assert not any("![" in body for body in _markdown_bodies(at))
    # The data page with those labels in a CSV (read through the page's own "fixed version" slot).
    from explorer.data.dataset import demo_frame
    import hashlib

    demo = demo_frame(per_class=10, seed=0).to_csv(index=False).encode()
    rows = "".join(f"text {i},{EVIL if i % 5 else 'ok'}\n" for i in range(40)) + f"one more,{EVIL.upper()}\n"
    from explorer.ui.session import VERSIONS_KEY, DataVersion

    at.session_state[VERSIONS_KEY] = {hashlib.sha1(demo).hexdigest(): DataVersion(("text,label\n" + rows).encode(), 2, 41)}
    at.session_state["data_per_class"] = 10
    at.switch_page("pages/data.py").run()
    assert not at.exception and at.warning
    bodies = _markdown_bodies(at)
    assert any("evil" in b for b in bodies) and not any("![" in b for b in bodies), bodies


def test_the_gate_checks_each_value_against_its_widget_and_the_app():
    """explorer/ui/gate.py without a server (tests/test_server_limits.py sends the same over the websocket)."""
    import math
    from types import SimpleNamespace

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from explorer.model.analysis import MAX_TEXT_CHARS
    from explorer.ui.gate import refusal

    def state(**value):
        return WidgetState(id="$$ID-abc-seed", **value)

    seed = SimpleNamespace(min_value=0, max_value=2**31 - 1)
    assert refusal(state(int_value=5), seed) is None
    assert refusal(state(int_value=-1), seed).reason == "input_out_of_range"
    assert refusal(state(double_value=math.nan), seed).reason == "input_not_finite"
    assert refusal(state(double_value=-math.inf)).reason == "input_not_finite"  # no widget known: the app's rule
    assert refusal(state(double_array_value={"data": [0.5, math.nan]})).reason == "input_not_finite"
    assert refusal(state(string_value="x" * MAX_TEXT_CHARS)) is None
    long = refusal(state(string_value="é" * (MAX_TEXT_CHARS + 1)))  # characters, not bytes
    assert long.key == "seed" and dict(long.fields) == {"n": MAX_TEXT_CHARS + 1, "limit": MAX_TEXT_CHARS}
    assert refusal(state(string_value="x" * 11), SimpleNamespace(max_chars=10)).reason == "input_too_long"
    assert refusal(state(bool_value=True), seed) is None
