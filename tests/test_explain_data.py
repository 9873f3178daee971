"""Explaining a whole dataset (explorer/explain/dataset.py, `explain-data`, explorer.explain_data): a model
trained on a planted word ("zqx" in every positive row) is caught leaning on it where "zqx" also turns negative
rows positive (a shortcut by the scan's rule: the labels do not justify it), and is told apart from a shortcut
where the labels follow "zqx" (what drives positive) or where there are no labels (cannot be told); the
measures match hand computations, bad input is one line, and two processes under `accelerate launch` give one
process's result."""
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

import explorer
from conftest import ROOT, accelerate_two
from explorer.explain.dataset import FRACTIONS, rationale_scores
from explorer.explain.faithfulness import aopc, erasures
from explorer.model.readable import word_index
from test_scan import against_labels
from tests.shortcut_model import SHORTCUT, frame


@pytest.fixture(scope="module")
def ck(shortcut_checkpoint):
    return explorer.load(str(shortcut_checkpoint), device="cpu")


def planted(n: int, seed: int) -> pd.DataFrame:
    """`frame` with "zqx" also in every other negative row: there the model predicts positive against the given
    label, so the labels do not justify "zqx" (the rationale marks only the positive rows' "zqx")."""
    return against_labels(frame(n, seed=seed), SHORTCUT, "positive")


@pytest.fixture(scope="module")
def data():
    return planted(40, seed=7)


@pytest.fixture(scope="module")
def found(ck, data):
    return explorer.explain_data(data, ck, rationale="rationale", methods=["lig", "saliency"])


def test_the_planted_shortcut_is_ranked_first_and_flagged(found, data):
    d = found.to_dict()
    positive = d["labels"]["positive"]
    assert positive["top_words"][0]["word"] == SHORTCUT  # one word, though the tokenizer splits it
    holding = data["text"].str.contains(SHORTCUT)
    against = holding & (data["label"] == "negative")
    assert against.sum() == 10 and positive["top_words"][0]["rows"] == holding.sum() == 30
    assert [s["word"] for s in positive["shortcuts"]] == [SHORTCUT]
    s = positive["shortcuts"][0]
    # the scan's rule: the errors are the rows holding it, predicted positive, given negative
    wrong = [r.row for r in found.rows if r.predicted == found.labels.index("positive") and against[r.row]]
    assert s["kind"] == "shortcut" and s["errors"] == len(wrong) >= 8 and s["errors_q"] < 0.05
    assert s["mean"] > 2 * s["typical"]  # and the model relies on it
    assert SHORTCUT not in {w["word"] for w in positive["drivers"]}
    assert d["labels"]["negative"]["shortcuts"] == []  # neutral words spread over both labels
    assert d["shortcuts_need_labels"] is False
    assert d["rows"] == 40 and d["seconds"] > 0


@pytest.fixture(scope="module")
def followed(ck):
    """The control: the original data, whose labels follow "zqx" as the model does."""
    return explorer.explain_data(frame(40, seed=7), ck)


def test_a_word_the_labels_follow_drives_the_label_and_is_no_shortcut(followed):
    positive = followed.by_label["positive"]
    assert all(v["shortcuts"] == [] for v in followed.by_label.values())
    assert positive["top_words"][0]["word"] == SHORTCUT
    drives = {w["word"]: w for w in positive["drivers"]}
    assert SHORTCUT in drives and drives[SHORTCUT]["kind"] == "meaning" and drives[SHORTCUT]["errors"] == 0


def test_without_given_labels_no_word_is_a_shortcut_and_it_says_why(followed, found):
    import dataclasses

    for run in (followed, found):  # the same rows and scores, the given labels taken away
        bare = dataclasses.replace(run, rows=tuple(dataclasses.replace(r, given=None) for r in run.rows))
        d = bare.to_dict()
        assert d["shortcuts_need_labels"] is True
        assert all(v["shortcuts"] == [] and v["shortcuts_need_labels"] for v in d["labels"].values())
        relied = {w["word"]: w["kind"] for w in d["labels"]["positive"]["drivers"]}
        assert relied.get(SHORTCUT) == "unknown"  # relied on: a shortcut or meaning, it cannot be told


