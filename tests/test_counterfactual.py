"""Counterfactuals (explorer/explain/counterfactual.py, explorer.counterfactual): every claimed flip is a flip by a
plain forward of the returned text, that text is the original with its edits applied, no strict subset of a minimal
flip's edits flips (each checked by its own plain forward), and the search flips whatever LIT's ablation flip flips
with no more edits; the head's view holds the analysis's own numbers."""
from __future__ import annotations

import itertools
import json
import shutil

import numpy as np
import pytest
import torch

import explorer
from explorer.explain.counterfactual import (Counterfactual, CounterfactualError, Edit, apply_edits, counterfactual,
                                             goal_for)
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.problem import ProblemType
from explorer.text.errors import ExplorerError

torch.set_num_threads(1)

TEXTS = ["a fine day at the beach with friends", "the service was slow and the food cold",
         "nothing much happened today", "I would watch it again"]
SENTIMENT_TEXTS = ["I love this movie, it is wonderful", "This was a terrible and boring day",
                   "the food was fine but the waiter was rude", "what a great game last night"]


def plain_logits(ck, text: str, pair: str = "") -> np.ndarray:
    """One unpadded forward of the checkpoint's own model: what a user's plain call gives."""
    enc = ck.tokenizer(text, pair or None, return_tensors="pt", truncation=True)
    with torch.inference_mode():
        return ck.model(**enc).logits[0].double().numpy()


def prediction(ck, logits: np.ndarray):
    ptype = ProblemType(ck.model.config.problem_type or "single_label_classification")
    return ptype.predict(logits, ck.labels)


def check(ck, r: Counterfactual, target: int | None = None) -> None:
    """The contract, each part by its own forward passes."""
    d = r.to_dict()
    assert r.text == apply_edits(r.original, r.edits, side=0) == d["text"]
    assert r.text_pair == apply_edits(r.original_pair, r.edits, side=1)
    assert len({(e.side, e.start) for e in r.edits}) == len(r.edits) <= r.max_edits
    for e in r.edits:  # spans of the original: "old" is what they cover, up to a deletion's trailing whitespace
        source = r.original_pair if e.side else r.original
        assert source[e.start:e.end].rstrip() == e.old and (e.new == "" or source[e.start:e.end] == e.old)
    before = prediction(ck, plain_logits(ck, r.original, r.original_pair))
    after = prediction(ck, plain_logits(ck, r.text, r.text_pair))
    assert d["predicted_before"] == (list(before) if isinstance(before, tuple) else before)
    if target is not None:
        assert r.flipped == (ck.labels[target] in after if isinstance(after, tuple) else after == ck.labels[target])
    else:
        assert r.flipped == (after != before)
    if r.minimal:
        assert r.flipped
        for k in range(len(r.edits)):
            for subset in itertools.combinations(r.edits, k):
                text, pair = apply_edits(r.original, subset, side=0), apply_edits(r.original_pair, subset, side=1)
                assert prediction(ck, plain_logits(ck, text, pair)) == before, subset


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_tiny_random_models_claim_no_flip_they_lack(tiny, arch):
    """Random tiny heads read nearly the same pooled vector from every text: nothing flips, and the closest set
    tried comes back, said so, its text still the original with its edits applied."""
    ck = tiny[arch]
    head = build_head(ck, "own")
    for text in TEXTS[:2]:
        r = counterfactual(ck, head, text=text, max_edits=2)
        check(ck, r)
        assert not r.flipped and not r.minimal and 1 <= len(r.edits) <= 2


def test_a_tiny_trained_model_flips_on_its_shortcut(shortcut_checkpoint):
    from tests.shortcut_model import SHORTCUT, frame

    ck = load_checkpoint(str(shortcut_checkpoint))
    head = build_head(ck, "own")
    rows = frame(8, seed=5)
    flipped = 0
    for text, label in zip(rows["text"], rows["label"]):
        r = counterfactual(ck, head, text=text, max_edits=2)
        check(ck, r)
        assert r.flipped == r.minimal
        if label == "positive" and r.predicted_before == "positive":
            assert r.flipped and len(r.edits) == 1, text
            flipped += 1
            if r.edits[0].old == SHORTCUT:
                assert r.edits[0].kind == "delete" and SHORTCUT not in r.text
    assert flipped >= 2


def test_the_sentiment_checkpoint_flips_minimally(sentiment):
    from explorer.explain.counterfactual import whole_words

    head = build_head(sentiment, "own")
    vocab = set(whole_words(sentiment.tokenizer)[1])
    kinds = set()
    for text in SENTIMENT_TEXTS:
        seen: list[float] = []
        r = counterfactual(sentiment, head, text=text, max_edits=3, progress=lambda frac, msg: seen.append(frac))
        check(sentiment, r)
        assert r.flipped and r.minimal, text
        assert seen == sorted(seen) and seen[-1] == 1.0  # a job's bar only moves forward, and ends full
        for e in r.edits:
            kinds.add(e.kind)
            assert e.kind == "delete" or (e.new in vocab and e.new.isalpha() and not e.new.startswith("##"))
    assert kinds == {"delete", "replace"}  # both kinds of edit found on these texts


