"""Small perturbations that should not change a label (Giskard's text perturbations, Azimuth's neutral words):
each a pure function of one text, seeded where it draws.

What each keeps, so that its edit keeps the label: tokens that are not prose (URLs, @handles, #tags, HTML
entities) are never touched by typos or punctuation removal, and a mark inside a word or a number (don't,
self-driving, 24.99) stays; neutral words are chosen from the data themselves (`fit_neutral_words`): frequent
words whose presence is independent of the labels, never words of a fixed list that may carry one ("Please",
"Thank you" read as positive to a sentiment model)."""
from __future__ import annotations

import random
import re
import string
import unicodedata
import zlib

TYPO_RATE = 0.05  # share of letters a typo touches
# Keys next to each other on a QWERTY keyboard: a typo replaces a letter with a neighbour.
_NEAR = {"q": "wa", "w": "qes", "e": "wrd", "r": "etf", "t": "ryg", "y": "tuh", "u": "yij", "i": "uok", "o": "ipl",
         "p": "ol", "a": "qsz", "s": "awdz", "d": "sefx", "f": "drgc", "g": "fthv", "h": "gyjb", "j": "hukn",
         "k": "jilm", "l": "kop", "z": "asx", "x": "zsdc", "c": "xdfv", "v": "cfgb", "b": "vghn", "n": "bhjm",
         "m": "njk"}
_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
            "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
_CONTRACTIONS = {"do not": "don't", "does not": "doesn't", "did not": "didn't", "is not": "isn't",
                 "are not": "aren't", "was not": "wasn't", "were not": "weren't", "can not": "can't",
                 "cannot": "can't", "will not": "won't", "would not": "wouldn't", "should not": "shouldn't",
                 "could not": "couldn't", "have not": "haven't", "has not": "hasn't", "i am": "i'm",
                 "it is": "it's", "that is": "that's", "you are": "you're", "we are": "we're",
                 "they are": "they're", "i will": "i'll", "i have": "i've", "let us": "let's"}
_EXPANSIONS = {v: k for k, v in _CONTRACTIONS.items() if k != "cannot"}


def lowercase(text: str, seed: int = 0) -> str:
    return text.lower()


def uppercase(text: str, seed: int = 0) -> str:
    return text.upper()


# Tokens that are not prose: a typo or a removed mark there changes an address, not a word a person misspells.
PROTECTED = re.compile(r"(?i)^(?:https?://\S+|www\.\S+|[@#]\w[\w.]*\W*$|&\w+;)")
_SPLIT = re.compile(r"(\s+)")


def _pieces(text: str):
    """(piece, protected) for the text's whitespace runs and tokens, in order: joining the pieces gives `text`."""
    return [(p, bool(PROTECTED.match(p)) or p.isspace() or not p) for p in _SPLIT.split(text)]


def typos(text: str, seed: int = 0) -> str:
    """About TYPO_RATE of the letters of prose words get a keyboard typo (a neighbour key, a dropped or a doubled
    letter); URLs, @handles, #tags and entities are kept. The draw is seeded by the text itself, so a row gets
    the same typos in every run."""
    rng = random.Random(seed * 1_000_003 + zlib.crc32(text.encode("utf-8")))
    out = []
    for ch, keep in ((c, kept) for piece, kept in _pieces(text) for c in piece):
        low = ch.lower()
        if not keep and low in _NEAR and rng.random() < TYPO_RATE:
            kind = rng.randrange(3)
            if kind == 0:
                near = rng.choice(_NEAR[low])
                out.append(near.upper() if ch.isupper() else near)
            elif kind == 1:
                continue  # dropped
            else:
                out.append(ch + ch)
        else:
            out.append(ch)
    return "".join(out)


_OUTER_MARK = re.compile(r"(?<![^\W_])[%s]+|[%s]+(?![^\W_])" % ((re.escape(string.punctuation),) * 2))


