"""The escaping rules of explorer.text.plain, one per surface, on the hostile payloads,
and every renderer's figure carrying no markup made from user text."""
from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from explorer.text import plain

URL = "http://127.0.0.1:9/"
IMG = f"hello ![md]({URL}md-img.png)"
LINK = f'<a href="{URL}label-link" target="_blank">newtab</a>'
STYLE = '<span style="font-size:60px;fill:red">big</span>'
FORMULA = f'=HYPERLINK("{URL}","open")'


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cell_guards_each_formula_start(start):
    assert plain.csv_cell(start + "SUM(A1)") == "'" + start + "SUM(A1)"


@pytest.mark.parametrize("value", [-0.5, 3, np.float64(-1.5), None, "plain text", "a=b", "", "-0.5", "+3", "-1e-05",
                                   ".5"])
def test_csv_cell_leaves_numbers_and_plain_strings(value):
    assert plain.csv_cell(value) is value


def test_csv_bytes_guards_string_cells_and_names_only():
    df = pd.DataFrame({"text": [FORMULA, "ok", "-2+3", None], "score": [-0.5, 1.0, -2.0, 0.0],
                       "@name": ["@x", "+y", "\tz", "-w"]})
    rows = pd.read_csv(io.BytesIO(plain.csv_bytes(df)), keep_default_na=False, dtype=str)
    assert list(rows.columns) == ["text", "score", "'@name"]
    assert rows["text"].tolist() == ["'" + FORMULA, "ok", "'-2+3", ""]
    assert rows["score"].tolist() == ["-0.5", "1.0", "-2.0", "0.0"]  # numbers stay numbers
    assert rows["'@name"].tolist() == ["'@x", "'+y", "'\tz", "'-w"]
    # --raw-csv: cells as they came (comma-separated and quoted like every download)
    assert plain.csv_bytes(df, raw=True) == df.to_csv(index=False, quoting=csv.QUOTE_ALL).encode()
    dup = pd.DataFrame([["=1", "=2"]], columns=["a", "a"])  # repeated names: by position
    assert plain.csv_bytes(dup) == b'"a","a"\n"\'=1","\'=2"\n'
    assert df["text"][0] == FORMULA  # the caller's frame is untouched


def test_markdown_breaks_images_links_autolinks_and_html():
    out = plain.markdown(IMG + f" {URL}bare www.evil.example x@y.example {LINK} & # h")
    assert "![" not in out and "](" not in out.replace("\\](", "") and "http://" not in out
    assert "www\u2060." in out and "x\u2060@" in out and "\\<a" in out and "\\&" in out  # GFM autolinks broken
    assert not re.search(r"(?<!\\)[<>\[\]!]", out)  # every markup character backslash-escaped
    assert plain.markdown("# title\n- item") == "\\# title  \n\\- item"
    assert plain.markdown("LABEL_0 f: g") == "LABEL_0 f: g"  # what is literal already stays as typed


def test_markdown_code_fences_around_backticks():
    assert plain.markdown_code("a`b") == "`` a`b ``"
    assert plain.markdown_code(IMG) == f"` {IMG} `"


def test_plotly_escapes_tags_and_ampersands():
    assert plain.plotly(LINK) == LINK.replace("<", "&lt;").replace(">", "&gt;")
    assert plain.plotly("a &lt; b") == "a &amp;lt; b"
    assert plain.plotly(STYLE).startswith("&lt;span style=")


def test_figure_spec_escapes_all_but_templates():
    spec = plain.figure_spec(dict(
        data=[go.Bar(x=[LINK, "b"], y=np.array([1.0, 2.0]), name=STYLE, hovertemplate="%{x}<br>%{y}<extra></extra>"),
              dict(type="scatter", text=np.array([LINK, "x"]), customdata=np.array([[LINK, 1]], dtype=object),
                   hovertemplate=["<b>a</b>", "<b>b</b>"])],
        layout=dict(title=dict(text=STYLE), annotations=[dict(text=LINK)])))
    bar, scatter = spec["data"]
    assert list(bar["x"]) == [plain.plotly(LINK), "b"] and bar["name"] == plain.plotly(STYLE)
    assert bar["hovertemplate"] == "%{x}<br>%{y}<extra></extra>" and scatter["hovertemplate"] == ["<b>a</b>", "<b>b</b>"]
    assert scatter["text"].tolist() == [plain.plotly(LINK), "x"] and scatter["customdata"][0, 0] == plain.plotly(LINK)
    assert spec["layout"]["title"]["text"] == plain.plotly(STYLE)
    assert spec["layout"]["annotations"][0]["text"] == plain.plotly(LINK)


