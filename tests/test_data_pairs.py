"""Sentence-pair datasets: the label report, the audit and fine-tuning read (text, text pair) with the
tokenizer's pair encoding, and the pair column is guessed from common headers.

A tiny pair task built here ("are these two sentences about the same topic?") is learnt by the embedded
MiniLM with transformers' own Trainer in a few seconds; its first sentence alone says nothing about the
label, so any path that drops the pair falls to chance.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest
import torch

from explorer.cli import main
from explorer.data.dataset import DataError, PAIR_NAMES, guess_pair_columns, read_csv

pytestmark = [pytest.mark.slow]

TOPICS = {
    "food": ["The soup was hot and salty.", "She baked fresh bread this morning.", "We ate pasta with tomato sauce.",
             "The cake tasted of lemon.", "He grilled fish for dinner.", "Rice and beans filled the bowl.",
             "The pizza had too much cheese.", "They shared a plate of noodles."],
    "sport": ["The striker scored a late goal.", "She ran the marathon in three hours.",
              "The team won the football match.", "He hit the tennis ball hard.", "The swimmer broke the record.",
              "Our coach trained the players daily.", "The referee stopped the game.", "They cycled up the steep hill."],
    "weather": ["Heavy rain fell all night.", "The wind blew the clouds away.", "Snow covered the mountain road.",
                "It was sunny and warm today.", "A storm hit the coast.", "Thick fog hid the valley.",
                "The forecast says thunder tonight.", "Frost formed on the windows."],
    "music": ["The band played a loud song.", "She sang in the church choir.", "He tuned his old guitar.",
              "The orchestra played a symphony.", "They danced to the drums.", "The pianist practised scales.",
              "A violin solo opened the concert.", "The album sold a million copies."],
    "computers": ["The laptop crashed again.", "He wrote code in Python.", "The server needs more memory.",
                  "She installed a new keyboard.", "The program has a bug.", "Our network went down.",
                  "The screen resolution is low.", "He backed up the hard drive."],
}
NAMES = ("different", "same")  # id order of the pair model


def pair_rows(seed: int, n: int) -> pd.DataFrame:
    """n rows (sentence1, sentence2, label): half on one topic ("same"), half on two ("different")."""
    rng, topics, out = random.Random(seed), list(TOPICS), []
    for i in range(n):
        a_topic = rng.choice(topics)
        b_topic = a_topic if i % 2 == 0 else rng.choice([t for t in topics if t != a_topic])
        a = rng.choice(TOPICS[a_topic])
        out.append((a, rng.choice([s for s in TOPICS[b_topic] if s != a]), NAMES[int(a_topic == b_topic)]))
    return pd.DataFrame(out, columns=["sentence1", "sentence2", "label"])


@pytest.fixture(scope="module")
def pair_model(tiny_root):
    """(folder of a MiniLM pair classifier with the right id2label, folder of the same weights saved with
    id2label swapped, the test CSV, the model's own accuracy on it)."""
    from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                              TrainingArguments)

    from explorer.model.checkpoints import embedded_encoder_dir

    root = tiny_root / "pairs"  # under HEAD_EXPLORER_ROOTS: the CLI loads only folders there
    tok = AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))
    torch.manual_seed(0)  # the new classifier's weights: the same model whatever ran before
    model = AutoModelForSequenceClassification.from_pretrained(
        str(embedded_encoder_dir()), num_labels=2, id2label=dict(enumerate(NAMES)),
        label2id={n: i for i, n in enumerate(NAMES)})
    train = pair_rows(0, 96)
    enc = tok(list(train.sentence1), list(train.sentence2), truncation=True, max_length=64)
    rows = [{**{k: v[i] for k, v in enc.items()}, "labels": NAMES.index(train.label[i])} for i in range(len(train))]
    args = TrainingArguments(output_dir=str(root / "trainer"), num_train_epochs=4, learning_rate=1e-4,
                             per_device_train_batch_size=16, save_strategy="no", report_to=[], disable_tqdm=True,
                             use_cpu=True, seed=0, logging_strategy="no")
    Trainer(model=model, args=args, train_dataset=rows, data_collator=DataCollatorWithPadding(tok)).train()
    model.eval()
    right, swapped = root / "pair-model", root / "pair-model-swapped"
    model.save_pretrained(right)
    tok.save_pretrained(right)
    model.config.id2label = {0: NAMES[1], 1: NAMES[0]}  # the NLI bug: the same weights, the names in another order
    model.config.label2id = {NAMES[1]: 0, NAMES[0]: 1}
    model.save_pretrained(swapped)
    tok.save_pretrained(swapped)
    test = pair_rows(1, 120)
    csv = root / "pairs.csv"
    test.to_csv(csv, index=False)
    with torch.no_grad():  # the model's own accuracy, as transformers computes it
        e = tok(list(test.sentence1), list(test.sentence2), padding=True, return_tensors="pt")
        pred = model(**e).logits.argmax(-1).numpy()
    accuracy = float(np.mean([NAMES[p] == y for p, y in zip(pred, test.label)]))
    assert accuracy >= 0.85  # the task is learnt: the checks below compare against a real pair classifier
    return right, swapped, csv, accuracy


