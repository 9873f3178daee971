"""The Scan page (AppTest) and the report a person reads from it, in English and Vietnamese: the Data page's CSV
with its labels rotated (and two rows copied under other labels) scanned as one job; predictions read in the
data's names through the found mapping, the mapping as a table with the config to paste, human titles with the
check id in small print, no raw long float; a random head's consequences folded under it; each "open in…"
landing on a page that shows its finding; the HTML report and the CSV saying the same."""
import io
import json
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from explore_helpers import give_csv
from explorer.data.dataset import demo_csv
from explorer.scan.base import Finding
from explorer.scan.report import ScanReport, shown_value
from explorer.text.errors import Message
from explorer.text.i18n import t
from test_vi_pages import english_left, shown

LONG_FLOAT = re.compile(r"\d\.\d{5,}")  # a float shown as Python prints it
CHECK_ID = re.compile(r"^[a-z_]+\.[a-z_]+\b")
TITLES = {"en": {"mapping.permutation": "Label mapping",
                 "head.new_weights": "Head weights initialised at random"},
          "vi": {"mapping.permutation": "Ánh xạ nhãn",
                 "head.new_weights": "Trọng số head được khởi tạo ngẫu nhiên"}}
EXPLAINS = {"en": "What this explains", "vi": "Điều này giải thích"}
ROTATION = {"negative": "neutral", "neutral": "positive", "positive": "negative"}  # demo_csv(permuted=True)'s cycle


def rotated_csv() -> bytes:
    """30 demo tweets with their labels renamed in a cycle, and the first two rows again under other labels."""
    df = pd.read_csv(io.BytesIO(demo_csv(10, permuted=True)))
    copies = df.iloc[:2].assign(label=lambda d: d["label"].map(ROTATION))
    return pd.concat([df, copies], ignore_index=True).to_csv(index=False).encode()