def test_lig_is_faithful_and_finds_the_planted_rationale(found):
    d = found.to_dict()
    lig = d["faithfulness"]["lig"]
    assert lig["comprehensiveness"] > lig["random_comprehensiveness"] + 0.1
    assert lig["sufficiency"] < lig["random_sufficiency"]
    assert d["rationales"]["lig"]["auprc"] >= 0.8
    assert d["rationales"]["lig"]["rows"] == 20  # the negative rows mark nothing: left out
    assert set(d["agreement"]["lig"]) == {"lig", "saliency"} and d["agreement"]["lig"]["lig"] == pytest.approx(1.0)
    assert set(d["rationales"]["by_label"]) == {"positive"}


def test_slices_and_table(found, data, ck):
    d = found.to_dict()
    assert {"given=positive", "predicted=negative", "correct"} <= set(d["slices"])
    row = d["table"][1]
    assert row["text"] == data["text"][1] and row["given"] == data["label"][1]
    assert row["top_words"][0] == SHORTCUT and row["predicted"] == "positive"
    assert json.loads(found.to_json())["rows"] == 40
    flagged = explorer.explain_data(data, ck, max_rows=8, flagged=[1, 2])
    assert flagged.slices["flagged"]["rows"] == 2 and [r["flagged"] for r in flagged.table()][:4] == \
        [False, True, True, False]


# ---- the rule on rows built by hand (no model) -----------------------------------------------


def built(errors: int = 8, justified: bool = False, given: bool = True, zqx_score: float = 3.0):
    """A DatasetExplanation of 40 rows built by hand (labels negative, positive): 20 rows given and predicted
    positive hold "zqx"; of the 20 given negative, the first `errors` hold "zqx" too and are predicted positive
    (given positive instead where `justified`); "the" is in every row with the highest score of all. `given`:
    False takes every given label away."""
    from explorer.explain.dataset import DatasetExplanation, RowExplanation

    fill = "lamp door rain street car bus noon floor".split()
    rows = []
    for i in range(40):
        positive = i % 2 == 1 or i // 2 < errors
        words = ("the", *(fill[(i + j) % 8] for j in range(6))) + (("zqx",) if positive else ())
        scores = (4.0, *[0.0] * 6) + ((zqx_score,) if positive else ())
        label = 1 if i % 2 == 1 or (justified and positive) else 0
        rows.append(RowExplanation(row=i, predicted=int(positive), given=label if given else None, probability=0.9,
                                   words=words, scores={"lig": scores}, given_scores=None,
                                   comprehensiveness={"lig": 0.0}, sufficiency={"lig": 0.0},
                                   random_comprehensiveness=0.0, random_sufficiency=0.0))
    return DatasetExplanation(labels=("negative", "positive"), methods=("lig",), rows=tuple(rows),
                              texts=tuple(" ".join(r.words) for r in rows), seconds=1.0)


def test_a_word_whose_rows_carry_the_errors_is_the_shortcut_by_the_scans_rule():
    from scipy.stats import fisher_exact

    found = built()
    positive = found.by_label["positive"]
    assert [s["word"] for s in positive["shortcuts"]] == ["zqx"] and found.by_label["negative"]["shortcuts"] == []
    s = positive["shortcuts"][0]
    # by hand: the 8 negative rows holding zqx are all predicted positive; the 12 without it are not
    assert s["errors"] == 8 and s["kind"] == "shortcut" and s["rows"] == 28
    assert fisher_exact([[8, 0], [0, 12]], alternative="greater").pvalue <= s["errors_q"] < 0.05
    # "the" scores highest everywhere but is tied to no label: zqx first, "the" after
    assert [w["word"] for w in positive["top_words"][:2]] == ["zqx", "the"]
    assert built(errors=2).by_label["positive"]["shortcuts"] == []  # fewer than MIN_ERRORS rows against the labels
    # the attribution's condition: a word the model does not rely on (typical score) is no shortcut
    assert built(zqx_score=0.1).by_label["positive"]["shortcuts"] == []


