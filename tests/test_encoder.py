"""Inside the encoder: the head at every layer, head view and model view."""
import dataclasses

import numpy as np
import pytest
import torch

from explorer.explain import encoder
from explorer.model.analysis import analyze
from explorer.model.heads import build_head, run_head

TEXT = "Unbelievably good acting, terrible plot."


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_layer_logits_apply_the_head_to_every_layer_tiny(tiny, arch):
    ck = tiny[arch]
    for kind in ("own", "mean-linear"):
        head = build_head(ck, kind)
        a = analyze(ck, head, TEXT)
        layers = ck.model.config.num_hidden_layers if arch != "distilbert" else ck.model.config.n_layers
        assert a.layer_logits.shape == (layers + 1, 3)
        np.testing.assert_array_equal(a.layer_logits[-1], a.logits)
        for layer in (0, 1):  # each row on its own equals the batched read-out
            h = torch.as_tensor(a.hidden_states[layer])[None]
            alone = run_head(head, h, torch.ones(1, h.shape[1]))[-1][1][0].numpy()
            np.testing.assert_allclose(a.layer_logits[layer], alone, atol=1e-5)
        assert not np.allclose(a.layer_logits[0], a.layer_logits[-1])


def test_layer_logits_match_hf_modules_on_real_model(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    m = sentiment.model
    with torch.inference_mode():
        hs = torch.as_tensor(a.hidden_states)  # (7, seq, 384)
        want = m.classifier(m.bert.pooler(hs)).numpy()  # HF's own pooler and classifier on every layer
        final = m(input_ids=torch.tensor([a.token_ids])).logits[0].numpy()
    np.testing.assert_allclose(a.layer_logits, want, atol=1e-5)
    np.testing.assert_allclose(a.layer_logits[-1], final, atol=1e-5)
    p = encoder.layer_probabilities(a)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-9)
    # Two code paths (the per-layer read-out and the head's own logits, within 1e-5 above): softmax moves no
    # probability by more than its logits move.
    np.testing.assert_allclose(p[-1], a.softmax, rtol=0, atol=1e-5)


