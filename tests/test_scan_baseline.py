"""The scan against a baseline checkpoint (explorer/scan/baseline.py) on tiny models built in code: fixes,
regressions, disagreements and the McNemar p against plain forward passes and a binomial sum by hand; a renamed
id2label found without labels, with the right mapping; two identical checkpoints agree everywhere and find nothing;
the JSON contract, the HTML section, the CLI and its one-line refusals."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import explorer
from explorer.model.checkpoints import load_checkpoint
from explorer.scan.baseline import mcnemar_p
from explorer.scan.forward import run_rows
from explorer.text.errors import ExplorerError
from tests.baseline_models import frame, spread_models
from tests.conftest import TINY_LABELS

torch.set_num_threads(1)
CHECKS = ["head", "mapping", "calibration.ece", "slices"]  # what the comparison reads; the rest only costs time
def exact_mcnemar(b: int, c: int) -> float:
    """Two-sided exact McNemar by hand: twice the smaller binomial tail at 1/2, at most 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@pytest.fixture(scope="module")
def pair(tiny_root):
    return {k: load_checkpoint(str(v)) for k, v in spread_models(tiny_root).items()}


def test_mcnemar_is_the_exact_binomial_test():
    for b, c in [(0, 0), (12, 3), (3, 12), (5, 5), (1, 0), (30, 14)]:
        assert mcnemar_p(b, c) == pytest.approx(exact_mcnemar(b, c), rel=1e-12)
    assert mcnemar_p(12, 3) == pytest.approx(0.03515625)  # the example: 12 fixes, 3 regressions


def test_fixes_regressions_and_disagreements_match_plain_forwards(pair):
    df = frame()
    pred_b = run_rows(pair["b"], list(df["text"]))[0].argmax(-1)
    pred_a = run_rows(pair["a"], list(df["text"]))[0].argmax(-1)
    # labels each checkpoint gets half right as named: neither scan reads them through a permutation
    df["label"] = [TINY_LABELS[(b, a, (a + 1) % 3)[i % 3]] for i, (a, b) in enumerate(zip(pred_a, pred_b))]
    report = explorer.scan(df, pair["b"], baseline=pair["a"], checks=CHECKS)
    c = report.baseline
    assert "mapping.permutation" not in {f.check for f in report.findings} | {g["check"] for g in c.gone}
    assert c.mapping == {}  # two unrelated random heads: no renaming between them
    given = np.array([TINY_LABELS.index(x) for x in df["label"]])
    right_a, right_b = pred_a == given, pred_b == given
    assert list(c.disagreements) == np.flatnonzero(pred_a != pred_b).tolist()
    assert c.agreement == pytest.approx(float((pred_a == pred_b).mean()))
    assert list(c.fixes) == np.flatnonzero(~right_a & right_b).tolist()
    assert list(c.regressions) == np.flatnonzero(right_a & ~right_b).tolist()
    assert c.disagreements and (c.fixes or c.regressions)  # the test compares something
    assert c.mcnemar_p == pytest.approx(exact_mcnemar(len(c.fixes), len(c.regressions)), rel=1e-12)
    assert c.accuracy_baseline == pytest.approx(right_a.mean(), abs=1e-6)
    assert c.accuracy_checkpoint == pytest.approx(right_b.mean(), abs=1e-6)
    # the table: fixes and regressions first, then the other disagreements; A's probability is its softmax top
    table = c.table(report)
    assert [r["row"] for r in table] == c.ordered_rows() and sorted(c.ordered_rows()) == list(c.disagreements)
    first = len(c.fixes) + len(c.regressions)
    assert all(r["kind"] in ("fixed", "regressed") for r in table[:first])
    assert all(r["kind"] == "changed" for r in table[first:])
    probs_a = torch.softmax(torch.from_numpy(run_rows(pair["a"], list(df["text"]))[0]), -1).numpy()
    r = table[0]
    assert r["baseline"] == TINY_LABELS[pred_a[r["row"]]] and r["checkpoint"] == TINY_LABELS[pred_b[r["row"]]]
    assert r["baseline_p"] == pytest.approx(probs_a[r["row"]].max(), abs=1e-3)
    # calibration deltas are the two scans' own figures
    ece = c.calibration["ece"]
    assert ece["delta"] == pytest.approx(ece["checkpoint"] - ece["baseline"], abs=1e-6)
    d = json.loads(report.to_json())["baseline"]
    assert {"checkpoint", "agreement", "disagreements", "fixes", "regressions", "mcnemar_p", "slices",
            "calibration", "mapping", "gone"} <= set(d)
    assert all("baseline" in f for f in d_findings(report) if not f["check"].startswith("baseline."))


