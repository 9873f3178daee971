"""Label report: each issue kind, and the Hungarian permuted-mapping check on the real sentiment model."""
import copy

import pytest

from explorer.data.dataset import demo_frame, read_csv
from explorer.data.labels import label_report
from explorer.data.mapping import corrected_config
from explorer.data.names import merge_labels
from explorer.model.checkpoints import Checkpoint

PERM = {"negative": "positive", "positive": "neutral", "neutral": "negative"}


def _report(body: str, ck=None, **kw):
    return label_report(read_csv(body.encode()), ck=ck, **kw)


def _demo_csv(per_class=40, mapping=None) -> str:
    df = demo_frame(per_class=per_class, seed=3)
    if mapping:
        df["label"] = df["label"].map(mapping)
    return df.to_csv(index=False)


def test_clean_data_has_no_issues():
    r = _report("text,label\n" + "".join(f"t{i},{['a', 'b'][i % 2]}\n" for i in range(10)))
    assert r.issues == () and dict(r.labels) == {"a": 5, "b": 5} and r.rows == 10
    assert r.to_dict()["labels"] == [{"name": "a", "count": 5}, {"name": "b", "count": 5}]


def test_near_duplicate_labels_and_merge():
    body = "text,label\n" + "a,Positive\nb,positive\nc,positive \nd,positive\ne,ｐositive\nf,neg\ng,neg\n"
    r = _report(body)
    (issue,) = [i for i in r.issues if i.kind == "near_duplicate_labels"]
    assert issue.detail["merge"] == {"Positive": "positive", "positive ": "positive", "ｐositive": "positive"}
    merged = merge_labels(read_csv(body.encode()).frame, "label", issue.detail["merge"])
    assert set(merged["label"]) == {"positive", "neg"}
    assert "near_duplicate_labels" not in label_report(read_csv(merged.to_csv(index=False).encode())).kinds


def test_missing_single_class_imbalance():
    assert "missing_labels" in _report("text,label\na,x\nb,\nc,y\n").kinds
    assert "single_class" in _report("text,label\na,x\nb,x\n").kinds
    assert "imbalance" in _report("text,label\n" + "a,x\n" * 10 + "b,y\n").kinds
    assert "imbalance" not in _report("text,label\n" + "a,x\n" * 3 + "b,y\n" * 2).kinds


@pytest.mark.parametrize("ids,flagged", [((1, 2, 3), True), ((0, 2, 3), True), ((0, 1, 2), False)])
def test_one_based_ids(ids, flagged):
    r = _report("text,label\n" + "".join(f"t{i},{v}\n" for i, v in enumerate(ids * 2)))
    assert ("one_based_ids" in r.kinds) == flagged


def test_problem_type_loss_and_traps():
    r = _report("text,score\na,0.5\nb,0.25\n")
    assert r.problem_type == "regression" and r.loss == "MSELoss" and "num_labels=1" in r.traps[0]
    r = _report("text,label\na,x|y\nb,y\n")
    assert r.loss == "BCEWithLogitsLoss" and any("BCEWithLogitsLoss" in t for t in r.traps)


def test_generic_names_and_unseen_labels(minilm, tiny):
    assert "generic_label_names" in _report("text,label\na,x\nb,y\n", minilm).kinds
    r = _report("text,label\nhello,alpha\nworld,delta\n", tiny["bert"])
    (issue,) = [i for i in r.issues if i.kind == "unseen_labels"]
    assert issue.detail == {"csv_only": ["delta"], "checkpoint_only": ["beta", "gamma"]}


def test_inconsistent_mapping(tiny):
    model = copy.deepcopy(tiny["bert"].model)
    model.config.label2id = {"alpha": 1, "beta": 0, "gamma": 2}
    ck = Checkpoint("broken", model, tiny["bert"].tokenizer, (), "test")
    assert "inconsistent_mapping" in _report("text,label\na,alpha\nb,beta\n", ck).kinds
    assert "inconsistent_mapping" not in _report("text,label\na,alpha\nb,beta\n", tiny["bert"]).kinds


@pytest.mark.slow
def test_permuted_mapping_is_detected(sentiment):
    r = _report(_demo_csv(mapping=PERM), sentiment)
    assert "permuted_mapping" in r.kinds
    # the suggestion undoes the permutation: CSV name -> checkpoint name
    assert r.suggested_mapping == {v: k for k, v in PERM.items()}
    assert r.accuracy_after > r.accuracy_before + 0.3
    assert r.confusion.sum() == 120 and r.confusion_cols == sentiment.labels
    fixed = corrected_config(sentiment, r.suggested_mapping)
    assert fixed["id2label"] == {"0": "positive", "1": "negative", "2": "neutral"}
    assert fixed["label2id"] == {"positive": 0, "negative": 1, "neutral": 2}