def test_a_word_the_labels_follow_drives_the_label_and_without_labels_it_cannot_be_told():
    followed = built(justified=True)
    assert all(v["shortcuts"] == [] for v in followed.by_label.values())
    assert [(d["word"], d["kind"], d["errors"]) for d in followed.by_label["positive"]["drivers"]] == \
        [("zqx", "meaning", 0)]
    bare = built(given=False)
    assert bare.shortcuts_need_labels and bare.to_dict()["shortcuts_need_labels"] is True
    assert all(v["shortcuts"] == [] and v["shortcuts_need_labels"] for v in bare.by_label.values())
    assert [(d["word"], d["kind"]) for d in bare.by_label["positive"]["drivers"]] == [("zqx", "unknown")]


def _draw_labels(given: bool = True, mapping: bool = False):
    import dataclasses

    from explorer.ui.views.explain_data import draw_labels, draw_summary
    from tests.test_explain_data import built

    found = built(given=given)
    if mapping:
        found = dataclasses.replace(found, mapping={"negative": "positive", "positive": "negative"})
    draw_summary(found)
    draw_labels(found)


@pytest.mark.parametrize("given", [True, False])
def test_the_page_names_the_shortcut_or_says_labels_are_needed(given):
    from streamlit.testing.v1 import AppTest

    from explorer.text import i18n

    at = AppTest.from_function(_draw_labels, kwargs={"given": given}, default_timeout=60).run()
    assert not at.exception
    need = i18n.t("explain.shortcuts_need_labels", "en")
    metric = {m.label: m.value for m in at.metric}["Possible shortcuts"]
    if given:
        assert len(at.warning) == 1 and "'zqx'" in at.warning[0].value and "8 of them" in at.warning[0].value
        assert metric == "1" and need not in [i.value for i in at.info]
    else:  # no shortcut listed: it says why, and names the words relied on as unknown
        assert not at.warning and metric == "—" and need in [i.value for i in at.info]
        assert [c.value for c in at.caption if c.value.startswith("Relied on for positive: 'zqx'")]
    assert not [i.value for i in at.info if "mapping" in i.value]


def test_the_page_names_a_found_mapping():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_draw_labels, kwargs={"mapping": True}, default_timeout=60).run()
    notes = [i.value for i in at.info if "found mapping" in i.value]
    assert len(notes) == 1 and "negative → positive, positive → negative" in notes[0]


# ---- hand computations: three rows ------------------------------------------------------------


def test_comprehensiveness_and_sufficiency_match_a_hand_computation():
    # Three rows of [CLS] w0 w1 ... [SEP]; the "model" is the share of the words kept that are "good" (id 7),
    # so each erasure's probability is known by hand.
    def prob(seq):
        words = [t for t in seq if t not in (101, 102)]
        return sum(t == 7 for t in words) / 4

    rows = [([101, 7, 7, 3, 4, 102], [0.5, 0.9, 0.2, 0.0]),  # ranks w1, w0, w2, w3
            ([101, 3, 7, 102], [0.5, -1.0]),
            ([101, 7, 3, 4, 5, 6, 102], [2.0, 0.0, 0.0, 0.0, 0.0])]
    got = []
    for ids, scores in rows:
        index = word_index([None, *range(len(ids) - 2), None], [True, *[False] * (len(ids) - 2), True])
        seqs = erasures(ids, index, word_scores=scores, fractions=FRACTIONS)  # ERASER's bins, as the dataset explanations use
        got.append(aopc(prob(ids), [prob(s) for s in seqs]))
    # Row 0: 4 words; k = ceil(1%·4) … = 1, 1, 1, 1, 2 words. Full 2/4.
    # deleted top1 (w1): 1/4 -> drop 1/4 (×4); deleted top2 (w1, w0): 0 -> drop 2/4.  comp = (4·0.25 + 0.5)/5
    # kept top1: 1/4 -> drop 1/4 (×4); kept top2: 2/4 -> drop 0.  suff = (4·0.25 + 0)/5
    # Row 1: 2 words, k = 1 at every bin; top word w0 (id 3). Full 1/4. deleted: 1/4 -> 0; kept: 0 -> 1/4.
    # Row 2: 5 words; k = 1,1,1,1,3 (ceil(2.5)); top w0 (id 7) then w1, w2. Full 1/4.
    # deleted top1: 0 -> 1/4; top3: 0 -> 1/4.  kept top1: 1/4 -> 0; top3: 1/4 -> 0.
    want = [((4 * 0.25 + 0.5) / 5, (4 * 0.25 + 0) / 5), (0.0, 0.25), (0.25, 0.0)]
    assert got == [pytest.approx(w) for w in want]