def d_findings(report):
    return json.loads(report.to_json())["findings"]


def test_a_renamed_id2label_is_found_without_labels_with_the_right_mapping(pair):
    df = frame(labels=False)
    report = explorer.scan(df, pair["renamed"], baseline=pair["b"], checks=CHECKS)
    c = report.baseline
    ids = run_rows(pair["b"], list(df["text"]))[0].argmax(-1)
    rotated = TINY_LABELS[1:] + TINY_LABELS[:1]  # id i of the renamed copy is called rotated[i]
    assert c.mapping == {TINY_LABELS[i]: rotated[i] for i in sorted(set(ids.tolist()))} and len(c.mapping) == 3
    assert c.agreement == 1.0 and c.disagreements == ()  # read through the renaming, they agree on every row
    assert c.fixes is None and c.mcnemar_p is None  # no labels: no fixes, no test
    found = [f for f in report.findings if f.check == "baseline.mapping"]
    assert len(found) == 1 and found[0].severity == "major" and found[0].fields["mapping"] == c.mapping
    assert found[0].fields["fix"]["side"] in ("checkpoint", "baseline", "either")


def test_the_side_to_fix_is_the_one_the_data_disagree_with(pair):
    df = frame()
    df["label"] = [TINY_LABELS[i] for i in run_rows(pair["b"], list(df["text"]))[0].argmax(-1)]  # B's own names
    c = explorer.scan(df, pair["renamed"], baseline=pair["b"], checks=CHECKS).baseline
    assert len(c.mapping) == 3 and c.fix == {"side": "checkpoint", "reason": "data"}
    assert c.fixes == () and c.regressions == () and c.mcnemar_p == 1.0  # each read through its own mapping


def test_two_identical_checkpoints_agree_everywhere_and_find_nothing(pair, tiny_root):
    df = frame()
    again = load_checkpoint(str(tiny_root / "tiny-bert-spread"))
    report = explorer.scan(df, pair["b"], baseline=again, checks=CHECKS)
    c = report.baseline
    assert c.agreement == 1.0 and c.disagreements == () and c.mapping == {}
    assert c.fixes == () and c.regressions == () and c.mcnemar_p == 1.0 and c.verdict == "same"
    assert not [f for f in report.findings if f.check.startswith("baseline.")]
    assert all(f.fields["baseline"] == "same" for f in report.findings) and c.gone == ()
    assert all(s["delta"] == 0 and not s["changed"] for s in c.slices)
    html = report.to_html("vi")
    assert "So với mốc" in html and "<script" not in html


def test_refusals_are_one_line_before_any_scan(pair, tiny_root, tmp_path):
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    two = tiny_root / "tiny-bert-two"
    if not two.exists():
        cfg = BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                         num_labels=2)
        BertForSequenceClassification(cfg).save_pretrained(two)
        AutoTokenizer.from_pretrained(str(tiny_root / "tiny-bert")).save_pretrained(two)
    df = frame(6)
    calls = []
    with pytest.raises(ExplorerError, match="same number of labels") as err:
        explorer.scan(df, pair["b"], baseline=load_checkpoint(str(two)), progress=lambda f, m="": calls.append(f))
    assert "\n" not in str(err.value) and not calls  # refused before either scan started
    with pytest.raises(ExplorerError, match="str"):
        explorer.scan(df, pair["b"], baseline="tiny-roberta")


