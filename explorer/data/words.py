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
    with `label`, p-value), strongest first; only words over-represented in the label's rows (chi2 is
    two-sided)."""
    from sklearn.feature_selection import chi2

    if x is None or not len(words):
        return []
    yes = np.asarray(labels) == label
    if yes.all() or not yes.any():
        return []
    scores, p = chi2(x, yes)
    rows = np.asarray(x.sum(0)).ravel()
    hits = np.asarray(x[yes.nonzero()[0]].sum(0)).ravel()
    share = hits / np.maximum(rows, 1)
    scores = np.nan_to_num(scores)
    keep = np.flatnonzero(share > yes.mean())
    best = keep[np.argsort(-scores[keep], kind="stable")][:top]
    p = np.nan_to_num(p, nan=1.0)
    return [(str(words[j]), float(scores[j]), int(rows[j]), float(share[j]), float(p[j])) for j in best]
