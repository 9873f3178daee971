"""The scan names a cause before its symptoms and stays quiet where nothing is wrong: a head saved untrained is
one major finding with everything it explains folded under it; clean, accurate models on clean rows get no major
and no shortcut; a planted word that turns rows against their labels is a major shortcut."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.model.checkpoints import load_checkpoint
from explorer.scan import scan_rows
from tests import scan_causes_models, scan_models


@pytest.fixture(scope="module")
def causes(tiny_root, tmp_path_factory):
    from tests.conftest import _trained_once
    root = _trained_once(scan_causes_models, "scan-causes", tiny_root, tmp_path_factory)
    planted = _trained_once(scan_models, "scan-planted", tiny_root, tmp_path_factory)
    return {"untrained": load_checkpoint(str(root / "untrained")), "flibbet": load_checkpoint(str(root / "flibbet")),
            "topic": load_checkpoint(str(planted / "topic"))}


def majors(report) -> list[str]:
    return [f.check for f in report.findings if f.severity == "major"]


@pytest.mark.slow
def test_a_head_saved_untrained_is_one_major_cause_with_its_symptoms_under_it(causes):
    ck = causes["untrained"]
    assert not ck.new_weights  # every weight is in the files: nothing at load says the head is random
    df = scan_models.topic_frame(90, seed=7)
    r = scan_rows(ck, df["text"].tolist(), given=df["label"].tolist())
    assert majors(r) == ["head.untrained"], [(f.check, f.severity, f.because) for f in r.findings]
    cause = r.findings[0].to_dict()
    assert cause["bias_zero"] and abs(cause["weight_std"] - 0.02) < 0.003
    assert cause["mean_top_probability"] < 0.5  # near uniform over three labels
    below = [f for f in r.findings if f.because]
    assert all(f.because == "head.untrained" and f.severity != "major" for f in below)
    assert not [f for f in r.findings if f.check == "mapping.permutation"]  # a random head's "mapping" is noise


@pytest.mark.slow
def test_a_trained_head_is_not_called_untrained(causes):
    df = scan_models.topic_frame(30, seed=7)
    for name in ("topic", "flibbet"):
        r = scan_rows(causes[name], df["text"].tolist(), given=None, checks=["head"])
        assert not [f for f in r.findings if f.check == "head.untrained"], name


@pytest.fixture(scope="module")
def tweets(tiny_root, tmp_path_factory):
    from tests.conftest import _trained_once
    return load_checkpoint(str(_trained_once(scan_causes_models, "scan-causes-tweets", tiny_root, tmp_path_factory,
                                             train=scan_causes_models.train_tweets) / "tweets"))


def shortcuts(report) -> list[str]:
    return [f.fields["word"] for f in report.findings if f.check == "shortcut.word" and f.severity != "info"]


@pytest.mark.slow
def test_a_clean_accurate_topic_model_on_clean_rows_has_no_shortcut_and_no_major(causes):
    df = scan_models.topic_frame(90, seed=7)
    r = scan_rows(causes["topic"], df["text"].tolist(), given=df["label"].tolist())
    assert shortcuts(r) == [] and majors(r) == [], [(f.check, f.severity, str(f.message)) for f in r.findings]


@pytest.mark.slow
@pytest.mark.soak  # a clean control trained on 1,500 tweets (`make soak`); the topic model's control stays above
def test_a_fine_tuned_tweet_model_on_unseen_tweets_has_no_shortcut_and_no_major(tweets):
    _, unseen = scan_causes_models.tweet_split()
    r = scan_rows(tweets, unseen["text"].tolist(), given=unseen["label"].tolist())
    assert shortcuts(r) == [] and majors(r) == [], [(f.check, f.severity, str(f.message)) for f in r.findings]
    # it still says what it saw: each label's words, as info
    assert r.calibration["rows"] == len(unseen)


@pytest.mark.slow
def test_a_planted_word_deciding_rows_against_their_labels_is_major_and_its_control_is_quiet(causes):
    ck = causes["flibbet"]
    planted = scan_causes_models.sentiment_frame(200, seed=9, planted_positive=0.0, planted_negative=0.25)
    r = scan_rows(ck, planted["text"].tolist(), given=planted["label"].tolist(), checks=["shortcut"])
    found = [f for f in r.findings if f.check == "shortcut.word" and f.severity == "major"]
    assert [f.fields["word"] for f in found] == [scan_causes_models.PLANTED]
    f = found[0].fields
    assert f["label"] == "positive" and f["flip_rate"] >= 0.9 and f["removal_p"] < 0.05 and f["to_given"] >= 0.9
    assert all(planted["label"][i] == "negative" for i in f["rows"])
    clean = scan_causes_models.sentiment_frame(200, seed=9, planted_positive=0.0, planted_negative=0.0)
    assert shortcuts(scan_rows(ck, clean["text"].tolist(), given=clean["label"].tolist(), checks=["shortcut"])) == []


@pytest.mark.slow
def test_moved_labels_are_found_with_precision_and_recall(causes):
    df = scan_models.topic_frame(120, seed=11)
    moved = sorted(np.random.default_rng(0).choice(len(df), 12, replace=False).tolist())
    cycle = {"sport": "politics", "politics": "tech", "tech": "sport"}
    df.loc[moved, "label"] = df.loc[moved, "label"].map(cycle)
    r = scan_rows(causes["topic"], df["text"].tolist(), given=df["label"].tolist(), checks=["labels"])
    f = next(f for f in r.findings if f.check == "labels.suspect_rows")
    hit = set(f.fields["rows"]) & set(moved)
    assert len(hit) / len(f.fields["rows"]) >= 0.8 and len(hit) / len(moved) >= 0.8, (f.fields["rows"], moved)
    assert f.severity == "major" and f.fields["explained_by_label_noise"]
    assert {e["row"]: e["suggested"] for e in f.fields["examples"] if e["row"] in hit} == \
        {i: {v: k for k, v in cycle.items()}[df["label"][i]] for i in hit}  # the label it had before it moved


def test_rows_the_model_gets_wrong_on_their_own_are_not_called_label_errors(tiny):
    """An out-of-fold head on the vectors that agrees with the given labels flags nothing, however often the
    checkpoint itself is wrong: the checkpoint's errors are not label errors."""
    from explorer.scan.base import Found, ScanData
    from explorer.scan.checks.labels import find_suspect_rows
    ck = tiny["bert"]
    rng = np.random.default_rng(0)
    n = 90
    given = [ck.labels[i % 3] for i in range(n)]
    vectors = np.eye(3)[[i % 3 for i in range(n)]] + 0.05 * rng.normal(size=(n, 3))  # labels follow the vectors
    logits = rng.normal(size=(n, 3))  # ... and the checkpoint is right about a third of the time
    data = ScanData(ck, tuple(f"t{i}" for i in range(n)), None, tuple(given), logits.astype(np.float32),
                    vectors.astype(np.float32))
    found = Found(label_ids={name: i for i, name in enumerate(ck.labels)})
    out = find_suspect_rows(data, found, lambda f, m="": None)
    assert all(f.severity == "info" and not f.fields["explained_by_label_noise"] for f in out), out