def punctuation(text: str, seed: int = 0) -> str:
    """ASCII punctuation removed where it stands between words or at a word's edge; a mark inside a word or a
    number (don't, self-driving, 24.99) and whole URLs, @handles, #tags and entities are kept (spaces tidied)."""
    out = "".join(piece if keep else _OUTER_MARK.sub("", piece) for piece, keep in _pieces(text))
    return re.sub(r"\s{2,}", " ", out).strip()


def numbers(text: str, seed: int = 0) -> str:
    """Whole numbers 0-20 written as digits become words, and number words become digits."""
    def to_word(m):
        return _NUMBERS[int(m.group())] if int(m.group()) <= 20 else m.group()

    def to_digits(m):
        word = m.group().lower()
        return str(_NUMBERS.index(word)) if word in _NUMBERS else m.group()

    if re.search(r"\b\d+\b", text):
        return re.sub(r"\b\d+\b", to_word, text)
    return re.sub(r"(?i)\b(" + "|".join(_NUMBERS) + r")\b", to_digits, text)


def accents(text: str, seed: int = 0) -> str:
    """Diacritics removed (é -> e), other characters kept."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def contractions(text: str, seed: int = 0) -> str:
    """Contractions expanded (don't -> do not) where the text has any, else expansions contracted."""
    def swap(table):
        pattern = re.compile(r"(?i)\b(" + "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)) + r")\b")

        def one(m):
            new = table[m.group().lower()]
            return new[0].upper() + new[1:] if m.group()[0].isupper() else new
        return pattern.subn(one, text)

    expanded, n = swap(_EXPANSIONS)
    return expanded if n else swap(_CONTRACTIONS)[0]


NEUTRAL_SHARE = 0.05  # a neutral word is in at least this share of the rows (so its independence is measured) ...
NEUTRAL_P = 0.5  # ... and its presence is this far from tied to any label (chi-squared p at least this)


def fit_neutral_words(texts, labels, *, predicted=None) -> dict | None:
    """{"words": (first, last)}: the two most frequent words whose presence is independent of `labels` (n,)
    label ids (the given labels, else the predictions) and of the model's `predicted` ids, by chi-squared tests;
    None when the data have no two. Both: a word the data leave untied can still be one the model leans on
    (a topical hashtag), and adding it would test the shortcut, not neutrality."""
    import numpy as np
    from sklearn.feature_selection import chi2

    from explorer.data.words import word_matrix

    x, words = word_matrix(list(texts), max(2, int(NEUTRAL_SHARE * len(texts))))
    if x is None:
        return None
    untied = np.ones(len(words), bool)
    for ids in (labels, predicted):
        ids = np.asarray(ids) if ids is not None else None
        if ids is None or len(np.unique(ids)) < 2:
            continue
        untied &= np.nan_to_num(chi2(x, ids)[1]) >= NEUTRAL_P
    counts = np.asarray(x.sum(0)).ravel()
    alpha = [j for j in np.argsort(-counts, kind="stable") if words[j].isalpha() and untied[j]]
    return {"words": (str(words[alpha[0]]), str(words[alpha[1]]))} if len(alpha) >= 2 else None


def neutral_words(text: str, seed: int = 0, *, words: tuple[str, str] = ("the", "and")) -> str:
    """Two words the data show to be neutral added, one before and one after (Azimuth's neutral-token test, with
    the words fitted to the data: `fit_neutral_words`)."""
    return f"{words[0]} {text} {words[1]}"


# Transforms whose parameters are read from the data first: name -> fit(texts, label ids, predicted=ids) -> keyword
# arguments
# (None: not applicable to these data).
FITTED = {"neutral_words": fit_neutral_words}

TRANSFORMS = {"lowercase": lowercase, "uppercase": uppercase, "typos": typos, "punctuation": punctuation,
              "numbers": numbers, "accents": accents, "contractions": contractions, "neutral_words": neutral_words}