def test_layer_probabilities_follow_the_problem_type(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    multi = dataclasses.replace(a, problem_type="multi_label_classification")
    # float32 exp from two libraries (vectorised libm builds differ by an ulp or two between CPUs)
    np.testing.assert_allclose(encoder.layer_probabilities(multi), 1 / (1 + np.exp(-a.layer_logits)), rtol=1e-6)
    reg = dataclasses.replace(a, problem_type="regression")
    np.testing.assert_array_equal(encoder.layer_probabilities(reg), a.layer_logits)


def test_head_view_hides_specials_renormalised_and_marks_text_b(sentiment):
    from explorer.plots import encoder as plots

    a = analyze(sentiment, build_head(sentiment), TEXT)
    n = len(a.tokens)
    v = encoder.head_view(a, 2, head=5, hide_special=False)
    np.testing.assert_allclose(v.weights[0], a.attentions[1, 5], atol=1e-6)
    assert v.boundary is None  # one text
    paired = dataclasses.replace(a, segments=(0,) * 5 + (1,) * (n - 5))
    hidden = encoder.head_view(paired, 2, head=None, hide_special=True)
    assert hidden.weights.shape == (12, n - 2, n - 2) and hidden.tokens == a.tokens[1:-1]
    np.testing.assert_allclose(hidden.weights.sum(-1), 1.0, atol=1e-9)
    assert hidden.boundary == 4  # [CLS] is hidden, so text B starts one place earlier
    fig = plots.head_view_chart(hidden, "t", head_name="head", text_b="text B")
    lines = [tr for tr in fig.data if tr.meta == "lines"]
    assert {tr.name for tr in lines} == {f"head {h}" for h in range(12)}
    # every drawn line has the opacity of its weight, rounded to a tenth; no weight ≥ 5% is left out
    drawn = {}
    for tr in lines:
        h = int(tr.name.split()[1])
        for s in range(0, len(tr.y), 3):
            drawn[(h, -tr.y[s], -tr.y[s + 1])] = tr.opacity
    big = np.argwhere(hidden.weights >= 0.05)
    assert len(drawn) == len(big)
    for h, i, j in big:
        assert abs(drawn[(h, i, j)] - hidden.weights[h, i, j]) <= 0.05 + 1e-9
    assert [tr.meta for tr in fig.data[-2:]] == ["left", "right"] and list(fig.data[-1].text) == list(hidden.tokens)
    # hover: the five strongest weights, exact; with several heads, their mean
    mean = hidden.weights.mean(0)
    j = int(np.argmax(mean[2]))
    assert f"{hidden.tokens[j]}  {mean[2, j]:.3f}" == fig.data[-2].hovertemplate[2].split("<br>")[1]
    assert "mean over 12 heads" in fig.data[-2].hovertemplate[2] and fig.data[-1].hovertemplate[0].count("<br>") == 5
    one = plots.head_view_chart(encoder.head_view(a, 1, head=0), "t", head_name="head")
    assert "mean over" not in one.data[-1].hovertemplate[0]
    assert fig.layout.shapes[0].y0 == -3.5 and fig.layout.annotations[0].text == "text B"
    pair = analyze(sentiment, build_head(sentiment), "A fine film.", text_pair="I disagree.")
    first_b = pair.tokens.index("i")
    assert encoder.head_view(pair, 1).boundary == first_b  # text B starts after text A's [SEP]
    assert encoder.head_view(pair, 1, hide_special=True).boundary == first_b - 2  # [CLS] and [SEP] hidden
    page = plots.head_view_html(fig, "Head <view>")
    assert page.count("gd.on('plotly_hover'") == 1 and "<script src=\"http" not in page
    assert "<title>Head &lt;view&gt;</title>" in page and len(page) > 3_000_000  # plotly.js inlined
    linked = plots.head_view_html(fig, "Head <view>", plotly_src="app/static/plotly.js")
    assert 'src="app/static/plotly.js"' in linked and len(linked) < 200_000
    assert linked.split('<div id="headview"', 1)[1] in page  # the same figure and hover script


def test_model_view_tiles_every_head_and_picks_by_customdata(sentiment):
    from explorer.plots import encoder as plots

    a = analyze(sentiment, build_head(sentiment), TEXT)
    tiles = encoder.model_view(a)
    np.testing.assert_allclose(tiles, a.attentions, atol=1e-6)
    fig = plots.model_view_chart(tiles, "m", x_title="head", y_title="layer", value_name="attention",
                                 hover="%{customdata}")
    assert fig.data[0].colorscale[0][1] == "rgb(247,251,255)"  # Blues from white: more attention = darker
    pick = fig.data[1]
    assert len(pick.customdata) == 72 and list(pick.customdata[13]) == [2, 1]
    long = analyze(sentiment, build_head(sentiment), " ".join(["word"] * 100))
    small = encoder.model_view(long, size=32)
    assert small.shape == (6, 12, 32, 32)
    np.testing.assert_allclose(small[:, :, 0, 0], long.attentions[:, :, :4, :4].mean(axis=(-1, -2)), atol=1e-6)
    np.testing.assert_allclose(small.mean(axis=(-1, -2)), long.attentions.mean(axis=(-1, -2)), atol=0.02)


def test_encoder_page_apptest():
    from explore_helpers import open_page, specs, titles, values

    at = open_page("encoder")
    assert not at.error
    assert '"[CLS]"' not in at.get("iframe")[0].proto.srcdoc  # special tokens hidden by default
    at.toggle(key="encoder_hide_special").set_value(False).run()
    readout = specs(at)[0]
    probs = np.array([values(tr["y"]) for tr in readout["data"]])  # (labels, layers+1)
    assert probs.shape == (3, 7) and np.allclose(probs.sum(0), 1.0, atol=1e-6)
    assert "trained on the last layer" in at.info[0].value
    frame = at.get("iframe")[0].proto.srcdoc
    assert "Layer 6, all heads" in frame and '"[CLS]"' in frame and "plotly_hover" in frame
    at.selectbox(key="encoder_head").set_value(3)
    at.selectbox(key="encoder_layer").set_value(2).run()
    at.toggle(key="encoder_hide_special").set_value(True).run()
    frame = at.get("iframe")[0].proto.srcdoc
    assert "Layer 2, head 3" in frame and "renormalised" in frame and '"[CLS]"' not in frame
    assert len(specs(at)[1]["data"][1]["customdata"]) == 72  # the model view: one pick marker per head
    assert '"text B"' not in frame
    at.session_state["text_pair"] = "I disagree."  # the sidebar's text B: the view marks where it starts
    at.run()
    assert '"text":"text B"' in at.get("iframe")[0].proto.srcdoc
    at.session_state["checkpoint"], at.session_state["head"] = "minilm", "mean-linear"
    at.run()
    assert not at.exception and not at.error and len(titles(at)) == 2


def test_quiz_has_the_inside_the_encoder_questions_in_both_languages():
    from streamlit.testing.v1 import AppTest

    from explorer.teach import lesson
    from explorer.text.i18n import t
    from explore_helpers import ROOT

    new = [q for q in lesson.QUIZ if q.step in ("layers", "ablation")]
    assert [q.key for q in new] == ["decision_layer", "drop_word"]
    for lang in ("en", "vi"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.session_state["lang"] = lang
        at.run()
        at.switch_page("pages/quiz.py").run()
        for q in new:
            at.radio(key=f"quiz_{q.key}").set_value(q.correct)
        at.run()
        assert not at.exception
        assert [s.value for s in at.success] == [f"{t('quiz.correct', lang)} {t(f'quiz.{q.key}.why', lang)}"
                                                 for q in new]


def test_cli_summary_names_the_prediction_at_every_layer(capsys, sentiment):
    from explorer.cli import main

    assert main(["analyze", "--text", TEXT]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("predicted with the head on each"))
    a = analyze(sentiment, build_head(sentiment), TEXT)
    assert line.endswith(f"5: {a.labels[int(np.argmax(a.layer_logits[5]))]}, 6: {a.predicted}")


def test_head_view_of_a_long_text_is_windowed_and_its_title_fits(sentiment):
    """Past HEAD_VIEW_TOKENS the head view shows a window of tokens (a picker and a caption say which, of how
    many), so its height is bounded; its title is left-aligned and wrapped, so no line runs off the chart."""
    import json

    from explore_helpers import open_page
    from explorer.plots import encoder as plots

    long = " ".join(["The film was long and the acting was fine, but the ending felt rushed and strange."] * 18)
    at = open_page("encoder", text=long)
    assert not at.exception and not at.error
    picker = at.selectbox(key="encoder_window")
    assert len(picker.options) > 1 and picker.options[0] == f"1–{encoder.HEAD_VIEW_TOKENS}"
    n = next(c.value for c in at.caption if str(encoder.HEAD_VIEW_TOKENS) in c.value)
    assert "long text" in n
    frame = at.get("iframe")[0]
    import re

    height = max(int(h) for h in re.findall(r'"height":(\d+)', frame.proto.srcdoc))  # the figure's layout
    assert height < 22 * encoder.HEAD_VIEW_TOKENS + 300
    picker.set_value(picker.options[-1]).run()
    assert not at.exception and at.get("iframe")[0].proto.srcdoc != frame.proto.srcdoc
    v = encoder.window(encoder.head_view(analyze(sentiment, build_head(sentiment), long), 6), 60)
    assert len(v.tokens) == encoder.HEAD_VIEW_TOKENS and v.weights.shape[1:] == (60, 60)
    fig = plots.head_view_chart(v, "Layer 6, all heads: token-to-token attention " * 3, head_name="head")
    title = json.loads(fig.to_json())["layout"]["title"]
    assert title["xanchor"] == "left" and all(len(line) <= 55 for line in title["text"].split("<br>"))


def test_model_view_of_a_long_text_clips_its_colour_range_and_says_so():
    """A long text's block-averaged thumbnails are small weights: on a 0-1 range they were near white."""
    import json

    from explore_helpers import open_page
    from explorer.text import i18n

    long = " ".join(["The film was long and the acting was fine, but the ending felt rushed and strange."] * 18)
    clipped = i18n.t("heatmap.clipped", "en", p="99")
    for text, is_long in ((long, True), (TEXT, False)):
        at = open_page("encoder", text=text)
        heat = json.loads(at.get("plotly_chart")[-1].proto.spec)["data"][0]
        assert (heat["zmax"] < 0.5) is is_long, heat["zmax"]
        assert any(clipped in c.value for c in at.caption) is is_long
