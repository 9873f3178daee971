"""Duplicates: the same text more than once (`duplicates.exact`), and near-duplicates whose labels disagree
(`duplicates.conflicting`), with Azimuth's neighbour tags on each row.

A near-duplicate pair is near in its text AND in the model's vectors. The vectors alone cannot say it: a
fine-tuned encoder pulls each class together (whole classes reach cosine 0.95), so pairs near in the vectors
across labels are mostly the model's own errors; and an untuned encoder puts short texts from a small vocabulary
above 0.95 while a one-letter typo can fall to 0.6. The text carries the test; the vectors only confirm that the
model reads the two texts alike (a task where the closing mark is the label keeps its pairs apart there).

Memory: the neighbour search holds the (n, d) float32 vectors it is given, one block of similarities with its
partitioned copy (BLOCK_BYTES, 64 MiB, whatever n) and the (n, k) top-k (8 bytes an entry): 66 MiB at 10,000 rows
and 79 MiB at 100,000 beyond the vectors themselves (150 MB at 384 dimensions), where sklearn's search held
1.1 GB at 10,000. Time grows with n^2 (one matrix product of the vectors with themselves, in blocks). The text
side holds a key per distinct row and, for keys of 6 to 256 characters, about 20 bytes a character for the
one-edit hashes: under 300 MiB for the whole text side at 100,000 rows of 100 characters.
"""
from __future__ import annotations

import difflib
import re
from array import array
import unicodedata
from itertools import combinations

import numpy as np

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single, sentence_classifier
from explorer.text.errors import Message

# Text similarity (difflib's ratio of the keys below: 2 * matched characters / both lengths) from which two rows
# are near: one letter changed in a 10-letter text (0.90), one added to a 5-letter one (0.91). Among 1,000 demo
# tweets and their 20 nearest, the pairs over it are one tweet sent to other @-names (0.97); of the pairs across
# labels, 90% are under 0.45 and the closest (one tweet to two @-names) is 0.898.
TEXT_NEAR = 0.9
# Cosine of the model's vectors from which it reads two rows alike: Azimuth's own bar for a close neighbour.
# MiniLM puts a one-letter typo of a short sentence at 0.6-0.7 and a changed closing mark at 0.92.
NO_CLOSE = 0.5  # Azimuth: a row whose nearest neighbour is less similar than this has no close neighbour
VECTOR_NEAR = NO_CLOSE
NEIGHBOURS = 20  # Azimuth's neighbourhood
CONFLICT_SHARE = 0.90  # Azimuth: at least this share of a row's neighbours carry another label
MAX_PAIRS = 200  # pairs a finding lists, the most similar first; `pairs_total` counts them all
# Keys this long get one-deletion variants (one edit apart then share one): shorter keys cannot reach TEXT_NEAR
# by one edit (5 of 6 letters: 0.91); longer ones differ by one token of many, which the vectors see as near.
EDIT_KEYS = (6, 256)
BLOCK_BYTES = 64 * 2 ** 20  # one block of the neighbour search: float32 similarities and a partitioned copy
PAIR_CHUNK = 8192  # candidate pairs whose vectors are multiplied at once (two (chunk, d) float32 copies)

_ASCII_DROP = {i: None for i in range(128) if unicodedata.category(chr(i))[0] in "PZC"}


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def text_key(text: str) -> str:
    """The text a near-duplicate is compared on: NFC, casefolded, without punctuation, spaces or control and
    zero-width characters (Unicode categories P, Z, C); letters with their marks, digits and symbols (emoji
    included: they carry meaning) stay. A text of nothing else keeps itself, spaces collapsed."""
    t = unicodedata.normalize("NFC", text).casefold()
    kept = t.translate(_ASCII_DROP) if t.isascii() else "".join(
        c for c in t if unicodedata.category(c)[0] not in "PZC")
    return kept or "\0" + " ".join(t.split())  # \0 (category C) never survives in a key: no collision