@pytest.mark.slow
def test_correct_mapping_is_not_flagged(sentiment):
    r = _report(_demo_csv(), sentiment)
    assert "permuted_mapping" not in r.kinds and r.suggested_mapping == {}
    assert r.accuracy_before == r.accuracy_after > 0.5
    assert all(m["expected"] != m["predicted"] for m in r.misclassified)


def test_a_random_head_never_suggests_a_mapping(minilm, tiny):
    # minilm's classifier is new (random): any "best mapping" from its predictions would be noise.
    r = _report(_demo_csv(per_class=20), minilm)
    assert "permuted_mapping" not in r.kinds and r.suggested_mapping == {} and r.confusion is None
    # a trained head with real names still gets the check (the tiny models ship their heads)
    named = _report("text,label\n" + "".join(f"w{i},{n}\n" for i in range(6) for n in ("alpha", "beta")), tiny["bert"])
    assert named.confusion is not None


def test_typo_label_is_merged_into_the_frequent_one(sentiment):
    df = demo_frame(per_class=10, seed=3)
    df.loc[df.index[df["label"] == "positive"][:5], "label"] = "postive"
    r = label_report(read_csv(df.to_csv(index=False).encode()), ck=sentiment)
    (issue,) = [i for i in r.issues if i.kind == "near_duplicate_labels"]
    assert issue.detail["merge"] == {"postive": "positive"} and "postive" in issue.message
    assert "unseen_labels" not in r.kinds
    # the typo's rows count as positive rows: never a disagreement with no checkpoint label
    assert all(w["expected"] is not None for w in r.misclassified)
    assert "postive" not in r.confusion_rows


def test_typo_is_merged_into_the_checkpoint_spelling_when_rarer(sentiment):
    body = "text,label\n" + "great,postive\n" * 4 + "fine,positive\n" + "bad,negative\n" * 3
    r = _report(body, sentiment)
    (issue,) = [i for i in r.issues if i.kind == "near_duplicate_labels"]
    assert issue.detail["merge"] == {"postive": "positive"}


def test_typo_with_no_correct_spelling_is_a_name_mismatch(sentiment):
    r = _report("text,label\n" + "I love it. Wonderful!,postive\n" * 3 + "I hate it. Awful.,negative\n" * 3, sentiment)
    (issue,) = [i for i in r.issues if i.kind == "label_name_mismatch"]
    assert issue.detail["mapping"] == {"postive": "positive"}
    (unseen,) = [i for i in r.issues if i.kind == "unseen_labels"]
    assert unseen.detail["csv_only"] == []  # only neutral, which the CSV never uses
    assert r.suggested_mapping == {"postive": "positive"}


@pytest.mark.parametrize("a,b,typo", [("postive", "positive", True), ("negaitve", "negative", True),
                                      ("very postive", "Very Positive", True), ("class_a", "class_b", False),
                                      ("label_1", "label_2", False), ("sadness", "madness", False),
                                      ("negative", "positive", False), ("bad", "bed", False)])
def test_is_typo(a, b, typo):
    from explorer.data.names import is_typo
    assert is_typo(a, b) is typo


def test_two_checkpoint_labels_are_never_merged():
    from explorer.data.names import near_duplicates
    assert near_duplicates({"postive": 9, "positive": 3}, known=("postive", "positive")) == {}
    assert near_duplicates({"postive": 9, "positive": 3}) == {"positive": "postive"}


@pytest.mark.parametrize("value,ptype,label,note", [
    ("0", "single_label_classification", "negative", "'0' is the checkpoint's 'negative'"),
    ("2", "single_label_classification", "positive", "'2' is the checkpoint's 'positive'"),
    ("postive", "single_label_classification", "positive", "'postive' is the checkpoint's 'positive'"),
    ("neutral", "single_label_classification", "neutral", None),
    ("sarcasm", "single_label_classification", None, "has no label 'sarcasm'"),
    ("neutral|positive", "multi_label_classification", "neutral", "the first of the row's labels"),
    (0.9, "regression", None, "is a score (0.9)"),
])
def test_checkpoint_target_follows_the_data_page_mapping(sentiment, value, ptype, label, note):
    from explorer.data.mapping import checkpoint_target
    got = checkpoint_target(value, ptype, sentiment)
    assert got.label == label and (got.note is None if note is None else note in got.note)


def test_checkpoint_target_of_a_score_on_a_regression_checkpoint(tiny):
    from explorer.data.mapping import checkpoint_target
    model = copy.deepcopy(tiny["bert"].model)
    model.config.problem_type = "regression"
    got = checkpoint_target(0.9, "regression", Checkpoint("scorer", model, tiny["bert"].tokenizer, (), "test"))
    assert got.label == "alpha" and "given value is 0.9" in got.note
