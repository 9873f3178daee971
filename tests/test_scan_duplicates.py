"""The near-duplicate check: planted conflicting near-duplicates (a changed closing mark, a one-letter typo) found
through MiniLM's own vectors and nothing else; a clean set whose vectors sit tight within each class (as a
fine-tuned encoder's do) without a finding; pairs ranked by similarity before the cap; the blocked neighbour
search against the full matrix, and its memory at 20,000 rows."""
from __future__ import annotations

import json
import random
import tracemalloc

import numpy as np
import pytest

from explorer.scan import scan_rows
from explorer.scan.base import Found, ScanData
from explorer.scan.checks import duplicates
from explorer.scan.checks.duplicates import find_conflicting, neighbours, text_key, text_similarity
from tests import scan_models

WORDS = ("apple river stone cloud garden window silver forest candle harbor meadow engine pocket ladder basket "
         "mirror valley thunder pepper blanket castle violin marble cotton feather lantern orchard saddle tunnel "
         "walnut anchor bottle carpet dragon falcon glacier hammer island jacket kettle lemon magnet needle").split()


def _data(texts, given, vectors, pairs=None) -> ScanData:
    # The check reads the texts, the labels and the vectors, never the model: no checkpoint needed.
    return ScanData(None, tuple(texts), None if pairs is None else tuple(pairs), tuple(given), np.zeros((len(texts), 2),
                    np.float32), np.asarray(vectors, np.float32))


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def _distinct_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 8)) for _ in range(n)]


def _conflicting(data: ScanData) -> tuple[list, Found]:
    found = Found()
    return find_conflicting(data, found, lambda f, m: None), found


# ---- the text a pair is compared on ------------------------------------------------------------------

def test_text_keys_set_case_spacing_and_punctuation_aside_and_nothing_else():
    assert text_key("We ate at dinner.") == text_key("we  ate at dinner!") == "weateatdinner"
    assert text_key("pos\u200b") == text_key("pos")  # a zero-width space is no letter
    assert text_key("Tôi bán nhà") == text_key("to\u0302i ba\u0301n nha\u0300")  # NFD typed, NFC read
    assert text_key("tôi bán nhà") != text_key("tôi ban nhà")  # a tone mark is a letter's
    assert text_key("I ❤ it") != text_key("I 😡 it")  # emoji carry meaning
    assert text_key("!!!") != text_key("???")  # a text of marks alone keeps them
    assert text_similarity(text_key("we ate at dinner"), text_key("we ate at diner")) == pytest.approx(24 / 25)


# ---- found through a real encoder's vectors --------------------------------------------------------

PUNCTUATION = ("we ate at dinner.", "food", "we ate at dinner!", "sports")
TYPO = ("the senate passed the new law on monday", "politics", "the senate passed the new law on mondy", "tech")


def test_planted_conflicting_near_duplicates_are_found_and_nothing_else(sentiment):
    df = scan_models.topic_frame(160, seed=3)  # short rows from a vocabulary of 44 words
    texts, labels = df["text"].tolist(), df["label"].tolist()
    planted = []
    for a, la, b, lb in (PUNCTUATION, TYPO):
        planted.append((len(texts), len(texts) + 1))
        texts += [a, b]
        labels += [la, lb]
    # copies under one label are no conflict, and count once: the same text in another case under another label
    # is one pair (with the first copy), in duplicates.exact too
    copy = len(texts)
    texts += ["the match ended in a draw", "the match ended in a draw", "The match ended in a draw"]
    labels += ["sport", "sport", "tech"]
    planted.insert(0, (copy, copy + 2))  # text 1.0 and the same vector (an uncased tokenizer): the most similar
    r = scan_rows(sentiment, texts, given=labels, checks=["duplicates"])
    found = [f for f in r.findings if f.check == "duplicates.conflicting"]
    assert len(found) == 1 and found[0].severity == "major"
    f = found[0].fields
    assert [tuple(p) for p in f["pairs"]] == planted  # the copy, the closing mark (both 1.0), then the typo
    assert f["pairs_total"] == f["pairs_shown"] == 3
    assert f["similarity"][:2] == [1.0, 1.0] and 0.95 < f["similarity"][2] < 1.0  # text, case and marks set aside
    assert all(v >= duplicates.VECTOR_NEAR for v in f["vector_similarity"])
    exact = next(f for f in r.findings if f.check == "duplicates.exact")
    assert exact.fields["pairs"] == [[len(texts) - 3, len(texts) - 2], [len(texts) - 3, len(texts) - 1]]
    assert exact.severity == "minor"
    # the report carries them: JSON with the cap said, CSV flags on the planted rows only
    d = next(x for x in json.loads(r.to_json())["findings"] if x["check"] == "duplicates.conflicting")
    assert d["pairs_total"] == 3 and len(d["similarity"]) == len(d["vector_similarity"]) == len(d["pairs"])
    flags = r.row_flags()
    flagged = set(flags.index[flags["flags"].str.contains("duplicates.conflicting")])
    assert flagged == {i for p in planted for i in p}