def test_a_target_label_is_reached(sentiment):
    r = explorer.counterfactual(sentiment, "I love this movie, it is wonderful", target="negative", max_edits=3)
    check(sentiment, r, target=sentiment.labels.index("negative"))
    if r.flipped:
        assert r.to_dict()["predicted_after"] == "negative"
    assert r.to_dict()["target"] == "negative"
    with pytest.raises(ExplorerError, match="already"):
        explorer.counterfactual(sentiment, "I love this movie, it is wonderful", target="positive")
    with pytest.raises(ExplorerError, match="target"):
        explorer.counterfactual(sentiment, "I love this movie", target="happy")


def test_nothing_within_max_edits_says_so_with_the_closest(sentiment):
    text = "Best day ever! So happy and thankful, love you all, great friends, wonderful family, amazing food"
    r = explorer.counterfactual(sentiment, text, max_edits=1)
    check(sentiment, r)
    assert not r.flipped and not r.minimal and len(r.edits) == 1
    d = r.to_dict()
    assert d["flipped"] is False and d["predicted_after"] == d["predicted_before"] == "positive"
    # the closest: no single edit tried moves the predicted label's probability further down
    assert d["after"][sentiment.labels.index("positive")] <= d["before"][sentiment.labels.index("positive")]


def test_sentence_pairs_edit_either_side(sentiment):
    from explorer.explain.counterfactual import word_slots

    head = build_head(sentiment, "own")
    slots = word_slots(sentiment, "I love it", text_pair="it was awful")[0]
    assert [(w.side, w.text) for w in slots] == [(0, "I"), (0, "love"), (0, "it"), (1, "it"), (1, "was"), (1, "awful")]
    found = [counterfactual(sentiment, head, text=a, text_pair=b, max_edits=2)
             for a, b in [("I love it", "it was awful"), ("what a great game", "the weather was fine"),
                          ("the food was terrible", "I loved the music")]]
    for r in found:
        check(sentiment, r)
    assert any(r.flipped for r in found)
    assert all(r.to_dict()["edits"][0]["side"] in ("text", "text_pair") for r in found if r.edits)


def test_multi_label_reads_sigmoids_and_sets(tiny_root):
    folder = tiny_root / "tiny-bert-multi"
    if not folder.exists():
        shutil.copytree(tiny_root / "tiny-bert", folder)
        cfg = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**cfg, "problem_type": "multi_label_classification"}))
    ck = load_checkpoint(str(folder))
    head = build_head(ck, "own")
    r = counterfactual(ck, head, text=TEXTS[0], max_edits=1)
    check(ck, r)
    np.testing.assert_allclose(r.before, 1 / (1 + np.exp(-plain_logits(ck, r.original))), atol=1e-5)  # sigmoid
    assert isinstance(r.to_dict()["predicted_before"], list)


def test_the_head_view_holds_the_analyses_numbers(sentiment):
    head = build_head(sentiment, "own")
    r = counterfactual(sentiment, head, text=SENTIMENT_TEXTS[1], max_edits=3)
    a, b = analyze(sentiment, head, r.original), analyze(sentiment, head, r.text)
    view = r.to_dict()["head"]
    assert [s["name"] for s in view["steps"]] == [n for n, _ in a.steps]
    np.testing.assert_allclose(view["pooled"]["before"], a.steps[0][1], atol=1e-5)
    np.testing.assert_allclose(view["pooled"]["after"], b.steps[0][1], atol=1e-5)
    for step, (_, x), (_, y) in zip(view["steps"], a.steps, b.steps):  # what the page's steps table shows
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        assert step["change_norm"] == pytest.approx(np.linalg.norm(y - x), rel=1e-4, abs=1e-6)
        assert step["cosine"] == pytest.approx(x @ y / np.linalg.norm(x) / np.linalg.norm(y), abs=1e-5)
    change = plain_logits(sentiment, r.text) - plain_logits(sentiment, r.original)
    np.testing.assert_allclose([view["logit_change"][n] for n in sentiment.labels], change, atol=1e-4)
    split = view["last_step"]["labels"]
    np.testing.assert_allclose([split[n]["total"] for n in sentiment.labels], change, atol=1e-4)
    assert all(len(split[n]["features"]) == 10 for n in sentiment.labels)
    np.testing.assert_allclose(r.before, torch.softmax(torch.tensor(plain_logits(sentiment, r.original)), -1), atol=1e-5)
    np.testing.assert_allclose(r.after, torch.softmax(torch.tensor(plain_logits(sentiment, r.text)), -1), atol=1e-5)


