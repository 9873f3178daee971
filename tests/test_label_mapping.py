"""Label mappings on real data: multi-label permutations, spelling-only name differences, empty label
sets, which side to change, and both fixes (corrected CSV, id2label/label2id) applied and re-checked."""
import copy
import json

import numpy as np
import pandas as pd
import pytest

from explorer import cli
from explorer.data.dataset import demo_frame, prepare, read_csv
from explorer.data.labels import corrected_csv, label_report
from explorer.data.names import name_key
from explorer.model.checkpoints import Checkpoint
from explorer.train.finetune import Settings, finetune

pytestmark = [pytest.mark.slow]

JOY = ["I am so happy today", "What a wonderful surprise party", "We won the championship, amazing",
       "This is the best day of my life", "I love this sunny weather", "Great news, I got the job",
       "The kids laughed all afternoon", "Such a delightful little cafe", "I feel fantastic and grateful",
       "Hooray, the holidays are here"]
SADNESS = ["I miss my grandmother terribly", "My dog died last night", "I feel so lonely and empty",
           "The funeral was heartbreaking", "I cried myself to sleep", "Nobody came to my birthday",
           "I lost everything in the fire", "It hurts to say goodbye", "I feel hopeless and down",
           "The breakup left me in tears"]
ANGER = ["I am furious with my landlord", "This traffic makes me so mad", "Stop lying to me, I hate it",
         "The referee was a disgrace, outrageous", "I am sick of your excuses", "How dare they cancel without notice",
         "This customer service is infuriating", "I want to scream at him", "They ruined my car and laughed",
         "I am livid about the broken promise"]
NEUTRAL = ["The meeting is at three", "The train leaves from platform two", "Water boils at one hundred degrees",
           "The report has twelve pages", "Please close the window"]  # no label applies: an empty cell
SWAP = {"joy": "sadness", "sadness": "joy"}
PERM = {"negative": "positive", "positive": "neutral", "neutral": "negative"}


def _emotions(swap: dict | None = None) -> pd.DataFrame:
    rows = ([(t, "joy") for t in JOY] + [(t, "sadness") for t in SADNESS] + [(t, "anger") for t in ANGER]
            + [(t, "") for t in NEUTRAL]
            + [("Happy and sad at once, a bittersweet goodbye", "joy|sadness"),
               ("I am angry and heartbroken", "anger|sadness")])
    df = pd.DataFrame(rows, columns=["text", "labels"])
    if swap:
        df["labels"] = df["labels"].map(lambda v: "|".join(swap.get(p, p) for p in v.split("|")) if v else v)
    return df


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


def _columns(df: pd.DataFrame) -> pd.DataFrame:
    """The same labels as 0/1 columns."""
    return df.assign(**{n: df["labels"].map(lambda v, n=n: int(n in v.split("|"))) for n in ("anger", "joy", "sadness")}
                     ).drop(columns="labels")


@pytest.fixture(scope="module")
def emotions(minilm):
    """A real multi-label head (joy, sadness, anger) trained on the frozen MiniLM encoder (~3 s)."""
    data = prepare(read_csv(_csv(_emotions())))
    return finetune(minilm, data, settings=Settings(epochs=100, learning_rate=0.01, batch_size=16)).checkpoint


@pytest.fixture(scope="module")
def demo():
    return demo_frame(per_class=20, seed=3)


def _with_config(ck: Checkpoint, id2label: dict, label2id: dict) -> Checkpoint:
    model = copy.deepcopy(ck.model)
    model.config.id2label = {int(i): n for i, n in id2label.items()}
    model.config.label2id = dict(label2id)
    return Checkpoint(ck.name, model, ck.tokenizer, (), "test")