@pytest.mark.slow
def test_a_fine_tuned_model_pairs_only_the_planted_rows(tiny_root, tmp_path_factory):
    """The topic classifier fine-tuned on these short rows pulls each topic together: most pairs across labels
    reach cosine 0.95, and none is a near-duplicate but the planted ones."""
    from explorer.model.checkpoints import load_checkpoint
    from explorer.scan.forward import run_rows
    from tests.conftest import _trained_once
    ck = load_checkpoint(str(_trained_once(scan_models, "scan-planted", tiny_root, tmp_path_factory) / "topic"))
    df = scan_models.topic_frame(160, seed=3)
    texts, labels = df["text"].tolist(), df["label"].tolist()
    plants = [("goal match team at dinner.", "sport", "goal match team at dinner!", "politics"),
              ("the senate vote on the new law", "politics", "the senate vote on the new lav", "tech")]
    planted = []
    for a, la, b, lb in plants:
        planted.append((len(texts), len(texts) + 1))
        texts += [a, b]
        labels += [la, lb]
    _, vectors = run_rows(ck, texts, vectors=True)
    sims = vectors @ vectors.T
    across = np.asarray(labels)[:, None] != np.asarray(labels)[None, :]
    assert (np.triu(sims >= 0.95, 1) & across).sum() > 100  # what the vectors alone would call near-duplicates
    r = scan_rows(ck, texts, given=labels, checks=["duplicates"])
    found = [f for f in r.findings if f.check == "duplicates.conflicting"]
    assert [tuple(p) for p in found[0].fields["pairs"]] == planted


# ---- chosen vectors -------------------------------------------------------------------------------------

def test_tight_classes_of_distinct_rows_give_no_finding_and_tag_the_moved_rows():
    rng = np.random.default_rng(0)
    n, classes = 300, ("alpha", "beta", "gamma")
    centres = _unit(rng.standard_normal((3, 64)))
    cls = np.arange(n) % 3
    vectors = _unit(centres[cls] + 0.03 * rng.standard_normal((n, 64)))  # cosine ~0.95 or more within a class
    given = [classes[c] for c in cls]
    moved = list(range(0, n, 10))  # 10% of the labels moved to the next class: the vectors disagree
    for i in moved:
        given[i] = classes[(cls[i] + 1) % 3]
    data = _data(_distinct_texts(n, seed=1), given, vectors)
    sims = vectors @ vectors.T
    other = np.asarray(given)[:, None] != np.asarray(given)[None, :]
    assert (np.triu(sims >= 0.95, 1) & other).sum() > 1000  # the vectors alone would pair the moved rows
    findings, found = _conflicting(data)
    assert findings == [] and found.results["duplicates.conflicting"]["pairs_total"] == 0
    tags = found.results["duplicates.conflicting"]["tags"]
    # Azimuth's tags, as the full matrix gives them: a moved row has about 90% of its neighbours in another
    # class (tagged at 90%), a row left alone about 10%
    np.fill_diagonal(sims, -np.inf)
    top = np.argsort(-sims, 1, kind="stable")[:, :20]
    share = (np.asarray(given)[top] != np.asarray(given)[:, None]).mean(1)
    assert tags["conflicting_neighbours"] == np.flatnonzero(share >= 0.9).tolist()
    assert set(moved) >= set(tags["conflicting_neighbours"]) and len(tags["conflicting_neighbours"]) >= len(moved) // 2
    assert tags["no_close_neighbour"] == []


def test_the_second_text_of_a_pair_counts():
    rng = np.random.default_rng(1)
    v = _unit(np.repeat(rng.standard_normal((1, 16)), 3, 0) + 0.01 * rng.standard_normal((3, 16)))
    texts = ["the cat sat on the mat"] * 3
    second = ["it was very happy today", "it was very happy today!", "nothing at all like it"]
    findings, _ = _conflicting(_data(texts, ["a", "b", "c"], v, pairs=second))
    assert findings[0].fields["pairs"] == [[0, 1]]


