"""Label audit: the inspect-data --label-issues contract, planted errors found, bad input as one line."""
import json

import numpy as np
import pandas as pd
import pytest
import torch

from explorer.cli import main
from explorer.data.audit import find_issues, fit_predict, fold_plan
from explorer.data.dataset import DataError, LabeledData
from explorer.model.features import encoder_features
from explorer.model.problem import ProblemType

GOOD = ["wonderful", "lovely", "delightful", "brilliant", "fantastic", "excellent", "charming", "superb"]
BAD = ["awful", "horrible", "dreadful", "terrible", "disgusting", "miserable", "pathetic", "boring"]
THINGS = ["film", "meal", "hotel", "concert", "book", "game"]
FLIPPED = (3, 17, 30, 44)


def planted() -> pd.DataFrame:
    """96 plain-sentiment sentences, 4 of them with the wrong label."""
    rows = [(f"The {thing} was {word}, truly {word}.", label)
            for label, words in (("positive", GOOD), ("negative", BAD)) for word in words for thing in THINGS]
    df = pd.DataFrame(rows, columns=["text", "label"]).sample(frac=1.0, random_state=0).reset_index(drop=True)
    for r in FLIPPED:
        df.loc[r, "label"] = "negative" if df.loc[r, "label"] == "positive" else "positive"
    return df


@pytest.fixture(scope="module")
def planted_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("audit") / "planted.csv"
    planted().to_csv(path, index=False)
    return path


def test_contract_and_planted_errors_are_ranked_first(planted_csv, capsys):
    df = planted()
    assert main(["inspect-data", "--csv", str(planted_csv), "--checkpoint", "minilm", "--label-issues",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    issues, summary = out["label_issues"], out["label_issue_summary"]
    assert {"flagged", "estimated_noise_rate", "folds", "cv_accuracy"} <= summary.keys()
    assert summary["folds"] == 5 and summary["flagged"] == len(issues)
    assert all(set(i) == {"row", "text", "given", "suggested", "score", "p_given"} for i in issues)
    scores = [i["score"] for i in issues]
    assert scores == sorted(scores)  # most suspicious first
    for i in issues:  # row is the 0-based data row, given is what the CSV says there
        assert df.loc[i["row"], "text"] == i["text"] and df.loc[i["row"], "label"] == i["given"]
        assert i["suggested"] in ("negative", "positive") and 0.0 <= i["p_given"] <= 1.0
    assert {i["row"] for i in issues[:len(FLIPPED)]} == set(FLIPPED)
    assert all(i["suggested"] != i["given"] for i in issues[:len(FLIPPED)])
    assert summary["cv_accuracy"] >= 0.9 and 0.0 < summary["estimated_noise_rate"] < 0.2
    assert summary["features"] in ("first", "mean", "layers")
    assert summary["cv_accuracy"] == max(s["accuracy"] for s in summary["cv_scores"].values())


def test_features_equal_one_text_at_a_time(minilm):
    """Length-sorted batching and padding must not change the numbers."""
    texts = ["short", "a much longer sentence with many more tokens in it than the others", "medium length text"]
    feats = encoder_features(minilm, texts, batch_size=2)
    for text, f in zip(texts, feats):
        enc = minilm.tokenizer([text], return_tensors="pt")
        with torch.inference_mode():
            states = minilm.model.base_model(**enc, output_hidden_states=True).hidden_states
        h = states[-1][0]
        np.testing.assert_allclose(f[0], h[0].numpy(), atol=1e-5)
        np.testing.assert_allclose(f[1], torch.nn.functional.normalize(h.mean(0), dim=0).numpy(), atol=1e-5)
        means = torch.stack([torch.nn.functional.normalize(s[0].mean(0), dim=0) for s in states[1:]])  # skip embeddings
        assert len(means) == minilm.model.config.num_hidden_layers
        np.testing.assert_allclose(f[2], torch.nn.functional.normalize(means.sum(0), dim=0).numpy(), atol=1e-5)


def _labeled(y, kind, names=("a", "b")):
    return LabeledData(texts=tuple(f"t{i}" for i in range(len(y))), y=y, label_names=names, problem_type=kind,
                       text_column="text", label_columns=("label",), notes=())


def test_multi_label_and_regression_flag_the_planted_rows():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(200, 8)).astype(np.float32))
    y = (x[:, :3].numpy() > 0).astype(np.float32)  # three labels, each readable from one feature
    y[[5, 50]] = 1.0 - y[[5, 50]]
    data = _labeled(y, ProblemType.MULTI, ("a", "b", "c"))
    oof = np.zeros_like(y)
    for part in (np.arange(100), np.arange(100, 200)):
        rest = np.setdiff1d(np.arange(200), part)
        oof[part] = fit_predict(x[rest], y[rest], x[part], ProblemType.MULTI, 3)
    quality, flagged, _ = find_issues(data, oof)
    assert set(flagged[:2]) == {5, 50} and quality.shape == (200,)
    target = (x[:, 0] * 2.0 + x[:, 1]).numpy()
    target[[7, 70]] += 10.0
    data = _labeled(target.astype(np.float32), ProblemType.REGRESSION, ())
    pred = np.zeros(200, np.float32)
    for part in (np.arange(100), np.arange(100, 200)):
        rest = np.setdiff1d(np.arange(200), part)
        pred[part] = fit_predict(x[rest], target[rest], x[part], ProblemType.REGRESSION, 1)
    quality, flagged, noise = find_issues(data, pred)
    assert list(flagged) and set(flagged[:2]) == {7, 70} and noise == len(flagged) / 200