def test_a_multi_label_swap_is_found_with_the_fix(emotions):
    good = label_report(read_csv(_csv(_emotions())), ck=emotions)
    assert good.problem_type == "multi_label_classification" and good.agreement == "macro_f1"
    assert "permuted_mapping" not in good.kinds and good.suggested_mapping == {} and good.accuracy_before > 0.8
    # Its config already says multi_label_classification: not told to set it, only the labels' form
    (trap,) = [m for m in good.traps if "multi-label" in m]
    assert "already sets problem_type='multi_label_classification'" in trap and "set problem_type" not in trap
    assert any("multi-label: set problem_type" in m for m in label_report(read_csv(_csv(_emotions()))).traps)
    table = read_csv(_csv(_emotions(SWAP)))
    r = label_report(table, ck=emotions)
    (issue,) = [i for i in r.issues if i.kind == "permuted_mapping"]
    assert issue.detail["moved"] == SWAP and r.suggested_mapping == {"anger": "anger", **SWAP}
    assert r.accuracy_after > r.accuracy_before + 0.4 and "F1" in issue.message
    assert r.fix["side"] == "either" and "cannot tell which side" in r.fix["advice"]
    # the CSV-side fix undoes the swap, label sets kept in their a|b form
    fixed = read_csv(corrected_csv(table, r))
    assert fixed.frame["labels"].fillna("").tolist() == _emotions()["labels"].tolist()
    again = label_report(fixed, ck=emotions)
    assert "permuted_mapping" not in again.kinds and again.accuracy_before == pytest.approx(r.accuracy_after)
    # the checkpoint-side fix: its config with the CSV's names agrees with the swapped CSV as it is
    patched = _with_config(emotions, r.fix["config"]["id2label"], r.fix["config"]["label2id"])
    as_is = label_report(table, ck=patched)
    assert "permuted_mapping" not in as_is.kinds and as_is.accuracy_before == pytest.approx(r.accuracy_after)


def _json_lists(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(labels=df["labels"].map(lambda v: json.dumps(v.split("|") if v else [])))


@pytest.mark.parametrize("form", [_columns, _json_lists])
def test_a_swap_in_other_multi_label_forms_is_found_and_fixed_in_that_form(emotions, form):
    table = read_csv(_csv(form(_emotions(SWAP))))
    r = label_report(table, ck=emotions)
    assert "permuted_mapping" in r.kinds and r.suggested_mapping == {"anger": "anger", **SWAP}
    fixed = read_csv(corrected_csv(table, r))
    assert "permuted_mapping" not in label_report(fixed, ck=emotions).kinds
    expected = read_csv(_csv(form(_emotions()))).frame
    assert fixed.frame[list(expected.columns)].equals(expected)  # 0/1 columns renamed in place, JSON lists kept


def test_the_assignment_never_moves_a_label_without_evidence():
    from explorer.data.mapping import _assign

    names = ["a", "b", "c"]
    assert _assign(np.zeros((3, 3)), names, tuple(names), {n: n for n in names}) == {n: n for n in names}


def test_empty_label_sets_are_valid_rows():
    r = label_report(read_csv(b"text,labels\na,x|y\nb,\nc,y\nd,[]\n"))
    assert r.problem_type == "multi_label_classification" and "missing_labels" not in r.kinds
    assert dict(r.labels) == {"y": 2, "x": 1}  # "[]" is no label, not a label called "[]"
    data = prepare(read_csv(b"text,labels\na,x|y\nb,\nc,y\nd,[]\n"))
    assert data.label_names == ("x", "y") and data.y.tolist() == [[1, 1], [0, 0], [0, 1], [0, 0]]
    # a 0/1 column's empty cell is still a missing value, and so is a single-label one's
    assert "missing_labels" in label_report(read_csv(b"text,a,b\nt,1,0\nu,,1\n"), label_column="a,b").kinds
    assert "missing_labels" in label_report(read_csv(b"text,label\na,x\nb,\nc,y\n")).kinds


@pytest.mark.parametrize("body", [b"text,labels\na,\nb,\n", b"text,labels\na,[]\nb,[]\n"])
def test_every_row_empty_is_missing_labels(body):
    r = label_report(read_csv(body))
    assert [i.detail for i in r.issues if i.kind == "missing_labels"] == [{"rows": 2}]


def test_spelling_only_names_are_a_name_mismatch_not_a_permutation(sentiment, demo):
    df = demo.copy()
    df["label"] = df["label"].str.upper()
    r = label_report(read_csv(_csv(df)), ck=sentiment)
    assert "label_name_mismatch" in r.kinds and not r.kinds & {"permuted_mapping", "unseen_labels"}
    assert r.accuracy_before == r.accuracy_after > 0.5  # the names count as the same labels
    assert r.suggested_mapping == {"NEGATIVE": "negative", "NEUTRAL": "neutral", "POSITIVE": "positive"}
    assert r.fix["reason"] == "names" and r.fix["config"]["label2id"] == {"NEGATIVE": 0, "NEUTRAL": 1, "POSITIVE": 2}
    assert name_key("Very_Negative.") == name_key("very negative") != name_key("negative")


def test_which_side_label2id_agrees_points_at_the_checkpoint(sentiment, demo):
    # id2label rotated, label2id left as it was: the correct CSV looks permuted, and the config gives itself away
    rotated = {0: "positive", 1: "negative", 2: "neutral"}
    ck = _with_config(sentiment, rotated, sentiment.model.config.label2id)
    r = label_report(read_csv(_csv(demo)), ck=ck)
    assert "permuted_mapping" in r.kinds and "inconsistent_mapping" in r.kinds
    assert (r.fix["side"], r.fix["reason"]) == ("checkpoint", "label2id_agrees")
    assert r.fix["config"]["id2label"] == {"0": "negative", "1": "neutral", "2": "positive"}
    # both halves rotated, differently: still the checkpoint, without the claim about label2id
    ck = _with_config(sentiment, rotated, {"negative": 2, "neutral": 0, "positive": 1})
    r = label_report(read_csv(_csv(demo)), ck=ck)
    assert (r.fix["side"], r.fix["reason"]) == ("checkpoint", "inconsistent")


def test_placeholder_names_with_label_ids_point_at_the_checkpoint(sentiment, demo):
    ck = _with_config(sentiment, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2})
    df = demo.copy()
    df["label"] = df["label"].map({"negative": "1", "neutral": "2", "positive": "0"})  # ids in another order
    table = read_csv(_csv(df))
    r = label_report(table, ck=ck)
    assert "permuted_mapping" in r.kinds and (r.fix["side"], r.fix["reason"]) == ("checkpoint", "generic")
    assert r.fix["csv"] == {"0": "2", "1": "0", "2": "1"}  # the CSV fix writes ids, not LABEL_i
    assert "permuted_mapping" not in label_report(read_csv(corrected_csv(table, r)), ck=ck).kinds