def test_pairs_are_ranked_by_similarity_before_the_cap(monkeypatch):
    monkeypatch.setattr(duplicates, "MAX_PAIRS", 3)
    rng = np.random.default_rng(2)
    plants = [("the river flooded the old town near the hills.", "the river flooded the old town near the hills!"),
              ("she sold the red bicycle", "She sold the red bicycle..."),
              ("a long sentence about the weather in the northern valley today", "a long sentence about the weather "
               "in the northern valey today"),
              ("he fixed the broken fence", "he fixed the broken fense"),
              ("our team won the final game", "our team won the final gamez"),
              ("the children painted a mural", "the children painted a murals"),
              ("please bring two blankets", "please bring two blanket"),
              ("music filled the empty hall", "music filled the emptyy hall")]
    texts = _distinct_texts(40, seed=3)
    given = [("alpha", "beta")[i % 2] for i in range(40)]
    vectors = list(_unit(rng.standard_normal((40, 32))))
    rows = {}
    for a, b in reversed(plants):  # the most similar pairs come last in row order
        base = rng.standard_normal(32)
        rows[(a, b)] = (len(texts), len(texts) + 1)
        texts += [a, b]
        given += ["alpha", "beta"]
        vectors += list(_unit(np.stack([base, base + 0.1 * rng.standard_normal(32)])))
    vectors = np.stack(vectors)
    findings, _ = _conflicting(_data(texts, given, vectors))
    f = findings[0].fields
    assert f["pairs_total"] == len(plants) and f["pairs_shown"] == 3 == len(f["pairs"]) == len(f["similarity"])
    assert len(f["vector_similarity"]) == 3
    want = sorted(rows.values(), key=lambda p: (-text_similarity(text_key(texts[p[0]]), text_key(texts[p[1]])),
                                                -float(vectors[p[0]] @ vectors[p[1]])))
    assert [tuple(p) for p in f["pairs"]] == want[:3]
    ranked = list(zip(f["similarity"], f["vector_similarity"]))
    assert ranked == sorted(ranked, reverse=True) and ranked[1][0] == 1.0  # the two closing-mark pairs first


# ---- the neighbour search ------------------------------------------------------------------------------

def test_blocked_neighbours_match_the_full_matrix_with_ties():
    rng = np.random.default_rng(4)
    v = _unit(rng.standard_normal((300, 24)))
    v[100:110] = v[5]  # ten copies of row 5: ties at the top
    v[200:230] = v[7]  # thirty copies of row 7: 30 ties at 1.0 for 20 places
    v[50] = np.nan  # a broken vector is no one's near neighbour
    idx, sim = neighbours(v, 20, block_bytes=20_000)  # blocks of 8 rows
    full = np.nan_to_num(v) @ np.nan_to_num(v).T
    np.fill_diagonal(full, -np.inf)
    want = -np.sort(-full, 1)[:, :20]
    np.testing.assert_allclose(sim, want, atol=1e-5)
    np.testing.assert_allclose(np.take_along_axis(full, idx.astype(np.int64), 1), sim, atol=1e-5)
    assert not (idx == np.arange(300)[:, None]).any()
    assert set(idx[5, :10]) == set(range(100, 110)) and list(idx[100, :10]) == [5] + list(range(101, 110))
    assert list(idx[7]) == list(range(200, 220)) and list(idx[200]) == [7] + list(range(201, 220))  # ties by index
    assert (sim[50] == 0).all()
    again, _ = neighbours(v, 20)  # one block: the same order, ties by index
    assert (again == idx).all()


@pytest.mark.soak  # a memory bound at scale (`make soak`); the search's answer is the full matrix's (above)
def test_neighbour_search_of_20000_rows_stays_in_its_memory_bound():
    rng = np.random.default_rng(5)
    v = _unit(rng.standard_normal((20_000, 384)))
    tracemalloc.start()
    try:
        idx, sim = neighbours(v, duplicates.NEIGHBOURS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # one block (64 MiB) and the top-k (3 MiB); the full matrix would be 1.6 GB, sklearn's search 1.3 GB at 10,000
    assert peak < 100 * 2 ** 20, peak / 2 ** 20
    some = rng.choice(20_000, 50, replace=False)
    full = v[some] @ v.T
    full[np.arange(50), some] = -np.inf
    np.testing.assert_allclose(sim[some], -np.sort(-full, 1)[:, :duplicates.NEIGHBOURS], atol=1e-5)


def test_a_clean_set_through_the_scan_has_no_near_duplicates(sentiment):
    df = scan_models.topic_frame(60, seed=11)
    r = scan_rows(sentiment, df["text"].tolist(), given=df["label"].tolist(), checks=["duplicates"])
    assert not [f for f in r.findings if f.check.startswith("duplicates.")]
    assert set(r.tags) == {"conflicting_neighbours", "no_close_neighbour"}