def text_similarity(a: str, b: str) -> float:
    """difflib's ratio of two keys (1.0 when equal), without its junk heuristic (which drops a long text's
    common letters). difflib, not rapidfuzz: the project does not depend on it, and only the candidate pairs that
    pass the bound in `_near_in_text` get here."""
    return 1.0 if a == b else difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def exact_pairs(data: ScanData) -> list[list[int]]:
    """[[i, j], ...] with i < j: rows whose texts (and second texts) are equal up to case and spacing."""
    first: dict[tuple, int] = {}
    pairs = []
    for i, t in enumerate(data.texts):
        key = (normalised(t), normalised(data.pairs[i]) if data.pairs is not None else None)
        if key in first:
            pairs.append([first[key], i])
        else:
            first[key] = i
    return pairs


def neighbours(vectors: np.ndarray, k: int, *, block_bytes: int = BLOCK_BYTES,
               progress=None) -> tuple[np.ndarray, np.ndarray]:
    """((n, k) int32 indices, (n, k) float32 cosine similarities) of each row's k most similar other rows, most
    similar first (ties by index). The vectors are L2-normalised (ScanData's), so cosine is a dot product; it is
    taken in blocks of rows (block_bytes for a block's similarities and their partitioned copy), so
    memory stays flat in n. Not sklearn's NearestNeighbors: its chunks hold a whole float64 distance row
    block of about 1 GB, and its argsort of each chunk costs more than a partition's top-k."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)  # (n, d); no copy when already so
    if not np.isfinite(v).all():  # a NaN would sort above every similarity
        v = np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0)
    n = len(v)
    k = max(0, min(k, n - 1))
    idx = np.zeros((n, k), np.int32)
    sim = np.zeros((n, k), np.float32)
    if k == 0:
        return idx, sim
    rows = int(max(1, min(n, block_bytes // (8 * n))))  # a similarity and its partitioned copy (or two masks)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        s = v[start:stop] @ v.T  # (b, n)
        s[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # not its own neighbour; its copies are
        # Each row's k-th largest similarity by partition (values only: half argpartition's time and memory),
        # then the entries above it and, of those equal to it, the first by index: k a row even where many copies
        # tie, so a block's memory stays its own.
        kth = np.partition(s, n - k, axis=1)[:, n - k].copy()[:, None]  # (b, 1); a copy, so the partition goes
        r, c = np.nonzero(s > kth)
        need = k - np.bincount(r, minlength=stop - start)  # (b,) at least 1
        equal = s == kth
        tied = np.flatnonzero(equal.sum(1) > need)  # rows where more than needed tie at the k-th: copies
        equal[tied] = False
        er, ec = np.nonzero(equal)
        del equal
        tr = np.repeat(tied, need[tied])
        tc = np.concatenate([np.flatnonzero(s[t] == kth[t])[:need[t]] for t in tied]) if len(tied) else tr
        r, c = np.concatenate([r, er, tr]), np.concatenate([c, ec, tc])
        vals = s[r, c]
        del s
        order = np.lexsort((c, -vals, r))  # by row, most similar first, then by index: the same on every run
        idx[start:stop] = c[order].reshape(-1, k)
        sim[start:stop] = vals[order].reshape(-1, k)
        if progress:
            progress(stop / n, "")
    return idx, sim


def neighbour_tags(label_codes: np.ndarray, idx: np.ndarray, sim: np.ndarray) -> dict[str, list[int]]:
    """Azimuth's tags from each row's top-k: `conflicting_neighbours` (at least CONFLICT_SHARE of them carry
    another label) and `no_close_neighbour` (the nearest under NO_CLOSE)."""
    if not idx.shape[1]:
        return {"conflicting_neighbours": [], "no_close_neighbour": []}
    other = (label_codes[idx] != label_codes[:, None]).mean(1)  # (n,)
    return {"conflicting_neighbours": np.flatnonzero(other >= CONFLICT_SHARE).tolist(),
            "no_close_neighbour": np.flatnonzero(sim[:, 0] < NO_CLOSE).tolist()}


def _key_pairs(keys: list[str], reps: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """(m,) pair codes lo * n + hi of representatives with different labels whose keys are equal or one edit
    apart (they share the key or one of its one-deletion variants, hashed), whatever their vectors."""
    n = len(codes)
    hashes, owners = array("q"), array("i")  # grown in place: no list of small arrays to join
    for r in reps.tolist():
        key = keys[r]
        # a set of the strings (each hashed once, the hash kept by the string), then their hashes
        variants = {key}
        if EDIT_KEYS[0] <= len(key) <= EDIT_KEYS[1]:
            variants |= {key[:i] + key[i + 1:] for i in range(len(key))}
        hashes.extend(map(hash, variants))
        owners.extend([r] * len(variants))
    if not hashes:
        return np.zeros(0, np.int64)
    hashes, owners = np.frombuffer(hashes, np.int64), np.frombuffer(owners, np.int32)  # (m,) each: views
    order = np.argsort(hashes)
    hashes.sort()  # in place: hashes[order], without a second copy
    # Only the runs of equal hashes matter, and most hashes are unique: find the repeats, not every run's start.
    repeats = np.flatnonzero(hashes[1:] == hashes[:-1])  # i where hashes[i] == hashes[i + 1]: few
    del hashes
    out = []
    for run in np.split(repeats, np.flatnonzero(np.diff(repeats) != 1) + 1) if len(repeats) else []:
        members = owners[order[run[0]:run[-1] + 2]].tolist()  # distinct: each representative gives a hash once
        out += [min(a, b) * n + max(a, b) for a, b in combinations(members, 2) if codes[a] != codes[b]]
    return np.asarray(out, np.int64)


def _near_in_text(keys: list[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(m,) each pair's text similarity, 0.0 where a bound shows it under TEXT_NEAR: difflib's matched
    characters are at most the shorter key and at most the letters both keys hold (counted in 128 bins by code
    point, which only merges letters: still an upper bound), both taken for all pairs at once first."""
    out = np.zeros(len(a))
    used = np.unique(np.r_[a, b])
    where = {int(r): i for i, r in enumerate(used)}
    lengths = np.array([len(keys[r]) for r in used], np.int64)
    bins = np.zeros((len(used), 128), np.int32)
    for i, r in enumerate(used):
        bins[i] = np.bincount(np.frombuffer(keys[r].encode("utf-32-le"), np.uint32) % 128, minlength=128)
    ia = np.array([where[int(r)] for r in a], np.int64)
    ib = np.array([where[int(r)] for r in b], np.int64)
    total = lengths[ia] + lengths[ib]
    ok = 2 * np.minimum(lengths[ia], lengths[ib]) >= TEXT_NEAR * total
    for lo in range(0, len(a), PAIR_CHUNK):
        sl = slice(lo, lo + PAIR_CHUNK)
        shared = np.minimum(bins[ia[sl]], bins[ib[sl]]).sum(1)
        ok[sl] &= 2 * shared >= TEXT_NEAR * total[sl]
    for p in np.flatnonzero(ok):
        out[p] = text_similarity(keys[int(a[p])], keys[int(b[p])])
    return out