def _json(capsys, *args) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _refused(capsys, *args) -> str:
    capsys.readouterr()
    assert main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_inspect_data_finds_the_swapped_pair_model_only_with_the_pair(pair_model, capsys):
    right, swapped, csv, accuracy = pair_model
    got = _json(capsys, "inspect-data", "--csv", str(csv), "--checkpoint", str(swapped))
    assert got["text_column"] == "sentence1" and got["text_pair_column"] == "sentence2"  # guessed from the header
    assert "permuted_mapping" in {i["kind"] for i in got["issues"]}
    assert got["suggested_mapping"] == {"different": "same", "same": "different"}
    assert got["accuracy_after"] >= accuracy - 1e-9 and got["accuracy_before"] <= 1 - accuracy + 1e-9
    test = pd.read_csv(csv)
    rows = set(zip(test.sentence1, test.sentence2))  # each row listed shows its own text B (rows are sampled)
    assert (got["misclassified"] or accuracy == 1.0) and all((r["text"], r["text_pair"]) in rows
                                                             for r in got["misclassified"])
    # The right names: nothing to fix, and the same agreement as the model's accuracy.
    ok = _json(capsys, "inspect-data", "--csv", str(csv), "--checkpoint", str(right))
    assert "permuted_mapping" not in {i["kind"] for i in ok["issues"]} and ok["accuracy_before"] >= accuracy - 1e-9
    # The first sentence alone is what the report read before: near chance, and no fix it could trust.
    alone = _json(capsys, "inspect-data", "--csv", str(csv), "--checkpoint", str(swapped), "--no-text-pair")
    assert alone["text_pair_column"] is None
    assert alone["accuracy_after"] < got["accuracy_after"] - 0.2


def test_label_issues_read_the_pairs(pair_model, capsys):
    """The audit's features encode the pair: its cross-validated accuracy is the pair model's, and the
    one-text run after it (same texts, same model) is not served the pairs' cached features."""
    right, _, csv, _ = pair_model
    common = ("inspect-data", "--csv", str(csv), "--checkpoint", str(right), "--label-issues", "--folds", "3")
    pairs = _json(capsys, *common)
    alone = _json(capsys, *common, "--no-text-pair")
    assert pairs["text_pair_column"] == "sentence2"
    assert pairs["label_issue_summary"]["cv_accuracy"] >= 0.85
    assert alone["label_issue_summary"]["cv_accuracy"] < pairs["label_issue_summary"]["cv_accuracy"] - 0.2
    assert all("text_pair" in row for row in pairs["label_issues"])


@pytest.mark.parametrize("mode", ["head", "full"])
def test_finetune_on_pairs_exports_a_pipeline_pair_model(pair_model, capsys, tmp_path, mode):
    """Both modes train and validate on the pair encoding (on the first sentence alone validation would be
    near chance); the exported folder answers transformers.pipeline's {"text", "text_pair"} with the CSV's names."""
    from transformers import pipeline

    right, _, csv, _ = pair_model
    out = tmp_path / "tuned"
    extra = ("--epochs", "2", "--lr", "1e-3") if mode == "head" else ("--epochs", "1", "--lr", "1e-5")
    got = _json(capsys, "finetune", "--csv", str(csv), "--checkpoint", str(right), "--mode", mode, "--out", str(out),
                "--max-length", "64", *extra)
    assert got["text_pair_column"] == "sentence2" and got["accuracy"] >= 0.85
    if mode == "full":
        return  # the export is the same code for both modes; one pipeline load is enough
    test = pd.read_csv(csv)
    clf = pipeline("text-classification", model=str(out), device="cpu")
    answers = clf([{"text": a, "text_pair": b} for a, b in zip(test.sentence1, test.sentence2)])
    assert {a["label"] for a in answers} <= set(NAMES)
    assert np.mean([a["label"] == y for a, y in zip(answers, test.label)]) >= 0.85


def test_guessed_headers():
    for a, b in PAIR_NAMES:
        frame = pd.DataFrame({a.upper(): ["x y"], b: ["z"], "label": ["1"]})
        assert guess_pair_columns(frame) == (a.upper(), ("label",), b)
    frame = pd.DataFrame({"question": ["what?", "why?"], "answer": ["yes", ""]})  # two columns: the partner is the label
    assert guess_pair_columns(frame) == ("question", ("answer",), None)
    frame = pd.DataFrame({"premise": ["a"], "hypothesis": ["b"], "label": ["x"]})
    assert guess_pair_columns(frame, text_pair_column="") == ("premise", ("label",), None)
    assert guess_pair_columns(frame, text_column="hypothesis") == ("hypothesis", ("label",), None)