def test_cli_json_html_and_refusals(capsys, tmp_path, tiny_root, pair):
    from explorer.cli import main
    csv = tmp_path / "data.csv"
    frame(40).to_csv(csv, index=False)
    out = tmp_path / "r.html"
    assert main(["scan", "--checkpoint", str(tiny_root / "tiny-bert-spread"),
                 "--baseline", str(tiny_root / "tiny-roberta-spread"),
                 "--csv", str(csv), "--label-column", "label", "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["baseline"]["checkpoint"].endswith("tiny-roberta-spread") and d["baseline"]["mcnemar_p"] is not None
    assert "McNemar p" in out.read_text(encoding="utf-8")
    for missing in (str(tmp_path / "nowhere"), str(tiny_root / "tiny-bert-two")):
        assert main(["scan", "--checkpoint", str(tiny_root / "tiny-bert"), "--baseline", missing,
                     "--csv", str(csv)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_token_classifier_baseline_is_one_line_exit_2(capsys, tmp_path, tiny_root, token_checkpoint, pair):
    from explorer.cli import main
    csv = tmp_path / "data.csv"
    frame(10).to_csv(csv, index=False)
    assert main(["scan", "--checkpoint", str(tiny_root / "tiny-bert-spread"), "--baseline", str(token_checkpoint),
                 "--csv", str(csv)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "token classifier" in err and "Traceback" not in err


def test_side_by_side_reads_each_checkpoint_as_transformers_does(pair):
    """The Logits page's two checkpoints on one text: each side's logits are the model's own forward and its scores
    what pipeline(top_k=None) returns (softmax for these single-label heads); a renamed id2label shows on the ids
    it moved; a different number of labels is one line."""
    from transformers import pipeline

    from explorer.model.analysis import analyze
    from explorer.model.heads import build_head
    from explorer.model.side_by_side import side_by_side

    text = frame(5)["text"][3]

    def read(ck):
        return analyze(ck, build_head(ck, "own", 0), text)

    s = side_by_side(read(pair["b"]), read(pair["a"]))
    for ck, logits, scores, labels in ((pair["b"], s.logits, s.scores, s.labels),
                                       (pair["a"], s.baseline_logits, s.baseline_scores, s.baseline_labels)):
        with torch.no_grad():
            plain = ck.model(**ck.tokenizer(text, return_tensors="pt")).logits[0].numpy()
        np.testing.assert_allclose(logits, plain, rtol=1e-4, atol=1e-6)
        piped = {d["label"]: d["score"] for d in pipeline("text-classification", model=ck.model, tokenizer=ck.tokenizer,
                                                          top_k=None, device="cpu")([text])[0]}
        np.testing.assert_allclose(scores, [piped[name] for name in labels], rtol=1e-4, atol=1e-6)
    assert s.renamed == () and s.function == s.baseline_function == "softmax"
    assert [r["difference"] for r in s.rows()] == pytest.approx(list(s.scores - s.baseline_scores))

    renamed = side_by_side(read(pair["renamed"]), read(pair["b"]))
    np.testing.assert_array_equal(renamed.logits, renamed.baseline_logits)  # the same weights, names rotated
    assert renamed.renamed == (0, 1, 2) and renamed.labels != renamed.baseline_labels

    # a multi-label head beside a single-label one: each side scored by its own rule, and the chart says both
    import dataclasses

    multi = dataclasses.replace(read(pair["b"]), problem_type="multi_label_classification")
    mixed = side_by_side(multi, read(pair["a"]))
    np.testing.assert_allclose(mixed.scores, 1 / (1 + np.exp(-multi.logits)))
    np.testing.assert_allclose(mixed.baseline_scores, s.baseline_scores)
    assert mixed.functions == "sigmoid / softmax" and s.functions == "softmax"

    two = load_checkpoint("minilm")  # the encoder alone: two labels, against three
    with pytest.raises(ExplorerError) as err:
        side_by_side(read(pair["b"]), read(two))
    assert err.value.key == "scan_baseline_labels"