def label_codes(data: ScanData) -> np.ndarray:
    """(n,) each row's given label as an integer (equal labels, equal integers)."""
    return np.unique(np.asarray(data.given, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)


def conflicting_pairs(data: ScanData, idx: np.ndarray, sim: np.ndarray, codes: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """((m, 2) rows i < j, (m, 2) [text, vector] similarities) of the near-duplicate pairs with different labels,
    the most similar first (text, then vectors). A pair is a candidate when its keys are equal or one edit apart,
    or when one row is among the other's NEIGHBOURS nearest in the vectors; it is near when its text similarity
    reaches TEXT_NEAR and its vectors' cosine VECTOR_NEAR. Copies of one text (up to case and spacing) with one
    label count once, as their first row (duplicates.exact reports the copies); the same text under two labels
    is a pair here too (text similarity 1.0), the plainest conflict of all."""
    n = data.rows
    second = data.pairs if data.pairs is not None else ("",) * n
    exact: dict[tuple, int] = {}
    exact_id = np.array([exact.setdefault((normalised(t), normalised(p)), len(exact))
                         for t, p in zip(data.texts, second)])  # (n,) equal up to case and spacing: equal ids
    first: dict[tuple, int] = {}
    rep = np.array([first.setdefault((e, c), i) for i, (e, c) in enumerate(zip(exact_id.tolist(), codes.tolist()))])
    reps = np.flatnonzero(rep == np.arange(n))
    keys = [""] * n
    for r in reps:
        keys[r] = text_key(data.texts[r]) + ("\x1f" + text_key(second[r]) if data.pairs is not None else "")
    # candidates from the vectors' top-k (mapped to their representatives) and from the texts
    if idx.shape[1]:
        near = (sim >= VECTOR_NEAR) & (codes[idx] != codes[:, None])
        a, b = rep[np.nonzero(near)[0]], rep[idx[near]]
        from_vectors = np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)
    else:
        from_vectors = np.zeros(0, np.int64)
    cand = np.unique(np.r_[from_vectors, _key_pairs(keys, reps, codes)])
    a, b = cand // n, cand % n
    cand = cand[(a != b) & (codes[a] != codes[b])]
    a, b = cand // n, cand % n
    vec = np.zeros(len(cand), np.float32)
    for lo in range(0, len(cand), PAIR_CHUNK):
        sl = slice(lo, lo + PAIR_CHUNK)
        vec[sl] = np.einsum("ij,ij->i", data.vectors[a[sl]], data.vectors[b[sl]])
    keep = vec >= VECTOR_NEAR
    a, b, vec = a[keep], b[keep], vec[keep]
    text = _near_in_text(keys, a, b)
    keep = text >= TEXT_NEAR
    a, b, vec, text = a[keep], b[keep], vec[keep], text[keep]
    # ranked by the figures as shown (4 decimals), then by row: float noise in the cosine of two copies must not
    # decide which pair comes first
    text, vec = np.round(text, 4), np.round(vec.astype(np.float64), 4)
    order = np.lexsort((b, a, -vec, -text))
    return np.stack([a[order], b[order]], 1), np.stack([text[order], vec[order]], 1)


@check("duplicates.exact", sentence_classifier, cost=0.0, deeper="pages/attributions.py")
def find_exact(data: ScanData, found: Found, progress) -> list[Finding]:
    pairs = exact_pairs(data)
    if not pairs:
        return []
    conflicting = data.given is not None and any(data.given[i] != data.given[j] for i, j in pairs)
    return [Finding("duplicates.exact", "minor" if conflicting else "info",
                    Message("scan_exact_duplicates", n=len(pairs)),
                    {"pairs": pairs[:MAX_PAIRS], "pairs_total": len(pairs), "pairs_shown": min(len(pairs), MAX_PAIRS)})]


@check("duplicates.conflicting", labelled_single, cost=0.2, needs=READS_LABELS, deeper="pages/attributions.py")
def find_conflicting(data: ScanData, found: Found, progress) -> list[Finding]:
    idx, sim = neighbours(data.vectors, NEIGHBOURS, progress=progress)
    codes = label_codes(data)
    tags = neighbour_tags(codes, idx, sim)
    pairs, similarity = conflicting_pairs(data, idx, sim, codes)
    found.results["duplicates.conflicting"] = {"tags": tags, "pairs_total": len(pairs)}
    if not len(pairs):
        return []
    shown = min(len(pairs), MAX_PAIRS)
    return [Finding("duplicates.conflicting", "major",
                    Message("scan_conflicting_near_duplicates", n=len(pairs), text=f"{TEXT_NEAR:.2f}",
                            cosine=f"{VECTOR_NEAR:.2f}"),
                    {"pairs": pairs[:shown].tolist(),
                     # one float a pair each, beside `pairs`: the report's pairs table reads `similarity`
                     "similarity": [round(float(t), 4) for t in similarity[:shown, 0]],
                     "vector_similarity": [round(float(v), 4) for v in similarity[:shown, 1]],
                     "pairs_total": len(pairs), "pairs_shown": shown,
                     "text_near": TEXT_NEAR, "vector_near": VECTOR_NEAR,
                     "conflicting_neighbours": tags["conflicting_neighbours"],
                     "no_close_neighbour": tags["no_close_neighbour"]})]
