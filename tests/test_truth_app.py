"""AppTest for what a person sees: kept uploads named in errors, unknown tokens, the learning-rate
slider, robust colour ranges, one-colour dropout strips, unsigned saliency, clean demo data."""
import numpy as np
import pytest

from explorer.data.dataset import demo_frame, read_csv
from explorer.text.errors import ExplorerError
from explorer.ui.session import Upload

from explore_helpers import open_page, specs, values


@pytest.mark.slow
def test_errors_name_the_uploaded_file():
    with pytest.raises(ExplorerError, match="'tweets.csv' is empty"):
        read_csv(b"  ", name="tweets.csv")
    at = open_page("data")
    at.session_state["data_source"] = "upload"
    at.session_state["data_uploaded"] = Upload(b"\x00\x01binary", "tweets.csv")
    at.run()
    assert not at.exception and len(at.error) == 1 and "tweets.csv" in at.error[0].value
    assert "upload" not in at.error[0].value.replace("tweets.csv", "")


def test_unknown_token_is_flagged_unknown_not_special():
    at = open_page("tokens", text="I love my 🦄 today")
    table = at.dataframe[0].value
    unk = table[table["token"] == "[UNK]"]
    kinds = [set(k.split(", ")) - {""} for k in table["kind"]]  # the flags, as one "kind" column
    assert len(unk) == 1 and kinds[unk.index[0]] == {"unknown to the vocabulary"}
    assert "special" in kinds[0] and "special" in kinds[-1]


def test_learning_rate_steps_along_a_log_scale():
    at = open_page("finetune")
    lr = at.select_slider(key="ft_lr_head")
    assert lr.value == 1e-3
    i = lr.options.index("1e-03")
    assert lr.options[i - 1] == "5e-04" and lr.options[i + 1] == "2e-03"


def test_pooled_strips_use_a_robust_range_and_say_so():
    at = open_page("pooled")
    strips = specs(at)[0]["data"][0]
    z = values(strips["z"])
    assert strips["zmax"] == -strips["zmin"] and strips["zmax"] < np.nanmax(np.abs(z))  # outliers saturate
    assert strips["zmid"] == 0 and strips["colorbar"]["title"]["text"]
    assert any("99th percentile" in c.value for c in at.caption)
    hist = specs(at)[1]["data"]
    assert len({h["marker"]["color"] for h in hist}) == len(hist) == 3  # each series its own colour
    assert len({(h["xbins"]["start"], h["xbins"]["size"]) for h in hist}) == 1  # shared bins


def test_dropout_strips_share_one_colour_and_one_legend_entry():
    at = open_page("dropout")
    boxes = [tr for tr in specs(at)[0]["data"] if tr["type"] == "box"]
    assert len(boxes) == 3 and len({b["marker"]["color"] for b in boxes}) == 1
    assert [b.get("showlegend", True) for b in boxes].count(True) == 1


def test_saliency_scale_is_unsigned():
    at = open_page("attributions")
    at.selectbox(key="attr_method").set_value("saliency").run()
    bar = next(s for s in specs(at) if s["data"][0]["type"] == "bar")["data"][0]
    assert bar["marker"]["cmin"] == 0 and len(bar["marker"]["colorscale"]) == 2
    assert bar["marker"]["colorbar"]["title"]["text"]
    legend = " ".join(h.proto.body for h in at.get("html"))
    assert "Darker blue" in legend and "Red:" not in legend


def test_demo_tweets_have_no_mojibake():
    df = demo_frame(per_class=300)
    assert not df["text"].str.contains(r"[^\x00-\x7f]").any() and df["label"].nunique() == 3


def test_cold_start_hides_raw_page_names_and_says_it_is_starting():
    from pathlib import Path

    src = (Path(__file__).resolve().parent.parent / "app.py").read_text()
    # the sidebar's list of pages/ file names is hidden before the slow imports, and shown again
    # once st.navigation has titled the pages
    assert src.index("[data-testid=stSidebarNav] {display: none;}") < src.index("from explorer import ui")
    assert src.index("st.navigation(") < src.index("boot.empty()")
    assert (Path(__file__).resolve().parent.parent / "pages").is_dir()
    at = open_page("home")  # a warm start: no notice
    assert not at.info and at.metric


def test_presenter_view_enlarges_charts_and_tables_and_can_be_left():
    from streamlit.testing.v1 import AppTest

    from explore_helpers import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)  # app.py itself, with its sidebar
    at.session_state["presenter"] = True
    at.run()
    css = " ".join(m.value for m in at.markdown)
    assert ".stPlotlyChart text" in css and "stTable" in css
    at.switch_page("pages/tokens.py").run()  # tables are HTML tables there, which take the larger type
    assert at.table and not at.dataframe and not at.exception
    at.switch_page("pages/home.py").run()
    at.button(key="presenter_exit").click().run()
    assert at.session_state["presenter"] is False
    assert ".stPlotlyChart" not in " ".join(m.value for m in at.markdown)