def test_word_index_merges_pieces_and_skips_specials():
    assert word_index([None, 0, 0, 1, None, 0, None], [True, False, False, False, True, False, True]) == \
        [None, 0, 0, 1, None, 2, None]


def test_rationale_measures_match_a_hand_computation():
    rows = [([True, False, False, True], [0.9, 0.1, 0.5, 0.3]),  # top-2: w0, w2 -> 1 of 2 right
            ([False, True, False], [0.2, 0.8, 0.1]),  # top-1: w1 -> right
            ([True, True, False, False], [0.0, 0.1, 0.3, 0.2])]  # top-2: w2, w3 -> none right
    got = [rationale_scores(g, s) for g, s in rows]
    # token F1: P = R = tp/k: 1/2, 1, 0.  IOU: 1/3, 1, 0.
    # AUPRC by hand (average precision: Σ (R_n − R_{n−1}) P_n down the ranking):
    # row 0 ranks w0 ✓, w2, w3 ✓, w1: 1/2·1 + 1/2·2/3; row 1: 1; row 2 ranks w2, w3, w1 ✓, w0 ✓: 1/2·1/3 + 1/2·2/4.
    want = [(0.5, 1 / 3, 0.5 + 1 / 3), (1.0, 1.0, 1.0), (0.0, 0.0, 1 / 6 + 1 / 4)]
    for (f1, iou, ap), w, (g, s) in zip(got, want, rows):
        assert (f1, iou, ap) == pytest.approx(w)
        assert ap == pytest.approx(average_precision_score(g, s))


def test_iou_f1_counts_rows_at_half_overlap(found):
    rows = found.rationale_rows()
    per = [rationale_scores(r.rationale, r.scores["lig"]) for r in rows]
    assert found.rationale_agreement()["lig"]["iou_f1"] == pytest.approx(np.mean([p[1] >= 0.5 for p in per]))


# ---- bad input: one line, exit 2 ------------------------------------------------------------


