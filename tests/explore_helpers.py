"""Shared by the Explore page tests: open a page under AppTest with the sidebar's picks set.

Under AppTest the sidebar is not drawn after switch_page (a folder named pages/ puts streamlit
in its v1 multipage mode), so the sidebar picks are plain session-state values here; they are set
before the first run, because a key that once belonged to a widget is dropped when that widget is
no longer drawn.
"""
import base64
import json
from pathlib import Path

import numpy as np

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Unbelievably good acting, terrible plot."


def pick_checkpoint(at: AppTest, checkpoint: str) -> None:
    """The sidebar's checkpoint pick, before a first run of app.py (whose sidebar keeps only its choices): a
    registry name as itself, a folder (a tiny model under the allowed roots, conftest.tiny_root) as "other…" with
    its path, as a user picks one. open_page needs none: its page runs without the sidebar."""
    from explorer.model.checkpoints import REGISTRY
    from explorer.ui.session import OTHER

    if checkpoint in REGISTRY:
        at.session_state["checkpoint"] = checkpoint
    else:
        at.session_state["checkpoint"], at.session_state["checkpoint_other"] = OTHER, str(checkpoint)


def open_page(name: str, checkpoint: str = "minilm-sentiment", head: str = "own", text: str = TEXT) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{name}.py")
    for key, value in {"checkpoint": checkpoint, "head": head, "text": text, "seed": 0, "lang": "en"}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def give_csv(at: AppTest, raw: bytes, name: str, text_column: str = "text", label_column: str = "label") -> None:
    """Hand a CSV to the Audit and Fine-tune pages as the Data page would (before at.run())."""
    from explorer.ui.session import DATA_KEY, DataSource

    at.session_state[DATA_KEY] = DataSource(raw, name, text_column, label_column)


def specs(at: AppTest) -> list[dict]:
    return [json.loads(n.proto.spec) for n in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [s["layout"]["title"]["text"] for s in specs(at)]


def values(v) -> np.ndarray:
    """A plotly data array from a chart spec: a plain list, or plotly's typed-array {dtype, bdata, shape}."""
    if isinstance(v, dict) and "bdata" in v:
        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return arr.reshape([int(d) for d in str(v["shape"]).split(",")]) if "shape" in v else arr
    return np.asarray(v, dtype=float) if not (isinstance(v, list) and v and isinstance(v[0], str)) else np.asarray(v)


def chain_boxes(at: AppTest) -> list[tuple[str, str]]:
    """The Pipeline page's chain diagram (plots.chain.chain_html) as (step name, value) pairs, in order."""
    import html
    import re

    body = next(h.proto.body for h in at.get("html") if "he-chain" in h.proto.body)
    words = lambda part: " ".join(html.unescape(w) for w in re.findall(r'<span class="he-word">(.*?)</span>', part))  # noqa: E731
    return [(words(name), words(value)) for name, value in re.findall(
        r'<span class="he-step-title">(.*?)</span><span class="he-step-value">(.*?)</span></div>', body)]
