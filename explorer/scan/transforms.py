"""Small perturbations that should not change a label (Giskard's text perturbations, Azimuth's neutral words):
each a pure function of one text, seeded where it draws."""
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


def typos(text: str, seed: int = 0) -> str:
    """About TYPO_RATE of the letters get a keyboard typo (a neighbour key, a dropped or a doubled letter); the
    draw is seeded by the text itself, so a row gets the same typos in every run."""
    rng = random.Random(seed * 1_000_003 + zlib.crc32(text.encode("utf-8")))
    out = []
    for ch in text:
        low = ch.lower()
        if low in _NEAR and rng.random() < TYPO_RATE:
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


def punctuation(text: str, seed: int = 0) -> str:
    """Every ASCII punctuation mark removed (spaces tidied)."""
    out = text.translate(str.maketrans("", "", string.punctuation))
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


def neutral_words(text: str, seed: int = 0) -> str:
    """Polite words added before and after, which should change no label (Azimuth's neutral-token test)."""
    return f"Please, {text} Thank you."


TRANSFORMS = {"lowercase": lowercase, "uppercase": uppercase, "typos": typos, "punctuation": punctuation,
              "numbers": numbers, "accents": accents, "contractions": contractions, "neutral_words": neutral_words}
