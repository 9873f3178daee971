"""Label names: which spellings name one label (case, spacing, punctuation, Unicode form, a misspelt word),
and a table's labels renamed."""
from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

import pandas as pd

from explorer.data.dataset import strip_invisible

_PUNCTUATION = re.compile(r"[\W_]+")


def label_key(name: str) -> str:
    """Names equal under this key differ only by case, whitespace, invisible characters or Unicode form."""
    return " ".join(unicodedata.normalize("NFKC", strip_invisible(name)).casefold().split())


def name_key(name: str) -> str:
    """Names equal under this key differ only by case, spacing or punctuation ("very_negative", "Very Negative")."""
    return _PUNCTUATION.sub("", label_key(name))


def name_matches(csv_names, ck_labels: tuple[str, ...]) -> dict[str, str]:
    """{CSV name: checkpoint name} for names that are not equal but fold to one name_key, where that
    key names one label on each side (otherwise which is which is a guess)."""
    def by_key(names):
        out: dict[str, list[str]] = {}
        for n in names:
            out.setdefault(name_key(n), []).append(n)
        return out

    csv_names = list(csv_names)
    ours, theirs = by_key(csv_names), by_key(ck_labels)
    out = {n: theirs[k][0] for n in csv_names
           if n not in ck_labels and (k := name_key(n)) and len(ours[k]) == 1 and len(theirs.get(k, ())) == 1
           and theirs[k][0] not in csv_names}
    # A typo of one checkpoint label the CSV does not use ("postive" with no "positive" row) names it too.
    for n in csv_names:
        typos = [c for c in ck_labels if is_typo(n, c)]
        if n not in ck_labels and n not in out and len(typos) == 1 and typos[0] not in csv_names \
                and typos[0] not in out.values():
            out[n] = typos[0]
    return out


# A typo: the same words but one or more spelt a little differently ("postive", "negaitve"). difflib's
# ratio stands in for a Damerau-Levenshtein ratio (rapidfuzz is not a dependency and this runs on a
# few dozen names): a transposition costs it two matches, so "negaitve" still scores 0.875. Words
# under 4 letters, words with digits and words that differ in their first letter are never typos:
# "class_a"/"class_b", "label_1"/"label_2" and "sadness"/"madness" are different labels.
TYPO_RATIO = 0.85
MAX_TYPO_NAMES = 300  # distinct names compared pairwise; more is a text column, not labels
_WORDS = re.compile(r"[^\W_]+")


def is_typo(a: str, b: str) -> bool:
    """Do `a` and `b` name one label with a word misspelt? (Not when they are equal under label_key.)"""
    wa, wb = _WORDS.findall(label_key(a)), _WORDS.findall(label_key(b))
    pairs = [(x, y) for x, y in zip(wa, wb) if x != y]
    return len(wa) == len(wb) and bool(pairs) and all(
        min(len(x), len(y)) >= 4 and x[0] == y[0] and not any(c.isdigit() for c in x + y)
        and SequenceMatcher(None, x, y).ratio() >= TYPO_RATIO for x, y in pairs)


def near_duplicates(names_counts: dict[str, int], known: tuple[str, ...] = ()) -> dict[str, str]:
    """{variant: canonical}: names that differ by case, spacing or Unicode form, or by a typo
    (is_typo), merged into the group's name the checkpoint knows (`known`), else its most frequent.
    Canonicals are stripped of surrounding spaces (merge_labels strips every label, so a canonical
    "positive " would not stick). Two names the checkpoint both knows are never merged."""
    groups: dict[str, list[str]] = {}
    for name in names_counts:
        groups.setdefault(label_key(name), []).append(name)
    rank = lambda n: (n in known, names_counts[n], n)  # noqa: E731
    order = sorted(groups.values(), key=lambda g: max(map(rank, g)), reverse=True)
    fuzzy = len(order) <= MAX_TYPO_NAMES
    # Greedy, most frequent first: a group joins the first larger one it is a typo of, so a chain
    # of typos never links two labels the checkpoint knows.
    heads: list[list[str]] = []
    for group in order:
        head = max(group, key=rank)
        into = None if head in known or not fuzzy else next((h for h in heads if is_typo(head, max(h, key=rank))), None)
        if into is None:
            heads.append(list(group))
        else:
            into.extend(group)
    merge = {}
    for group in heads:
        if len(group) > 1:
            canonical = max(group, key=rank).strip()
            merge.update({n: canonical for n in group if n != canonical})
    return merge


def merge_labels(frame: pd.DataFrame, column: str, mapping: dict[str, str]) -> pd.DataFrame:
    """A copy of `frame` with `column`'s labels renamed (merge variants, or apply a mapping)."""
    out = frame.copy()
    out[column] = out[column].map(lambda v: renamed(v, mapping))
    return out


def renamed(value, mapping: dict[str, str]):
    return mapping.get(value, mapping.get(value.strip(), value.strip())) if isinstance(value, str) else value