@pytest.mark.slow
def test_the_shipped_checkpoint_on_its_demo_tweets_reports_only_what_the_rules_make_true():
    """docs/scan.md's rules, read off each finding the shipped checkpoint gets on demo tweets: every transform's
    edit keeps what it promises to keep, neutral words are untied to labels and predictions, a shortcut is
    verified against its control on rows it turns against their labels, suspect rows say which they are."""
    import re
    from sklearn.feature_selection import chi2

    from explorer.data.dataset import demo_frame
    from explorer.data.words import word_matrix
    from explorer.scan.transforms import PROTECTED
    df = demo_frame(60)
    ck = load_checkpoint("minilm-sentiment")
    r = scan_rows(ck, df["text"].tolist(), given=df["label"].tolist())
    for name, result in r.robustness.items():
        for e in result["examples"]:
            kept = [w for w in e["text"].split() if PROTECTED.match(w)]
            if name in ("typos", "punctuation"):  # not prose: never touched
                assert all(w in e["perturbed"].split() for w in kept), (name, e)
            if name == "punctuation":  # a mark inside a word stays
                assert all(w in e["perturbed"] for w in re.findall(r"\b\w+'\w+\b", e["text"])), e
    words = r.results["robustness.neutral_words"].get("words")
    if words:
        x, vocab = word_matrix(df["text"].tolist())
        given = np.array([sorted(set(df["label"])).index(g) for g in df["label"]])
        predicted = np.array([ck.labels.index(p) for p in r.predicted_checkpoint])
        for w in words:
            j = list(vocab).index(w)
            for ids in (given, predicted):
                assert chi2(x[:, [j]], ids)[1][0] >= 0.5, (w, "tied")
    for f in r.findings:
        if f.check == "shortcut.word" and f.severity != "info":
            assert f.fields["errors"] >= 3 and f.fields["removal_p"] < 0.05 and f.fields["flip_rate"] >= 0.1
            assert all(df["label"][i] != f.fields["label"] for i in f.fields["rows"])
        if f.check == "labels.suspect_rows":
            assert f.severity != "major" or f.fields["explained_by_label_noise"]
        if f.check.startswith("robustness.") and f.severity == "major":
            assert f.fields["flip_rate_low"] >= 0.10