def _scanned(lang: str = "en", checkpoint: str = "minilm-sentiment") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["checkpoint"] = checkpoint
    at.session_state["lang"] = lang
    give_csv(at, rotated_csv(), "rotated.csv")
    at.run()
    at.switch_page("pages/scan.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.info  # what a scan checks, before the first one
    at.button(key="scan_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _texts(at: AppTest) -> list[str]:
    """Every text the page shows a person, table cells included."""
    cells = [str(v) for d in at.dataframe for v in d.value.to_numpy().ravel()]
    return shown(at) + cells


def _expander(at: AppTest, starts: str):
    return next(e for e in at.expander if e.label.startswith(starts))


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_rotated_mapping_reads_predictions_in_the_datas_names(lang):
    at = _scanned(lang)
    perm = _expander(at, TITLES[lang]["mapping.permutation"])
    assert at.expander[0].label == perm.label  # the first finding: the cause later checks read through
    assert "mapping.permutation" in [c.value for c in perm.caption]  # the check id, in small print
    # the mapping as a table, which side to fix and why, and the id2label/label2id to paste
    mapping = perm.dataframe[1].value
    assert dict(zip(mapping.iloc[:, 0], mapping.iloc[:, 1])) == ROTATION
    config = json.loads(perm.code[0].value)
    assert {config["id2label"][str(i)] for i in range(3)} == set(ROTATION)
    assert config["label2id"] == {n: int(i) for i, n in config["id2label"].items()}
    assert perm.info and "minilm-sentiment" in perm.info[0].value  # the Data page's explanation of the side
    # rows: given, predicted in the data's names, and the checkpoint's own name for that prediction beside it
    rows = perm.dataframe[2].value
    given, predicted, own = rows.columns[2], rows.columns[3], rows.columns[4]
    assert set(rows[predicted]) <= set(ROTATION) and (rows[predicted].map(ROTATION) == rows[own]).all()
    assert (rows[given] == rows[predicted]).mean() > 0.6  # read through the mapping, the model mostly agrees
    # suspect rows carry the suggested label, in the data's names
    suspect = next(e for e in at.expander if "labels.suspect_rows" in [c.value for c in e.caption])
    table = suspect.dataframe[-1].value
    assert set(table.iloc[:, 5]) - {""} <= set(ROTATION) and (table.iloc[:, 5] != "").any()
    # a pair side by side: both rows' texts and their two labels
    pairs = next(e for e in at.expander if "duplicates.conflicting" in [c.value for c in e.caption])
    both = pairs.dataframe[-1].value
    assert {(a, b) for a, b in zip(both.iloc[:, 0], both.iloc[:, 6])} >= {(0, 30), (1, 31)}
    # human titles, no raw long float anywhere
    assert not [e.label for e in at.expander if CHECK_ID.match(e.label)]
    assert not [x for x in _texts(at) if LONG_FLOAT.search(x)]
    if lang == "vi":
        assert english_left(shown(at)) == []
        # each "open in…" lands with the scan's note in Vietnamese
        landed = t("scan.landed_pair", "vi", a=0, b=0, given_a="", given_b="").split(":")[0]
        for check in ("calibration.ece", "robustness.typos", "duplicates.conflicting", "labels.suspect_rows"):
            at = _open(at, check)
            notes = [i.value for i in at.info]
            assert [n for n in notes if n.startswith(landed)] and english_left(notes) == [], (check, notes)


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_a_random_heads_consequences_are_folded_under_it(lang):
    at = _scanned(lang, "minilm")  # the encoder alone: its classifier is new, random weights
    cause = _expander(at, TITLES[lang]["head.new_weights"])
    inside = [m.value for m in cause.markdown]
    assert any(EXPLAINS[lang] in m for m in inside)
    folded = [c.value.split(" ·")[0] for c in cause.caption if " · " in c.value]  # "<id> · explained by …"
    assert folded and all(not f.startswith("head.") for f in folded)
    elsewhere = {c.value for e in at.expander if e.label != cause.label for c in e.caption}
    assert not set(folded) & elsewhere  # not listed again on their own
    if lang == "vi":
        assert english_left(shown(at)) == []


def _open(at: AppTest, check: str) -> AppTest:
    at.switch_page("pages/scan.py").run()
    key = next(b.key for b in at.button if b.key and b.key.startswith(f"scan_open_{check}"))
    at.button(key=key).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_each_link_lands_on_a_page_that_shows_its_finding():
    at = _scanned()
    csv = pd.read_csv(io.BytesIO(rotated_csv()))
    # miscalibration -> Logits: its most confident wrong row, the given label (the checkpoint's name) as true label
    at = _open(at, "calibration.ece")
    row = int(csv.index[csv["text"] == at.session_state["text"]][0])
    target = at.selectbox(key="logits_target_label")
    assert target.format_func(target.value) == ROTATION[csv["label"][row]]
    assert "From the scan" in at.info[0].value
    # a typo flip -> What-if, the perturbed text as text B
    at = _open(at, "robustness.typos")
    assert at.text_area(key="whatif_text").value != at.session_state["text"]
    assert "typos" in at.info[0].value
    # a conflicting pair -> What-if, both rows and both labels
    at = _open(at, "duplicates.conflicting")
    assert at.session_state["text"] == csv["text"][0] and at.text_area(key="whatif_text").value == csv["text"][30]
    assert f"'{csv['label'][0]}'" in at.info[0].value and f"'{csv['label'][30]}'" in at.info[0].value
    # suspect rows -> Label audit, already run: its flagged rows without a click
    at = _open(at, "labels.suspect_rows")
    assert at.dataframe and at.dataframe[0].value.shape[0] >= 1
    assert "From the scan" in at.info[0].value


# ---- the report itself (no model) ------------------------------------------------------------------

def _report() -> ScanReport:
    mapping = {"sport": "tech", "politics": "sport", "tech": "politics"}
    fix = {"side": "either", "reason": "no_evidence", "csv": mapping,
           "config": {"id2label": {"0": "politics", "1": "sport", "2": "tech"},
                      "label2id": {"politics": 0, "sport": 1, "tech": 2}}}
    findings = (
        Finding("mapping.permutation", "major", Message("scan_permuted", n=3, name="ck", before="7%", after="90%",
                                                        side="either"),
                {"mapping": mapping, "before": 0.0666666, "after": 0.9, "rows": [0, 1], "fix": fix}),
        Finding("calibration.overconfidence", "minor", Message("scan_overconfident", rate="1%", n=1),
                {"rate": 0.007462686567164179, "rows": [1]}),
        Finding("duplicates.conflicting", "major", Message("scan_conflicting_near_duplicates", n=1, text="0.90",
                                                                  cosine="0.50"),
                {"pairs": [[0, 2]], "similarity": [0.987654]}),
        Finding("robustness.typos", "minor",
                Message("scan_robust_flips", transform="typos", rate="33%", n=1, rows=3),
                {"flip_rate": 0.3333, "rows": [2]}, because="head.new_weights"),
        Finding("head.new_weights", "major", Message("scan_new_weights", n=1, names="classifier.weight", name="ck"),
                {"weights": ["classifier.weight"]}))
    return ScanReport(rows=3, checkpoint="ck", seconds=1.0, findings=findings,
                      results={"calibration.ece": {"ece": 0.1, "bins": 15, "temperature": 1.004, "nll": 0.52341,
                                                   "nll_scaled": 0.52339, "reliability": []}},
                      not_applicable=(), texts=("goal <b>match</b>", "vote law", "goal <b>match</b>!"),
                      given=("sport", "politics", "tech"), predicted=("sport", "sport", "sport"),
                      predicted_checkpoint=("tech", "tech", "tech"),
                      ran=("head.new_weights", "mapping.permutation", "calibration.ece",
                           "calibration.overconfidence", "duplicates.conflicting", "robustness.typos",
                           "slices.performance"))


def test_numbers_are_rounded_as_the_message_rounds_them():
    m = Message("scan_overconfident", rate="1%", n=3)
    assert shown_value("rate", 0.007462686567164179, message=m) == "1%"
    assert shown_value("flip_rate", 0.094,
                       message=Message("scan_robust_flips", transform="x", rate="9%", n=1, rows=9)) == "9%"
    assert shown_value("q_value", 1.23456e-5) == "1.23e-05" and shown_value("effect", 0.123456) == "0.123"
    assert shown_value("read_through_mapping", True) == "✓" and shown_value("bins", 15) == "15"


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_html_report_shows_the_mapping_the_rows_and_what_found_nothing(lang):
    r = _report()
    html = r.to_html(lang)
    assert "<script" not in html and "<b>match</b>" not in html and "goal &lt;b&gt;match&lt;/b&gt;" in html
    assert "&quot;id2label&quot;" in html and "<td>sport</td><td>tech</td>" in html  # table and config to paste
    assert TITLES[lang]["mapping.permutation"] in html and "<small>mapping.permutation</small>" in html
    assert f"<h1>{t('scan.report_title', lang)}</h1>" in html and t("scan.data_label", lang) in html  # its language
    assert "0.00746" not in html and "0.0666" not in html and "0.988" in html  # rounded; a pair's similarity
    # the consequence is nested under its cause, not listed on its own
    cause = html.index("<small>head.new_weights</small>")
    assert html.index("<small>robustness.typos</small>") > cause and html.count("<small>robustness.typos</small>") == 1
    assert "<small>slices.performance</small>" in html  # ran and found nothing
    # no temperature sentence when fitting one changes nothing
    assert "1.00" not in r.calibration_caption(lang) and "0.523" in r.calibration_caption(lang)
    flags = pd.read_csv(io.BytesIO(r.flags_csv()))
    assert list(flags["predicted"]) == ["sport"] * 3 and list(flags["predicted_checkpoint"]) == ["tech"] * 3