def test_it_flips_what_the_ablation_flip_flips_with_no_more_edits(sentiment):
    from bench.bench_counterfactual import compare, tweets

    c = compare(sentiment, build_head(sentiment, "own"), tweets(9))
    assert c["dominated"] and c["flips"] >= c["base_flips"] and c["base_flips"] >= 3
    assert c["edits"] <= c["base_edits"]
    assert c["minimal"] == c["flips"]


def test_the_result_contract(sentiment, tmp_path):
    r = explorer.counterfactual(sentiment, "<b>great</b> & a fine film", max_edits=2)
    d = json.loads(r.to_json())
    for key in ("text", "edits", "flipped", "minimal", "before", "after", "predicted_before", "predicted_after",
                "forward_passes", "head"):
        assert key in d
    assert d["forward_passes"] > len(d["edits"]) and isinstance(d["before"], list)
    assert set(d["edits"][0]) >= {"start", "end", "old", "new"}
    html = r._repr_html_()
    assert "<b>great" not in html and "</b> &amp;" not in html and "&lt;b" in html  # the text escaped
    assert "cf-delete" in html
    page = r.save_html(tmp_path / "cf.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "cf-delete" in page


def test_apply_edits_is_plain_string_work():
    text = "one two three four"
    edits = [Edit(0, 4, 8, "two", ""), Edit(0, 8, 13, "three", "3"), Edit(0, 14, 18, "four", "")]
    assert apply_edits(text, edits) == "one 3 "
    for k in range(len(edits) + 1):  # any subset, in any order
        for subset in itertools.permutations(edits, k):
            assert apply_edits(text, subset) == apply_edits(text, sorted(subset, key=lambda e: e.start))


def test_token_classifiers_and_regression_are_refused(tiny_root, sentiment):
    from tests.tiny_archs import save

    ck = load_checkpoint(str(save("bert", tiny_root, token=True)))
    with pytest.raises(ExplorerError) as err:
        explorer.counterfactual(ck, "Alice lives in Paris")
    assert "\n" not in str(err.value) and "token" in str(err.value)
    a = analyze(sentiment, build_head(sentiment, "own"), "fine")
    import dataclasses
    with pytest.raises(CounterfactualError, match="regression"):
        goal_for(dataclasses.replace(a, problem_type=ProblemType.REGRESSION), None)


def test_the_cli_one_text_and_a_csv(tmp_path, capsys):
    import pandas as pd

    from explorer import cli

    assert cli.main(["counterfactual", "--text", "I love this movie", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["flipped"] and d["text"] == apply_edits("I love this movie", [Edit(0, **{k: v for k, v in e.items()
                                                                             if k in ("start", "end", "old", "new")})
                                                                        for e in d["edits"]])
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("text,label\nI love this movie,positive\n=1+2 what a terrible day,negative\n")
    assert cli.main(["counterfactual", "--csv", str(src), "--text-column", "text", "--target", "neutral",
                     "--max-edits", "2", "--out-csv", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("row 0: ") and any(line.startswith("row 1: ") for line in lines)
    rows = pd.read_csv(out, keep_default_na=False)
    assert list(rows["row"]) == [0, 1] and rows["text"][1].startswith("'=1+2")  # a formula cell, guarded
    assert set(rows.columns) >= {"counterfactual", "flipped", "minimal", "edits", "edit_list", "predicted_after"}
    before = out.read_bytes()
    assert cli.main(["counterfactual", "--csv", str(src), "--text-column", "text", "--out-csv", str(out)]) == 2
    assert out.read_bytes() == before  # never overwritten
    assert "already exists" in capsys.readouterr().err
    for bad in (["--text", "x", "--csv", str(src)], ["--csv", str(src)], [], ["--text", "x", "--max-edits", "11"],
                ["--text", "x", "--target", "happy"]):
        assert cli.main(["counterfactual", *bad]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and err[0].startswith("error:"), bad


@pytest.mark.parametrize("ptype", [ProblemType.SINGLE, ProblemType.MULTI])
@pytest.mark.parametrize("target", [None, 0, 2])
def test_a_positive_margin_is_exactly_a_flip_by_the_problem_types_rule(ptype, target):
    from explorer.explain.counterfactual import Goal

    labels = ("a", "b", "c")
    rng = np.random.default_rng(0)
    original = np.array([0.7, -1.2, 0.3])  # single-label: "a"; multi-label: {"a", "c"}
    if ptype is ProblemType.SINGLE and target == 0:
        target = 1  # the predicted label is no target
    goal = Goal(ptype, labels, original, target)
    rows = rng.normal(scale=1.5, size=(2000, 3))
    before = ptype.predict(original, labels)
    for z, m in zip(rows, goal.margins(rows)):
        after = ptype.predict(z, labels)
        if target is None:
            flipped = after != before
        elif ptype is ProblemType.MULTI:
            flipped = (labels[target] in after) != (labels[target] in before)
        else:
            flipped = after == labels[target]
        assert (m > 0) == flipped, (z, m)
    assert goal.margins(original[None])[0] < 0  # the original itself never flips