def test_bad_pair_columns_are_one_line(pair_model, capsys, tmp_path):
    _, swapped, csv, _ = pair_model
    err = _refused(capsys, "inspect-data", "--csv", str(csv), "--text-pair-column", "nope")
    assert "no column 'nope'" in err
    err = _refused(capsys, "inspect-data", "--csv", str(csv), "--text-column", "sentence1",
                   "--text-pair-column", "sentence1")
    assert "both the text and the text pair" in err
    holes = pd.read_csv(csv)
    holes.loc[[3, 7], "sentence2"] = ""
    bad = tmp_path / "holes.csv"
    holes.to_csv(bad, index=False)
    for args in (("inspect-data", "--csv", str(bad)), ("inspect-data", "--csv", str(bad), "--text-pair-column", "sentence2"),
                 ("inspect-data", "--csv", str(bad), "--checkpoint", str(swapped), "--label-issues")):
        assert _refused(capsys, *args).endswith("2 rows have an empty second text in pair column 'sentence2' (first: row 5)")
    # Fine-tuning refuses before anything is written.
    out = tmp_path / "never"
    for args in (("--csv", str(bad)), ("--csv", str(csv), "--text-pair-column", "nope"),
                 ("--csv", str(csv), "--text-column", "sentence2", "--text-pair-column", "sentence2")):
        _refused(capsys, "finetune", *args, "--checkpoint", str(swapped), "--out", str(out))
        assert not out.exists() and not list(tmp_path.glob(".never*"))
    with pytest.raises(DataError):  # the label column is not a text
        guess_pair_columns(read_csv(csv).frame, label_column="label", text_pair_column="label")


def test_data_page_shows_the_guessed_pair_picker(pair_model):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT
    from explorer.ui.session import DATA_KEY, Upload

    _, _, csv, _ = pair_model
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["data_source"] = "upload"
    at.session_state["data_uploaded"] = Upload(csv.read_bytes(), "pairs.csv")
    at.session_state["data_compare"] = False
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    picker = at.selectbox(key="data_pair_column")
    assert picker.label == "Text B / pair column (— = none)" and picker.value == "sentence2"
    src = at.session_state[DATA_KEY]
    assert (src.text_column, src.text_pair_column, src.label_column) == ("sentence1", "sentence2", "label")
    # The "In use" line left the pair column out
    assert any(c.value.startswith("In use: pairs.csv · text column: sentence1 · text B column: sentence2 · label")
               for c in at.caption), [c.value for c in at.caption]
    picker.set_value("—").run()
    assert not at.exception and at.session_state[DATA_KEY].text_pair_column == ""
    # The Fine-tune page's picker is the same choice, offered over the same columns.
    at.switch_page("pages/finetune.py").run()
    assert not at.exception and at.selectbox(key="data_pair_column").value == "—"
    assert at.selectbox(key="data_pair_column").options == ["—", "sentence1", "sentence2", "label"]


def test_pair_features_match_transformers(minilm):
    """The audit's and head mode's pair features are the base model's states on `tokenizer(a, b)`, token
    types included (MiniLM gives text B segment 1), and not the first text's."""
    from explorer.model.features import POOLS, encoder_features

    a, b = ["The soup was hot and salty.", "He tuned his old guitar."], ["Snow covered the road.", "It rained."]
    got = encoder_features(minilm, a, text_pairs=b)[:, POOLS.index("first")]  # (2, hidden)
    with torch.inference_mode():
        enc = minilm.tokenizer(a, b, padding=True, return_tensors="pt")
        want = minilm.model.base_model(**enc).last_hidden_state[:, 0].numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert not np.allclose(got, encoder_features(minilm, a)[:, POOLS.index("first")], atol=1e-3)


def test_audit_page_audits_pairs(pair_model):
    """The Label audit page reads the Data page's pair column: the pair model's features separate the
    labels (a first-text-only audit is near chance), and the rows list shows text B."""
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT
    from explorer.ui.session import DATA_KEY, DataSource

    right, _, csv, _ = pair_model
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["checkpoint"] = "other…"
    at.session_state["checkpoint_other"] = str(right)
    at.session_state[DATA_KEY] = DataSource(csv.read_bytes(), "pairs.csv", "sentence1", "label", NAMES, "sentence2",
                                            ("sentence1", "sentence2", "label"))
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception and at.selectbox(key="data_pair_column").value == "sentence2"
    at.button(key="audit_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = at.session_state["audit_result"].found
    assert found.data.text_pairs is not None and found.cv_accuracy >= 0.85
    if len(found.flagged):  # the rows list shows text B
        assert "text B" in at.dataframe[0].value.columns
    else:  # nothing flagged: the all-clear line, no empty tables
        assert at.success and not at.dataframe


def test_api_takes_the_pair_column():
    from explorer import api

    df = pd.DataFrame({"premise": ["a b", "c d"], "hypothesis": ["e", "f"], "label": ["x", "y"]})
    assert api.inspect(df).report.text_pair_column == "hypothesis"
    assert api.inspect(df, text_pair="").report.text_pair_column is None