@pytest.fixture
def permuted_csv(tmp_path, demo):
    df = demo.copy()
    df["label"] = df["label"].map(PERM)
    path = tmp_path / "permuted.csv"
    path.write_bytes(_csv(df))
    return path


def test_cli_out_csv_writes_a_fixed_csv(permuted_csv, tmp_path, capsys):
    out = tmp_path / "fixed.csv"
    args = ["inspect-data", "--csv", str(permuted_csv), "--checkpoint", "minilm-sentiment", "--json"]
    assert cli.main(args + ["--out-csv", str(out), "--raw-csv"]) == 0  # read back as data: '@user would differ
    report = json.loads(capsys.readouterr().out)
    assert {i["kind"] for i in report["issues"]} == {"permuted_mapping"}
    assert report["fix"]["side"] == "either" and report["fix"]["config"]["id2label"] == {
        "0": "positive", "1": "negative", "2": "neutral"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixed.csv", "permuted.csv"]  # no temporary file left
    assert cli.main(["inspect-data", "--csv", str(out), "--checkpoint", "minilm-sentiment", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["issues"] == [] and again["fix"] is None and again["accuracy_before"] == report["accuracy_after"]


@pytest.mark.parametrize("extra,target,message", [
    (["--checkpoint", "minilm-sentiment"], "taken.csv", "already exists"),
    ([], "taken.csv", "needs --checkpoint"),
    (["--checkpoint", "minilm-sentiment"], "no/such/folder.csv", "'{out}': its folder does not exist")])
def test_cli_out_csv_bad_input_is_one_line_and_writes_nothing(permuted_csv, tmp_path, capsys, extra, target, message):
    (tmp_path / "taken.csv").write_bytes(b"keep me")
    out = tmp_path / target
    assert cli.main(["inspect-data", "--csv", str(permuted_csv), *extra, "--out-csv", str(out)]) == 2
    err = capsys.readouterr().err
    assert message.format(out=out) in err and err.count("\n") == 1 and err.startswith("error: ")
    assert (tmp_path / "taken.csv").read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["permuted.csv", "taken.csv"]


def test_data_page_offers_both_fixes_for_a_permuted_csv_in_both_languages():
    from streamlit.testing.v1 import AppTest

    from test_data_pages import ROOT
    from test_vi_pages import english_left, shown

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/data.py").run()
    at.number_input(key="data_per_class").set_value(20).run()
    at.checkbox(key="data_permute").check().run()
    assert not at.exception and not at.error
    labels = [d.proto.label for d in at.get("download_button")]
    assert "Download the corrected CSV" in labels and "Download a corrected config.json" in labels
    (code,) = at.code
    assert json.loads(code.value) == {"id2label": {"0": "positive", "1": "negative", "2": "neutral"},
                                      "label2id": {"positive": 0, "negative": 1, "neutral": 2}}
    assert any("cannot tell which side" in i.value for i in at.info)
    at.session_state["lang"] = "vi"  # after the clicks: AppTest's radio reads its English option names
    at.run()
    assert not at.exception and at.code and len(at.get("download_button")) == 2
    assert english_left([s for s in shown(at) if s not in ("text", "label")]) == []