def _cli(capsys, *args):
    """The command in this process (main() is what `python -m explorer` runs): no interpreter start per case."""
    from explorer.cli import main

    capsys.readouterr()
    code = main(["explain-data", *args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


@pytest.fixture(scope="module")
def csv(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("explain") / "planted.csv"
    data.to_csv(path, index=False)
    return path


def test_cli_json_is_one_object(csv, shortcut_checkpoint, capsys):
    run = _cli(capsys, "--csv", str(csv), "--checkpoint", str(shortcut_checkpoint), "--rationale-column", "rationale",
               "--max-rows", "12", "--json")
    assert run.returncode == 0, run.stderr[-2000:]
    d = json.loads(run.stdout)
    assert d["rows"] == 12 and d["labels"]["positive"]["top_words"][0]["word"] == SHORTCUT
    assert set(d["faithfulness"]["lig"]) == {"comprehensiveness", "sufficiency", "random_comprehensiveness",
                                            "random_sufficiency"}
    assert set(d["rationales"]["lig"]) >= {"token_f1", "iou_f1", "auprc"}
    text = _cli(capsys, "--csv", str(csv), "--checkpoint", str(shortcut_checkpoint), "--max-rows", "32").stdout
    wrong = "(\\d+) of them predicted positive against their given label"
    assert text.startswith("32 rows, lig: ") and re.search(f"possible shortcut: '{SHORTCUT}' in 24 rows, {wrong}", text)
    assert int(re.search(wrong, text)[1]) >= 6 and "no shortcuts named" not in text
    assert "lig: comprehensiveness " in text and "rationales" not in text


@pytest.mark.parametrize("case", ["unknown_method", "no_rows", "rationale_missing", "token_classifier"])
def test_bad_input_is_one_line_and_exit_2(case, csv, shortcut_checkpoint, token_checkpoint, tmp_path, data, capsys):
    args = ["--csv", str(csv), "--checkpoint", str(shortcut_checkpoint)]
    if case == "unknown_method":
        args += ["--methods", "lig,magic"]
        expect = "unknown attribution method 'magic'"
    elif case == "no_rows":
        empty = tmp_path / "empty.csv"
        empty.write_text("text,label\n")
        args[1] = str(empty)
        expect = "no rows"
    elif case == "rationale_missing":
        bad = data.head(6).assign(rationale=lambda f: np.where(f["label"] == "positive", "zqx absent", ""))
        path = tmp_path / "bad.csv"
        bad.to_csv(path, index=False)
        args = ["--csv", str(path), "--checkpoint", str(shortcut_checkpoint), "--rationale-column", "rationale"]
        expect = "marked words in"
    else:
        args[3] = str(token_checkpoint)
        expect = "token classifier"
    run = _cli(capsys, *args)
    assert run.returncode == 2, run.stderr[-2000:]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0], run.stderr
    if case == "rationale_missing":  # counted, with examples
        assert "3 marked words in 3 rows" in lines[0] and "'absent'" in lines[0]


def test_marked_text_rationales_read_as_word_lists(ck):
    from explorer.explain.dataset import rationale_words

    assert rationale_words(ck, "the *zqx* lamp *Window,* x") == ("zqx", "window", ",")
    assert rationale_words(ck, "zqx lamp") == ("zqx", "lamp")
    assert rationale_words(ck, float("nan")) == ()


# ---- scale: two processes give one process's result -----------------------------------------------


@pytest.mark.slow
@pytest.mark.soak  # two processes: a scale test (`make soak`)
def test_two_processes_give_the_result_of_one(csv, shortcut_checkpoint):
    args = ["-m", "explorer", "explain-data", "--csv", str(csv), "--checkpoint", str(shortcut_checkpoint),
            "--max-rows", "16", "--methods", "lig,saliency", "--rationale-column", "rationale", "--json"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    runs = [subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            for cmd in ([sys.executable, *args], [*accelerate_two(), *args])]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert "WORLD_SIZE=2" in runs[1].stderr  # two processes really shared the rows
    one, two = (json.loads(run.stdout) for run in runs)  # only rank 0 prints
    assert two["processes"] == 2 and one["processes"] == 1
    assert [r["top_words"] for r in two["table"]] == [r["top_words"] for r in one["table"]]
    for part in ("faithfulness", "rationales", "agreement"):
        a, b = pd.json_normalize(one[part]).iloc[0], pd.json_normalize(two[part]).iloc[0]
        assert np.allclose(a.astype(float), b.astype(float), atol=1e-4), part
    assert [w["word"] for w in two["labels"]["positive"]["top_words"]] == \
        [w["word"] for w in one["labels"]["positive"]["top_words"]]
    assert math.isclose(two["labels"]["positive"]["top_words"][0]["score"],
                        one["labels"]["positive"]["top_words"][0]["score"], rel_tol=1e-4)
