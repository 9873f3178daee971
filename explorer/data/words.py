"""Words against labels, with no model: which rows hold which words, and the words most tied to one label.

A tie is a chi-squared statistic of word presence against the label, so a frequent word that every label shares
scores near 0, where a raw count or a total of scores would rank it first. The scan's shortcut candidates and the
Dataset explanations' words per label share this ranking."""
from __future__ import annotations

from typing import Sequence

import numpy as np

WORD = r"(?u)\b\w+\b"  # what counts as a word in a text


def word_matrix(docs: Sequence, min_rows: int = 1, lowercase: bool = True):
    """(rows x words binary sparse matrix (CSC), words): which rows hold which words. `docs` are texts (split by
    WORD, lowercased) or each row's words already split (kept as they are)."""
    from sklearn.feature_extraction.text import CountVectorizer

    split = bool(len(docs)) and not isinstance(docs[0], str)
    vec = CountVectorizer(binary=True, min_df=min_rows, **({"analyzer": lambda words: list(set(words))} if split else
                                                          {"lowercase": lowercase, "token_pattern": WORD}))
    try:
        x = vec.fit_transform(list(docs))
    except ValueError:  # no word is in min_rows rows
        return None, np.array([], dtype=object)
    return x.tocsc(), vec.get_feature_names_out()


def contrastive_words(x, words, labels: np.ndarray, label: int,
                      top: int | None = None) -> list[tuple[str, float, int, float, float]]:
    """The words most tied to `label` among `labels` (n,): (word, chi2, rows holding it, share of those rows
    with `label`, p-value), strongest first; only words over-represented in the label's rows.

    The tie is Pearson's chi-squared test of the 2x2 table of word present/absent against label yes/no (one
    degree of freedom, no continuity correction), vectorised over every word. Not sklearn's `chi2`: on a binary
    feature it reads only the rows that hold the word, so a word in every row of a label and nowhere else (a
    perfect tie) scores weakly when the label is common."""
    from scipy.stats import chi2 as chi2_dist

    if x is None or not len(words):
        return []
    yes = np.asarray(labels) == label
    if yes.all() or not yes.any():
        return []
    n, n_yes = float(len(yes)), float(yes.sum())
    rows = np.asarray(x.sum(0)).ravel().astype(float)
    a = np.asarray(x[yes.nonzero()[0]].sum(0)).ravel().astype(float)  # word, label
    b = rows - a  # word, other labels
    c, d = n_yes - a, (n - n_yes) - b  # no word: label, other labels
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.nan_to_num(n * (a * d - b * c) ** 2 / (rows * (n - rows) * n_yes * (n - n_yes)))
    p = chi2_dist.sf(scores, 1)
    share = a / np.maximum(rows, 1)
    keep = np.flatnonzero(share > yes.mean())
    best = keep[np.argsort(-scores[keep], kind="stable")][:top]
    return [(str(words[j]), float(scores[j]), int(rows[j]), float(share[j]), float(p[j])) for j in best]


# ---- reliance the labels do not justify -----------------------------------------------------------

MIN_ERRORS = 3  # rows a word must turn against their given label before it can be called a shortcut
TIE_ALPHA = 0.05  # false discovery rate over every word tested (Benjamini-Hochberg)
SHORTCUT, MEANING, UNKNOWN = "shortcut", "meaning", "unknown"


def word_ties(x, words, predicted: np.ndarray, given: np.ndarray | None, label: int,
              top: int | None = None) -> list[dict]:
    """The words tied to predicted `label` (contrastive_words), each read against the given labels: the one rule
    for what is a shortcut, shared by the scan and the Dataset explanations.

    A word's tie to what the model predicts is a shortcut only where the labels do not justify it: where its rows
    carry the model's errors, predicted `label` where the data say otherwise, more often than rows without it do
    (one-sided Fisher test among the rows whose given label is not `label`, at least MIN_ERRORS such rows). A word
    the data tie to the label as strongly as the model does is what the label means ("meaning"), however strong:
    on an accurate topic model, "goal" drives sport. Without given labels the two cannot be told apart
    ("unknown"). `given`: (n,) given label ids, -1 where a row has none; None without labels.

    Returns dicts (word, label, rows, association, p, predicted_share, given_share, errors, errors_p, kind),
    strongest association first; `errors_p` is Benjamini-Hochberg-corrected over the words returned."""
    from scipy.stats import false_discovery_control, fisher_exact

    out = []
    column = {w: j for j, w in enumerate(words)}
    for word, chi, rows, share, p in contrastive_words(x, words, predicted, label, top):
        item = {"word": word, "label": int(label), "rows": rows, "association": round(chi, 4), "p": p,
                "predicted_share": round(share, 4), "given_share": None, "errors": 0, "errors_p": None,
                "kind": UNKNOWN}
        if given is not None:
            holds = np.asarray(x[:, column[word]].todense()).ravel() > 0
            known = given >= 0
            other = known & (given != label)  # rows the data do not give this label
            wrong = other & (predicted == label)  # ... that the model predicts it for
            item["given_share"] = round(float((given[holds & known] == label).mean()), 4) if (holds & known).any() else None
            item["errors"] = int((wrong & holds).sum())
            a, b = int((wrong & holds).sum()), int((other & holds & ~wrong).sum())
            c, d = int((wrong & ~holds).sum()), int((other & ~holds & ~wrong).sum())
            item["errors_p"] = float(fisher_exact([[a, b], [c, d]], alternative="greater").pvalue) if a + b else 1.0
        out.append(item)
    if given is not None and out:
        q = false_discovery_control([o["errors_p"] for o in out], method="bh")
        for o, qv in zip(out, q):
            o["errors_p"] = round(float(qv), 6)
            o["kind"] = SHORTCUT if o["errors"] >= MIN_ERRORS and qv < TIE_ALPHA else MEANING
    return out