def test_fold_plan_reduces_folds_with_a_note_and_refuses_a_single_row_class():
    y = np.array([0] * 10 + [1] * 3)
    folds, notes = fold_plan(_labeled(y, "single_label_classification"), 5)
    assert folds == 3 and "'b' has only 3 rows" in notes[0].message() and notes[0].message("vi") != notes[0].message()
    with pytest.raises(DataError, match="only 1 row"):
        fold_plan(_labeled(np.array([0] * 10 + [1]), "single_label_classification"), 5)


@pytest.mark.parametrize("rows, extra, needle", [
    ([("good", "pos")] * 6, [], "only one class"),
    ([("good", "pos"), ("bad", ""), ("fine", "neg"), ("ok", "pos")], [], "empty or NaN label"),
    ([("good", "pos")] * 5 + [("bad", "neg")], [], "only 1 row"),
    ([("good", "pos")] * 5 + [("bad", "neg")] * 5, ["--folds", "1"], "at least 2"),
    ([("good", "pos")] * 5 + [("bad", "neg")] * 5, ["--no-checkpoint"], "needs --checkpoint"),
])
def test_bad_input_is_one_line_and_prints_nothing(tmp_path, capsys, rows, extra, needle):
    path = tmp_path / "bad.csv"
    pd.DataFrame(rows, columns=["text", "label"]).to_csv(path, index=False)
    ck = [] if "--no-checkpoint" in extra else ["--checkpoint", "minilm"]
    extra = [e for e in extra if e != "--no-checkpoint"]
    assert main(["inspect-data", "--csv", str(path), *ck, "--label-issues", "--json", *extra]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and needle in cap.err and "Traceback" not in cap.err


def test_too_few_rows_per_class_reduces_folds_with_a_note(tmp_path, capsys):
    path = tmp_path / "small.csv"
    rows = [(f"The {t} was {w}.", "positive") for w in GOOD[:4] for t in THINGS[:2]]
    rows += [(f"The {t} was {w}.", "negative") for w, t in zip(BAD[:3], THINGS)]
    pd.DataFrame(rows, columns=["text", "label"]).to_csv(path, index=False)
    assert main(["inspect-data", "--csv", str(path), "--checkpoint", "minilm", "--label-issues", "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["label_issue_summary"]["folds"] == 3
    assert cap.err.startswith("note: 'negative' has only 3 rows") and cap.err.count("\n") == 1


def test_max_rows_flag_lifts_the_app_limit(tmp_path, capsys):
    path = tmp_path / "many.csv"
    pd.DataFrame({"text": [f"t{i}" for i in range(30)], "label": ["a", "b"] * 15}).to_csv(path, index=False)
    assert main(["inspect-data", "--csv", str(path), "--max-rows", "20"]) == 2
    assert "more than 20 rows" in capsys.readouterr().err
    assert main(["inspect-data", "--csv", str(path), "--max-rows", "30", "--json"]) == 0