def _strings(node, key=""):
    """Every string a figure sends to plotly.js, with the key it sits under."""
    if isinstance(node, str):
        yield key, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, (list, tuple, np.ndarray)):
        for v in node:
            yield from _strings(v, key)


def _figures():
    from explorer import plots
    from explorer.explain.encoder import HeadView
    from explorer.plots import attention, attribution, audit, dropout, encoder, lesson, logits, training, vectors, whatif

    labels, toks, v = [LINK, STYLE, IMG], [IMG, LINK, STYLE, "ok"], np.array([0.1, 0.5, 0.4])
    heat = np.random.default_rng(0).random((3, 4))
    w = np.full((1, 4, 4), 0.25)
    yield plots.label_bars(labels, v, title=STYLE, x_title=LINK, y_title=IMG)
    yield logits.grouped(labels, {LINK: v}, title=STYLE, x_title="x", y_title="y")
    yield attention.token_heatmap(heat, toks, rows=labels, title=IMG, x_title="x", y_title="y", value_name=LINK,
                                  pair_at=1, pair_label=STYLE)
    yield attention.highlighted_text({LINK: v[:3].repeat(2)[:4]}, toks, title=STYLE, x_title="x", y_title="y",
                                     value_name="v", scale_name="s")
    yield audit.confusion_cells(np.eye(3, dtype=int), labels, cols=labels, title=STYLE, x_title="x", y_title="y",
                                count_name="n")
    yield audit.projection(heat[:, :2], labels, texts=[IMG, LINK, STYLE], rows=[0, 1, 2], title="t", legend=LINK)
    yield training.confusion_heatmap(np.eye(3, dtype=int), labels, cols=labels, title=STYLE, x_title="x", y_title="y",
                                     count_name="n")
    yield vectors.cosine_heatmap(labels, np.eye(3), title=STYLE, value_name="c")
    yield vectors.strips({LINK: v}, STYLE, x_title="x", y_title="y", value_name="v")
    yield dropout.samples(labels, heat[:, :3], eval_point=v, title=STYLE, x_title="x", y_title="y", sample_name=LINK,
                          eval_name="eval")
    yield lesson.token_label_heatmap(heat.T, toks, labels=labels, title=STYLE, x_title="x", y_title="y", value_name="v")
    yield attribution.sorted_bars(toks, heat[0], title=STYLE, x_title="x", y_title="y")
    yield encoder.readout_lines(heat, labels, title=STYLE, x_title="x", y_title="y", embeddings=LINK)
    yield encoder.head_view_chart(HeadView(tokens=tuple(toks), heads=(0,), weights=w, layer=1, boundary=2,
                                     renormalised=False), STYLE, head_name=LINK, text_b=IMG)
    yield encoder.model_view_chart(np.ones((1, 2, 2, 2)), STYLE, x_title="x", y_title="y", value_name="v",
                             hover="layer %{customdata[0]}")
    yield whatif.word_comparison((), (LINK, STYLE, IMG), title=STYLE, x_title="x", y_title="y")


def test_every_renderer_sends_no_markup_made_from_user_text():
    for i, fig in enumerate(_figures()):
        for key, s in _strings(fig.to_plotly_json()):
            if key.endswith("template"):  # the code's own markup; user text in it is escaped where it is built
                s = s.replace("<br>", "").replace("<b>", "").replace("</b>", "").replace("<extra>", "").replace("</extra>", "")
            assert "<a" not in s and "<span" not in s, (i, key, s)
        assert plain.plotly(STYLE) in str(fig.to_plotly_json()) or plain.plotly(LINK) in str(fig.to_plotly_json()), i


def test_cli_out_csv_guards_formulas_unless_raw_csv(tmp_path, capsys):
    from explorer import cli
    from explorer.data.dataset import demo_frame

    df = demo_frame(per_class=10, seed=0)
    df["label"] = df["label"].map({"negative": "positive", "positive": "neutral", "neutral": "negative"})
    df.loc[0, "text"], df.loc[1, "text"] = FORMULA, "-0.5"
    (tmp_path / "in.csv").write_bytes(df.to_csv(index=False).encode())
    args = ["inspect-data", "--csv", str(tmp_path / "in.csv"), "--checkpoint", "minilm-sentiment", "--json", "--out-csv"]
    assert cli.main(args + [str(tmp_path / "guarded.csv")]) == 0
    assert cli.main(args + [str(tmp_path / "raw.csv"), "--raw-csv"]) == 0
    capsys.readouterr()
    guarded, raw = (pd.read_csv(tmp_path / n, dtype=str)["text"].tolist()[:2] for n in ("guarded.csv", "raw.csv"))
    assert guarded == ["'" + FORMULA, "-0.5"] and raw == [FORMULA, "-0.5"]
