"""Real browser: the attention charts are drawn with more = darker and a colour bar, the highlighted
text follows the picked layer and head, and the lesson's handout download arrives whole."""
import numpy as np
import pytest

from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.model.tokens import without_special
from explorer.text import i18n

from browser_plots import chart, colour_at, pick
from conftest import wait_idle

pytestmark = pytest.mark.browser


def _drawn_darker_where_larger(trace) -> None:
    z = np.array(trace["z"], dtype=float)
    lo, hi = trace["zmin"], trace["zmax"]
    assert trace["showscale"] is True and not trace["reversescale"]
    big, small = np.nanmax(z), np.nanmin(z)
    assert big > small
    assert colour_at(trace["colorscale"], (big - lo) / (hi - lo)) < colour_at(trace["colorscale"], (small - lo) / (hi - lo)) - 60


def test_attention_darker_where_attended_and_layer_head_honoured(page, app_url, sentiment):
    page.goto(app_url + "/attention")
    wait_idle(page)
    for title in ("per head", "rollout", "highlighted"):
        _drawn_darker_where_larger(chart(page, title)["data"][0])
    pick(page, "Attention head", "3")
    pick(page, "Layer", "2")
    text = i18n.t("app.text_default", "en")
    a = analyze(sentiment, build_head(sentiment), text)
    att = without_special(a.cls_attention, a.special)  # (layers, heads, words): special tokens hidden by default
    high = chart(page, "(layer 2)")
    raw = high["data"][0]
    assert raw["y"][0] == "raw attention (head 3)"
    np.testing.assert_allclose(raw["customdata"][0], att[1, 3], atol=1e-5)
    _drawn_darker_where_larger(raw)
    per_layer = chart(page, "of head 3, per layer")
    assert per_layer["shapes"] == [[0.5, 1.5]]  # the picked layer (row index 1) is outlined


def test_lesson_handout_download_arrives(page, app_url):
    page.goto(app_url + "/guided-lesson")
    wait_idle(page)
    with page.expect_download(timeout=90_000) as dl:
        page.get_by_role("button", name=i18n.t("lesson.handout", "en")).click()
    html = open(dl.value.path(), encoding="utf-8").read()
    # the lesson's charts beside their steps: attention, [CLS] similarity, logits and probabilities, parameters,
    # token head, read-out, leave-one-out (tests/test_handout_lesson.py reads the rest)
    assert html.count('class="plotly-graph-div"') == 8
    assert '"colorscale":"Blues"' not in html and "rgb(8,48,107)" in html  # resolved stops, dark = most
