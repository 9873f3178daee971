"""Item 7: attention heatmaps whose colours show the words. [CLS] reading itself holds most of
its row; were it to set the colour range, every word cell would be drawn near white. Special tokens are
hidden by default (rows renormalised over the words), and when shown the range is set by the word cells;
a caption says which."""
from functools import partial

import numpy as np

from explorer import plots
from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.model.tokens import without_special
from explorer.plots.lesson import cls_by_layer
from explorer.text import i18n

from explore_helpers import TEXT, open_page, specs, values

T = partial(i18n.t, lang="en")


def _z(fig) -> np.ndarray:
    return np.asarray(fig.data[0].z, dtype=float)


def test_shown_special_tokens_do_not_set_the_colour_range(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    figs = plots.attention.tokens_page(a, 6, head=None, hide_special=False, t=T)
    words = ~np.asarray(a.special)
    for name in ("cls", "rollout"):
        z, zmax = _z(figs[name]), figs[name].data[0].zmax
        assert zmax == z[:, words].max()
        assert z.max() > 1.5 * zmax  # the case the issue saw: a special cell far above every word cell
    hl = np.asarray(figs["highlight"].data[0].z, dtype=float)
    assert np.allclose(hl[:, words].max(axis=1), 1.0)  # each method's largest word is the top of the scale


def test_hidden_special_tokens_range_over_the_words(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    fig = plots.attention.tokens_page(a, 6, head=None, hide_special=True, t=T)["cls"]
    assert "[CLS]" not in " ".join(fig.data[0].x) and fig.data[0].zmax == _z(fig).max()


def test_lesson_and_handout_heatmap_hides_special_tokens(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    fig = cls_by_layer(a, T)
    z = _z(fig)
    assert len(fig.data[0].x) == int((~np.asarray(a.special)).sum()) and not any("[" in x for x in fig.data[0].x)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-9)
    assert fig.data[0].zmax == z.max() and T("tokens.renormalised") in fig.layout.title.text


def test_tokens_page_hides_special_tokens_by_default_and_says_so():
    at = open_page("tokens")
    cls = specs(at)[0]["data"][0]
    assert not any("[CLS]" in x or "[SEP]" in x for x in cls["x"])
    assert T("heatmap.hidden") in [c.value for c in at.caption]
    at.toggle(key="tokens_hide_special").set_value(False).run()
    cls = specs(at)[0]["data"][0]
    assert any("[CLS]" in x for x in cls["x"]) and T("heatmap.word_scale") in [c.value for c in at.caption]


def test_lesson_step_two_says_the_special_tokens_are_hidden():
    at = open_page("lesson")
    enc = next(s for s in specs(at) if s["layout"]["title"]["text"].startswith(T("lesson.panel.enc_title")))
    assert not any("[CLS]" in x for x in enc["data"][0]["x"])
    assert T("heatmap.hidden") in [c.value for c in at.caption]


LONG = " ".join(["The film was long and the acting was fine, but the ending felt rushed and strange."] * 18)


def test_a_long_text_clips_the_colour_range_at_a_percentile_and_says_so(sentiment):
    """A few cells no longer set the scale of a long text's heatmaps: it stops at the percentile, below the
    largest word cell, and the caption under the charts names that percentile."""
    a = analyze(sentiment, build_head(sentiment), LONG)
    words = ~np.asarray(a.special)
    assert plots.attention.clips(int(words.sum()))
    figs = plots.attention.tokens_page(a, 6, head=None, hide_special=True, t=T)
    for name in ("cls", "rollout"):
        z, zmax = _z(figs[name]), figs[name].data[0].zmax
        assert zmax == np.percentile(z, plots.vectors.ROBUST_PERCENTILE) < z.max()
    at = open_page("tokens", text=LONG)
    clipped = T("heatmap.clipped", p="99")
    assert any(c.value == f'{T("heatmap.hidden")} {clipped}' for c in at.caption)
    assert not any(clipped in c.value for c in open_page("tokens").caption)  # a short text: the full range


def _drawn_darker_where_larger(trace: dict) -> None:
    """A heatmap trace as the page hands it to plotly: a colour bar, the scale not reversed, and its largest value
    drawn well darker than its smallest (plotly's range is zmin..zmax, the data's own where the figure sets none)."""
    from browser_plots import colour_at

    z = values(trace["z"]).astype(float)
    big, small = np.nanmax(z), np.nanmin(z)
    lo, hi = trace.get("zmin", small), trace.get("zmax", big)
    assert trace.get("showscale", True) is True and not trace.get("reversescale", False)
    assert big > small
    assert colour_at(trace["colorscale"], (big - lo) / (hi - lo)) < colour_at(trace["colorscale"], (small - lo) / (hi - lo)) - 60


def test_attention_darker_where_attended_and_layer_head_honoured(sentiment):
    """The Tokens page's attention charts as sent to the browser: more attention is darker, with a colour bar; the
    highlighted text follows the picked layer and head (its raw row is that head's attention), and the per-layer
    chart outlines the picked layer."""
    at = open_page("tokens")
    by_title = lambda part: next(s for s in specs(at) if part in s["layout"]["title"]["text"])  # noqa: E731
    for title in ("per head", "rollout", "highlighted"):
        _drawn_darker_where_larger(by_title(title)["data"][0])
    at.selectbox(key="tokens_head").set_value(3).run()
    at.selectbox(key="tokens_layer").set_value(2).run()
    assert not at.exception and not at.error
    a = analyze(sentiment, build_head(sentiment), TEXT)
    att = without_special(a.cls_attention, a.special)  # (layers, heads, words): special tokens hidden by default
    raw = by_title("(layer 2)")["data"][0]
    assert raw["y"][0] == "raw attention (head 3)"
    np.testing.assert_allclose(values(raw["customdata"])[0].astype(float), att[1, 3], atol=1e-5)
    _drawn_darker_where_larger(raw)
    per_layer = by_title("of head 3, per layer")
    assert [[s["y0"], s["y1"]] for s in per_layer["layout"]["shapes"]] == [[0.5, 1.5]]  # the picked layer (row 1)
