"""The scan: each check on tiny models built in code, and each planted defect found on MiniLM classifiers
fine-tuned with Trainer (tests/scan_models.py); a clean control without a major head, mapping or robustness
finding; ECE and flip rates against hand computation."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from explorer.data.dataset import read_csv
from explorer.model.checkpoints import load_checkpoint
from explorer.scan import CHECKS, scan_rows, scan_table
from explorer.scan.checks.calibration import ece, fit_temperature, nll
from explorer.scan.forward import run_rows
from explorer.scan.transforms import TRANSFORMS, punctuation, typos
from explorer.text.errors import ExplorerError
from tests import scan_models


@pytest.fixture(scope="module")
def planted(tiny_root, tmp_path_factory):
    from tests.conftest import _trained_once
    root = _trained_once(scan_models, "scan-planted", tiny_root, tmp_path_factory)
    rot = root.parent / "scan-topic-rotated"
    if not rot.exists():
        scan_models.rotated(root / "topic", rot)
    return {"topic": load_checkpoint(str(root / "topic")), "mark": load_checkpoint(str(root / "mark")),
            "pair": load_checkpoint(str(root / "pair")), "rotated": load_checkpoint(str(rot))}


def checks(report, severity=None) -> list[str]:
    return [f.check for f in report.findings if severity is None or f.severity == severity]


# ---- tiny models -----------------------------------------------------------------------------

def test_registry_runs_each_check_after_what_it_needs():
    from explorer.scan.base import needed, ordered
    run = [c.name for c in ordered(CHECKS)]
    assert len(run) == len(set(run)) == len(CHECKS)
    assert run[:2] == ["head.new_weights", "head.untrained"] or run[0] == "head.new_weights"
    assert run.index("mapping.permutation") < run.index("labels.suspect_rows")
    for c in CHECKS:
        assert all(run.index(o.name) < run.index(c.name) for o in needed(c)), c.name
    assert {"labels.suspect_rows", "shortcut.word", "calibration.ece", "duplicates.conflicting",
            "slices.performance"} <= set(run)
    assert {f"robustness.{t}" for t in TRANSFORMS} <= set(run)


def test_no_rows_is_one_line(tiny):
    with pytest.raises(ExplorerError, match="no rows"):
        scan_rows(tiny["bert"], [])


def test_a_table_without_the_named_column_is_one_line(tiny):
    table = read_csv(b"text,label\nhello,alpha\nworld,beta\n")
    with pytest.raises(ExplorerError, match="nope"):
        scan_table(tiny["bert"], table, label_column="nope")


def test_token_classifier_gets_the_head_checks_and_names_the_rest(token_checkpoint):
    ck = load_checkpoint(str(token_checkpoint))
    r = scan_table(ck, read_csv(b"text\nAlice lives in Paris\nBob went to Rome\n"))
    skipped = {c for c, _ in r.not_applicable}
    assert "head.output_function" in checks(r)
    assert {"mapping.permutation", "shortcut.word", "robustness.typos", "calibration.ece"} <= skipped
    assert all("token" in str(why) for c, why in r.not_applicable if c == "shortcut.word")


def test_one_forward_gives_the_models_logits(tiny):
    ck = tiny["bert"]
    texts = ["short", "a much longer text than the first one", "mid length"]
    logits, vectors = run_rows(ck, texts, vectors=True, batch_size=2)
    with torch.inference_mode():
        for i, t in enumerate(texts):
            alone = ck.model(**ck.tokenizer(t, return_tensors="pt")).logits[0].numpy()
            np.testing.assert_allclose(logits[i], alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_report_html_and_csv_keep_user_text_plain(tiny):
    texts = ["<img src=x onerror=alert(1)> good", "=cmd|' /C calc'!A0", "plain text here"] * 3
    given = ["alpha", "beta", "gamma"] * 3
    r = scan_rows(tiny["bert"], texts, given=given)
    page = r.to_html()
    assert "<img" not in page and "&lt;img" in page or "<img" not in page
    assert "<script" not in page.lower() and "http" not in page
    flags = pd.read_csv(__import__("io").BytesIO(r.flags_csv()))
    assert len(flags) == 9 and not any(str(v).startswith("=") for v in flags["text"])
    d = json.loads(r.to_json())
    assert set(d) >= {"rows", "checkpoint", "seconds", "findings", "calibration", "robustness"}
    assert d["rows"] == 9 and all(f["severity"] in ("major", "minor", "info") for f in d["findings"])


def test_report_saved_whole(tiny, tmp_path):
    r = scan_rows(tiny["bert"], ["one text", "another"], given=["alpha", "beta"])
    out = r.save_html(tmp_path / "scan.html", lang="vi")
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "Báo cáo quét" in out.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["scan.html"]


def test_progress_reaches_one_and_a_raise_stops(tiny):
    seen = []
    scan_rows(tiny["bert"], ["a b c"] * 4, given=["alpha", "beta"] * 2, progress=lambda f, m: seen.append(f))
    assert seen == sorted(seen) and seen[-1] == 1.0

    class Stop(Exception):
        pass

    def stop(f, m):
        if f > 0.3:
            raise Stop
    with pytest.raises(Stop):
        scan_rows(tiny["bert"], ["a b c"] * 4, given=["alpha", "beta"] * 2, progress=stop)


# ---- by hand ---------------------------------------------------------------------------------

def test_ece_by_hand():
    conf = np.array([0.95, 0.95, 0.55, 0.55, 0.55, 0.2])
    right = np.array([1, 0, 1, 1, 0, 0], bool)
    value, bins = ece(conf, right, bins=15)
    # bins: 0.95 -> (0.933, 1]: acc 0.5; 0.55 -> (0.533, 0.6]: acc 2/3; 0.2 -> (0.133, 0.2]: acc 0
    want = 2 / 6 * abs(0.5 - 0.95) + 3 / 6 * abs(2 / 3 - 0.55) + 1 / 6 * abs(0 - 0.2)
    assert value == pytest.approx(want)
    assert [b["rows"] for b in bins] == [1, 3, 2]


def test_temperature_lowers_held_out_nll_of_overconfident_logits():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    logits = rng.normal(size=(400, 3))
    logits[np.arange(400), y] += 1.0
    logits *= 6  # overconfident
    t = fit_temperature(logits[:200], y[:200])
    assert t > 2 and nll(logits[200:], y[200:], t) < nll(logits[200:], y[200:])


def test_typos_are_seeded_and_touch_about_five_percent():
    text = "the quick brown fox jumps over the lazy dog " * 20
    assert typos(text, 0) == typos(text, 0) != typos(text, 1)
    # No word here has one letter, so a typo never removes a word: words compare one to one. About 5% of the
    # letters at about 3.5 letters a word touches about a sixth of the words.
    words = list(zip(text.split(), typos(text, 0).split()))
    assert len(words) == len(text.split())
    assert 0.05 < sum(a != b for a, b in words) / len(words) < 0.4


# ---- planted defects on MiniLM ------------------------------------------------------------------

@pytest.mark.slow
def test_new_random_head_is_major(minilm):
    r = scan_rows(minilm, ["a good day", "a bad day"], given=None, checks=["head"])
    found = [f for f in r.findings if f.check == "head.new_weights"]
    assert found and found[0].severity == "major" and "classifier.weight" in found[0].fields["weights"]


@pytest.mark.slow
def test_clean_control_has_no_major_head_mapping_or_robustness(planted):
    df = scan_models.topic_frame(90, seed=7)
    r = scan_rows(planted["topic"], df["text"].tolist(), given=df["label"].tolist())
    majors = [c for c in checks(r, "major") if c.split(".")[0] in ("head", "mapping", "robustness")]
    assert majors == []


@pytest.mark.slow
def test_a_renamed_but_equal_checkpoint_against_its_original_is_a_renaming_not_a_regression(planted):
    """Clean control for the baseline's verdicts: the rotated checkpoint is the topic model's weights with its
    id2label rotated, so against the topic model it is a renaming (found without reading the labels), and, read
    through the names each scan found, it fixes and breaks nothing: no `baseline.worse`, no `baseline.slice`."""
    from explorer.scan.baseline import compare

    df = scan_models.topic_frame(90, seed=7)
    texts, given = df["text"].tolist(), df["label"].tolist()
    b, a = scan_rows(planted["rotated"], texts, given=given), scan_rows(planted["topic"], texts, given=given)
    r = compare(b, a, ck=planted["rotated"], baseline=planted["topic"])
    c = r.baseline
    perm = next(f for f in b.findings if f.check == "mapping.permutation")
    moved = {k: v for k, v in perm.fields["mapping"].items() if k != v}
    assert {k: v for k, v in c.mapping.items() if k != v} == moved and len(moved) >= 2
    assert c.fix["side"] == "checkpoint"  # the data disagree with the rotated names, not with the topic model's
    assert c.fixes == () and c.regressions == () and c.mcnemar_p == 1.0 and c.verdict == "same"
    assert {f.check for f in r.findings if f.check.startswith("baseline.")} == {"baseline.mapping"}
    assert next(f for f in r.findings if f.check == "mapping.permutation").fields["baseline"] == "new"


@pytest.mark.slow
def test_rotated_id2label_is_one_major_and_later_checks_read_through_it(planted):
    df = scan_models.topic_frame(90, seed=7)
    r = scan_rows(planted["rotated"], df["text"].tolist(), given=df["label"].tolist())
    perm = [f for f in r.findings if f.check == "mapping.permutation"]
    assert len(perm) == 1 and perm[0].severity == "major"
    ck_labels = planted["rotated"].labels
    # the model still predicts topic k as id k (ids in sorted order), which the rotated config names ck_labels[k]
    assert perm[0].fields["mapping"] == {n: ck_labels[sorted(scan_models.TOPICS).index(n)] for n in scan_models.TOPICS}
    # Nothing later names a label the rotated way: every label a finding names is the data's name for it.
    for f in r.findings:
        if "label" in f.fields:
            assert f.fields["read_through_mapping"] is True
    # Read through the mapping, the model agrees with the data, so calibration sees a right model.
    assert r.calibration["ece"] < 0.2
    assert not [f for f in r.findings if f.check == "slices.performance"]


@pytest.mark.slow
def test_model_reading_the_closing_mark_flips_without_punctuation(planted):
    df = scan_models.mark_frame(60, seed=7)
    ck = planted["mark"]
    r = scan_rows(ck, df["text"].tolist(), given=df["label"].tolist())
    found = [f for f in r.findings if f.check == "robustness.punctuation"]
    assert found and found[0].severity == "major"
    # by hand: every row changes (each ends with a mark); the flip rate is the share whose argmax moves
    before, _ = run_rows(ck, df["text"].tolist())
    after, _ = run_rows(ck, [punctuation(t) for t in df["text"]])
    want = float(np.mean(before.argmax(-1) != after.argmax(-1)))
    assert r.robustness["punctuation"]["rows"] == 60
    assert r.robustness["punctuation"]["flip_rate"] == pytest.approx(want, abs=1e-4)
    assert r.robustness["lowercase"]["flip_rate"] is None  # uncased: not applicable, not a pass
    assert "robustness.lowercase" in {c for c, _ in r.not_applicable}


def against_labels(df: pd.DataFrame, word: str, label: str, every: int = 2) -> pd.DataFrame:
    """`df` with `word` added to every `every`-th row not labelled `label`: rows the word can turn against their
    given label."""
    df = df.copy()
    others = df.index[df["label"] != label][::every]
    df.loc[others, "text"] = word + " " + df.loc[others, "text"]
    return df


@pytest.mark.slow
def test_a_word_that_turns_rows_against_their_labels_is_a_major_shortcut(shortcut_checkpoint):
    from tests import shortcut_model
    ck = load_checkpoint(str(shortcut_checkpoint))
    df = against_labels(shortcut_model.frame(60, seed=5), shortcut_model.SHORTCUT, "positive")
    r = scan_rows(ck, df["text"].tolist(), given=df["label"].tolist())
    short = [f for f in r.findings if f.check == "shortcut.word" and f.severity != "info"]
    assert [f.fields["word"] for f in short][:1] == [shortcut_model.SHORTCUT]
    top = short[0]
    assert top.severity == "major" and top.fields["label"] == "positive" and top.fields["flip_rate"] >= 0.5
    # verified on exactly the rows it could be deciding wrongly: it holds, predicted positive, labelled negative
    assert all(shortcut_model.SHORTCUT in df["text"][i] and df["label"][i] == "negative" for i in top.fields["rows"])
    # by hand: the flip rate is the share of those rows whose prediction leaves positive without the word
    from explorer.scan.checks.shortcut import without_word
    after, _ = run_rows(ck, [without_word(df["text"][i], shortcut_model.SHORTCUT) for i in top.fields["rows"]])
    assert top.fields["flip_rate"] == pytest.approx(float(np.mean(after.argmax(-1) != ck.labels.index("positive"))),
                                                    abs=1e-4)


@pytest.mark.slow
def test_words_the_labels_justify_drive_the_label_and_are_no_shortcut(planted, shortcut_checkpoint):
    """Where the data's labels follow a word as the model does, the word is what the label means in these data:
    no shortcut finding, whatever the model relies on (the pair model, the planted word on its own rows)."""
    from tests import shortcut_model
    df = shortcut_model.frame(60, seed=5)
    r = scan_rows(load_checkpoint(str(shortcut_checkpoint)), df["text"].tolist(), given=df["label"].tolist())
    assert not [f for f in r.findings if f.check == "shortcut.word" and f.severity != "info"]
    df = scan_models.pair_frame(80, seed=7)
    r = scan_rows(planted["pair"], df["text"].tolist(), given=df["label"].tolist())
    assert not [f for f in r.findings if f.check == "shortcut.word" and f.severity != "info"]
    drives = [f for f in r.findings if f.check == "shortcut.word" and f.severity == "info"]
    assert drives and set(scan_models.PAIR) & {w["word"] for w in drives[0].fields["words"]}
    # without labels a shortcut cannot be told from meaning: the words relied on are info, and it says so
    r = scan_rows(planted["pair"], df["text"].tolist(), given=None)
    relied = [f for f in r.findings if f.check == "shortcut.word"]
    assert [f.severity for f in relied] in ([], ["info"]) and all("Without given labels" in f.message for f in relied)


@pytest.mark.slow
def test_conflicting_near_duplicates_are_paired(planted):
    df = scan_models.topic_frame(60, seed=7)
    copies = df.iloc[:10].copy()
    copies["text"] = copies["text"] + " ."
    copies["label"] = copies["label"].map({"sport": "politics", "politics": "tech", "tech": "sport"})
    both = pd.concat([df, copies], ignore_index=True)
    r = scan_rows(planted["topic"], both["text"].tolist(), given=both["label"].tolist(),
                  checks=["mapping", "duplicates"])
    found = [f for f in r.findings if f.check == "duplicates.conflicting"]
    assert found and found[0].severity == "major"
    assert {(i, 60 + i) for i in range(10)} <= {tuple(p) for p in found[0].fields["pairs"]}


# ---- the command ---------------------------------------------------------------------------------

def _csv(tmp_path, df: pd.DataFrame, name: str = "data.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


def test_cli_json_contract_html_and_flags(capsys, tmp_path, shortcut_checkpoint):
    from explorer.cli import main
    from tests import shortcut_model
    df = against_labels(shortcut_model.frame(40, seed=5)[["text", "label"]], shortcut_model.SHORTCUT, "positive")
    df.loc[0, "text"] = "=cmd|' /C calc'!A0 " + df.loc[0, "text"]
    html, flags = tmp_path / "r.html", tmp_path / "flags.csv"
    assert main(["scan", "--checkpoint", str(shortcut_checkpoint), "--csv", _csv(tmp_path, df), "--json",
                 "--out", str(html), "--out-csv", str(flags)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["rows"] == 40 and d["checkpoint"] == str(shortcut_checkpoint) and d["seconds"] > 0
    assert set(d["calibration"]) == {"ece", "bins", "temperature", "nll", "nll_scaled"} and d["calibration"]["bins"] == 15
    assert set(d["robustness"]) == set(TRANSFORMS)
    assert all({"flip_rate", "rows", "examples"} <= set(v) for v in d["robustness"].values())
    short = [f for f in d["findings"] if f["check"] == "shortcut.word" and f["severity"] != "info"]
    assert short and short[0]["word"] == "zqx" and short[0]["severity"] == "major"
    assert all(0 <= i < 40 for i in short[0]["rows"])  # 0-based positions among the CSV's data rows
    assert html.read_text(encoding="utf-8").count("shortcut.word") >= 1
    rows = pd.read_csv(flags)
    assert len(rows) == 40 and not str(rows.loc[0, "text"]).startswith("=")
    assert "shortcut.word" in ";".join(rows["flags"].fillna(""))


@pytest.mark.parametrize("case", ["exists", "no_rows", "no_column"])
def test_cli_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path, tiny_root, case):
    from explorer.cli import main
    df = pd.DataFrame({"text": ["a", "b"], "label": ["alpha", "beta"]})
    csv = _csv(tmp_path, df.iloc[:0] if case == "no_rows" else df)
    out = tmp_path / "r.html"
    if case == "exists":
        out.write_text("keep me")
    args = ["scan", "--checkpoint", str(tiny_root / "tiny-bert"), "--csv", csv, "--out", str(out)]
    if case == "no_column":
        args += ["--label-column", "nope"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert (out.read_text() == "keep me") if case == "exists" else not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["data.csv"] + (["r.html"] if case == "exists" else []))


def test_explorer_scan_is_one_call_on_a_dataframe(tiny):
    import explorer
    df = pd.DataFrame({"text": ["good", "bad", "fine", "odd"], "label": ["alpha", "beta", "alpha", "beta"]})
    r = explorer.scan(df, tiny["bert"], seed=1)
    assert isinstance(r, explorer.scan.ScanReport) and r.rows == 4
    import explorer.scan.base  # noqa: F401 - importing a submodule keeps the package callable
    assert explorer.scan(df, tiny["bert"]).rows == 4
    with pytest.raises(ExplorerError):
        explorer.scan(df.iloc[:0], tiny["bert"])
    with pytest.raises(ExplorerError):
        explorer.scan("not a frame", tiny["bert"])
    with pytest.raises(ExplorerError):
        explorer.scan(df, "not a checkpoint")
    assert "<table>" in r._repr_html_() and json.loads(r.to_json())["rows"] == 4


@pytest.mark.slow
def test_dataset_explanations_read_a_rotated_mapping_and_rank_words_contrastively(planted):
    from explorer.explain.dataset import explain
    from explorer.model.heads import build_head
    df = scan_models.topic_frame(30, seed=7)
    ck = planted["rotated"]
    found = explain(ck, build_head(ck, "own"), texts=df["text"].tolist(), given_names=df["label"].tolist(),
                    methods=("saliency",))
    assert found.mapping and set(found.by_label) == set(scan_models.TOPICS)  # the data's names, not the rotated ones
    assert found.to_dict()["mapping"] == found.mapping
    for name, v in found.by_label.items():
        for s in v["shortcuts"]:  # a shortcut is named by the label its rows carry in the data
            rows = [r for r in found.rows if r.predicted == found.labels.index(name)]
            assert all(df["label"][r.row] == name for r in rows)
        top = [w["word"] for w in v["top_words"][:3]]
        assert not set(top) & set(scan_models.NEUTRAL), (name, top)  # words every label shares don't come first
    assert {found.labels[r.predicted] for r in found.rows} <= set(scan_models.TOPICS)
    # the given label is read through the mapping: the model agrees with the data on every row
    assert all(r.given == r.predicted for r in found.rows)


@pytest.mark.server
@pytest.mark.soak  # two processes: a scale test (`make soak`)
def test_two_processes_give_the_one_process_report(tiny_root, tmp_path):
    """Under `accelerate launch` of two CPU processes, each running several batches of every pass, the report
    is the one-process report (every forward pass is shared and gathered)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT, accelerate_two
    words = "alpha beta gamma delta good bad fine odd long short".split()
    df = pd.DataFrame({"text": [" ".join(words[(i + k) % 10] for k in range(3 + i % 4)) + ("!" if i % 3 else ".")
                                for i in range(48)],
                       "label": [("alpha", "beta", "gamma")[i % 3] for i in range(48)]})
    csv = _csv(tmp_path, df)
    env = dict(os.environ, HF_HUB_OFFLINE="1", HEAD_EXPLORER_ROOTS=str(tiny_root), OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT))
    args = ["-m", "explorer", "scan", "--checkpoint", str(tiny_root / "tiny-bert"), "--csv", csv, "--json",
            "--batch-size", "4"]  # 12 batches: several for each process
    one = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    launch = accelerate_two()
    two = subprocess.run([*launch, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    a.pop("seconds"), b.pop("seconds")
    assert a == b


# ---- the checks that read labels, on data built for them -------------------------------------------

def _data(ck, texts, given, logits, vectors=None):
    from explorer.scan.base import ScanData
    n = len(texts)
    return ScanData(ck, tuple(texts), None, tuple(given), np.asarray(logits, np.float32),
                    np.asarray(vectors if vectors is not None else np.eye(n, 8)[:, :8], np.float32))


def _found(data):
    from explorer.scan.base import Found
    found = Found()
    found.label_ids = {n: i for i, n in enumerate(data.ck.labels)}
    return found


def test_generic_names_are_a_minor_finding(tiny_root, tmp_path):
    import shutil
    src = tiny_root / "tiny-bert"
    out = tiny_root / "tiny-bert-generic"
    if not out.exists():
        shutil.copytree(src, out)
        cfg = json.loads((out / "config.json").read_text())
        cfg["id2label"] = {str(i): f"LABEL_{i}" for i in range(3)}
        cfg["label2id"] = {f"LABEL_{i}": i for i in range(3)}
        (out / "config.json").write_text(json.dumps(cfg))
    r = scan_rows(load_checkpoint(str(out)), ["a", "b"], given=None, checks=["head"])
    assert [f.severity for f in r.findings if f.check == "head.generic_names"] == ["minor"]
    r = scan_rows(load_checkpoint(str(src)), ["a", "b"], given=None, checks=["head"])
    assert not [f for f in r.findings if f.check == "head.generic_names"]


def test_over_and_underconfidence_follow_giskards_definitions(tiny):
    from explorer.scan.checks.calibration import calibration, find_overconfidence, find_underconfidence, \
        overconfidence_threshold
    ck = tiny["bert"]  # labels alpha, beta, gamma
    n = 40
    given = ["alpha"] * n
    logits = np.zeros((n, 3))
    logits[:, 0] = 4.0                       # right and sure
    logits[:8] = [0.0, 6.0, 0.0]             # wrong and sure: p(beta) - p(alpha) ~ 0.99 > threshold
    logits[8:10] = [0.0, 0.1, -5.0]          # wrong, but alpha almost as likely: not overconfident
    logits[10:16] = [1.0, 1.02, -5.0]        # wrong by a hair: the top two within 10% (underconfident)
    data = _data(ck, [f"t{i}" for i in range(n)], given, logits)
    c = calibration(data, _found(data))
    p = data.probabilities
    wrong = p.argmax(-1) != 0
    gap = p.max(-1) - p[:, 0]
    over = wrong & (gap > overconfidence_threshold(3))
    assert c["overconfident_rows"] == np.flatnonzero(over).tolist() == list(range(8))
    assert c["overconfidence_rate"] == pytest.approx(over.sum() / wrong.sum(), abs=1e-6)
    two = -np.sort(-p, -1)[:, :2]
    assert c["underconfident_rows"] == np.flatnonzero(two[:, 1] / two[:, 0] > 0.9).tolist()
    # Giskard's rule reads these rates by slice against the dataset's own rate: spread evenly, nothing stands out
    found = _found(data)
    found.results["calibration.ece"] = c
    assert find_overconfidence(data, found, None) == [] and find_underconfidence(data, found, None) == []


def test_overconfidence_is_a_slice_above_the_datasets_own_rate(tiny):
    """Giskard's rule, not a dataset-wide share: half the wrong rows are overconfident everywhere (no finding),
    then all of one word's wrong rows (a finding on that slice only)."""
    from explorer.scan.checks.calibration import calibration, find_overconfidence
    ck = tiny["bert"]
    n = 240
    texts = [("zonk " if i < 60 else "") + f"plain words {i % 7}" for i in range(n)]
    logits = np.tile([4.0, 0.0, 0.0], (n, 1))
    sure, unsure = [0.0, 6.0, 0.0], [0.0, 0.1, -5.0]
    for rows, kind in ((range(0, 40), [sure, unsure]), (range(60, 140), [sure, unsure])):
        for k, i in enumerate(rows):
            logits[i] = kind[k % 2]  # wrong rows, half of them overconfident
    data = _data(ck, texts, ["alpha"] * n, logits)
    found = _found(data)
    found.results["calibration.ece"] = calibration(data, found)
    assert find_overconfidence(data, found, None) == []  # 50% everywhere: no slice stands above
    logits[0:40] = sure  # every wrong "zonk" row now overconfident: 100% against 60% over the data
    data = _data(ck, texts, ["alpha"] * n, logits)
    found = _found(data)
    found.results["calibration.ece"] = calibration(data, found)
    out = find_overconfidence(data, found, None)
    # the zonk rows are also the only 4-word rows: both names of the one slice, nothing else
    assert 'contains "zonk"' in [f.fields["slice"] for f in out]
    assert all(f.fields["rows"] == list(range(40)) for f in out), [f.fields for f in out]
    f = out[0]
    assert f.fields["rate"] == 1.0 and f.fields["reference"] == pytest.approx(80 / 120, abs=1e-4)
    assert f.fields["relative_excess"] == pytest.approx(0.5, abs=1e-4)
    assert f.fields["rows"] == list(range(40)) and f.severity == "major"


def test_a_slice_that_does_worse_is_found_and_a_fair_one_is_not(tiny):
    from explorer.scan.checks.slices import find_weak_slices
    ck = tiny["bert"]
    n = 200
    texts = [("zonk " if i < 40 else "") + f"plain words here {i}" for i in range(n)]
    given = ["alpha"] * n
    logits = np.tile([3.0, 0.0, 0.0], (n, 1))
    logits[:30] = [0.0, 3.0, 0.0]  # 30 of the 40 "zonk" rows wrong; every other row right
    data = _data(ck, texts, given, logits)
    found = find_weak_slices(data, _found(data), None)
    slices = [f.fields["slice"] for f in found]
    assert 'contains "zonk"' in slices and 'contains "plain"' not in slices
    zonk = next(f for f in found if f.fields["slice"] == 'contains "zonk"')
    assert zonk.fields["accuracy"] == pytest.approx(10 / 40) and zonk.fields["rows"] == list(range(40))


def test_exact_duplicates_pair_their_rows(tiny):
    r = scan_rows(tiny["bert"], ["Same text", "other", "same  TEXT", "more"], given=["alpha", "beta", "gamma", "beta"],
                  checks=["mapping", "duplicates"])
    exact = [f for f in r.findings if f.check == "duplicates.exact"]
    assert exact and exact[0].fields["pairs"] == [[0, 2]] and exact[0].severity == "minor"  # labels disagree


@pytest.mark.slow
def test_planted_label_flips_are_suspect_rows(planted):
    df = scan_models.topic_frame(90, seed=7)
    flipped = [3, 20, 47, 71]
    cycle = {"sport": "politics", "politics": "tech", "tech": "sport"}
    df.loc[flipped, "label"] = df.loc[flipped, "label"].map(cycle)
    r = scan_rows(planted["topic"], df["text"].tolist(), given=df["label"].tolist(), checks=["mapping", "labels"])
    found = [f for f in r.findings if f.check == "labels.suspect_rows"]
    rows = set(found[0].fields["rows"]) if found else set()
    # a topic model trained on other rows: it may agree with one flip's new label, but flags nothing else
    assert rows <= set(flipped) and len(rows) >= 3, rows
    assert not [f for f in r.findings if f.check == "mapping.permutation"]  # 4 flips are not a permutation


def test_a_words_tie_is_pearsons_two_by_two_test():
    """contrastive_words' statistic and p-value equal scipy's chi2_contingency (no correction) on each word's
    present/absent x label/other table, and a word in every row of a common label and nowhere else ranks first."""
    from scipy.stats import chi2_contingency
    from explorer.data.words import contrastive_words, word_matrix
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(list("abcdefgh"), 4)) + (" zqx" if i % 4 else "") for i in range(40)]
    labels = np.array([1 if i % 4 else 0 for i in range(40)])  # zqx: exactly the rows of label 1, three in four
    x, words = word_matrix(texts)
    out = contrastive_words(x, words, labels, 1)
    assert out[0][0] == "zqx" and out[0][4] < 1e-8
    for word, stat, rows, share, p in out:
        holds = np.asarray(x[:, list(words).index(word)].todense()).ravel() > 0
        table = [[np.sum(holds & (labels == 1)), np.sum(holds & (labels != 1))],
                 [np.sum(~holds & (labels == 1)), np.sum(~holds & (labels != 1))]]
        want = chi2_contingency(table, correction=False)
        assert stat == pytest.approx(want.statistic, rel=1e-9) and p == pytest.approx(want.pvalue, rel=1e-6, abs=1e-12)
