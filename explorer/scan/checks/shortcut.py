"""Words the model's predictions hinge on, and whether the labels justify it.

Candidates are words tied to a predicted label by a chi-squared statistic over the rows (contrastive: a frequent
word that every label shares scores near 0), kept where the tie holds after Benjamini-Hochberg. Each is then read
against the given labels by the one rule the Dataset explanations share (`explorer.data.words.word_ties`):
- a **shortcut** is reliance the labels do not justify: the word's rows carry the model's errors (predicted its
  label where the data say otherwise) beyond what rows without it do. Verified on exactly those rows, the ones the
  word could be deciding wrongly: taking the word out, how many leave the label, against a control (a random other
  word taken out of the same rows), with an exact test on the rows where only one of the two flips. A word that
  turns rows against their given labels, verified, is major.
- words the data tie to the label as the model does are what **drives each label**: one info finding.
- without given labels a shortcut cannot be told from meaning: the words relied on most are one info finding that
  says so.
"""
from __future__ import annotations

import re

import numpy as np

from explorer.data.words import MEANING, SHORTCUT, WORD, UNKNOWN, word_matrix, word_ties
from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, classifier
from explorer.scan.forward import run_rows
from explorer.text.errors import Message

CANDIDATES = 20  # shortcut candidates verified, most errors first (bounds the cost: CANDIDATES x ROWS_PER_WORD)
DRIVERS = 3  # words per label verified for "what drives each label"
ROWS_PER_WORD = 50
MIN_ROWS = 3  # a word in fewer rows is too rare to call a pattern
MINOR_FLIPS, MAJOR_FLIPS = 0.10, 0.50  # share of the word's wrong rows that leave the label without the word
ALPHA = 0.05  # the association's false discovery rate, and the removal test's level


def _other_word(text: str, word: str, rng) -> str:
    """A random word of `text` other than `word` (the control's): "" when it has none."""
    others = [w for w in re.findall(WORD, text) if w.casefold() != word.casefold()]
    return str(rng.choice(others)) if others else ""


def without_word(text: str, word: str) -> str:
    """`text` with every occurrence of `word` (case-insensitive, whole word) taken out, spaces tidied."""
    if not word:
        return text
    out = re.sub(rf"(?iu)\b{re.escape(word)}\b", "", text)
    return re.sub(r"\s{2,}", " ", out).strip()


def removal_test(word_flips: np.ndarray, control_flips: np.ndarray) -> float:
    """One-sided exact p that taking the word out flips more rows than taking a random other word out of the same
    rows: a sign test on the rows where exactly one of the two flips (McNemar's exact test)."""
    from scipy.stats import binomtest
    b = int((word_flips & ~control_flips).sum())
    c = int((~word_flips & control_flips).sum())
    return float(binomtest(b, b + c, 0.5, alternative="greater").pvalue) if b + c else 1.0


def candidates(data: ScanData, found: Found):
    """(rows x words presence matrix, every word tie that survives Benjamini-Hochberg, each with its kind
    (shortcut, meaning, unknown) and its column in the matrix)."""
    from scipy.stats import false_discovery_control

    pred = data.predicted
    x, words = word_matrix(list(data.texts), MIN_ROWS)
    given = found.given_ids(data) if data.given is not None else None
    ties = [t for label in np.unique(pred) for t in word_ties(x, words, pred, given, int(label))]
    if not ties:
        return x, []
    q = false_discovery_control([t["p"] for t in ties], method="bh")
    column = {w: j for j, w in enumerate(words)}
    return x, [t | {"column": column[t["word"]]} for t, qv in zip(ties, q) if qv < ALPHA]


@check("shortcut.word", classifier, cost=1.0, needs=READS_LABELS, deeper="pages/attributions.py")
def find_shortcuts(data: ScanData, found: Found, progress) -> list[Finding]:
    pred = data.predicted
    x, ties = candidates(data, found)
    given = found.given_ids(data) if data.given is not None else None
    rng = np.random.default_rng(data.seed)
    shortcuts = sorted((t for t in ties if t["kind"] == SHORTCUT), key=lambda t: (-t["errors"], -t["association"]))
    drivers = [t for label in np.unique(pred) for t in sorted(
        (t for t in ties if t["kind"] != SHORTCUT and t["label"] == label), key=lambda t: -t["association"])[:DRIVERS]]
    jobs = []  # (tie, rows it is verified on)
    for t in shortcuts[:CANDIDATES] + drivers:
        holding = x[:, t["column"]].nonzero()[0]
        holding = holding[pred[holding] == t["label"]]
        if t["kind"] == SHORTCUT:  # the rows the word could be deciding wrongly
            holding = holding[(given[holding] >= 0) & (given[holding] != t["label"])]
        if len(holding) > ROWS_PER_WORD:
            holding = np.sort(rng.choice(holding, ROWS_PER_WORD, replace=False))
        jobs.append((t, holding))
    texts = [without_word(data.texts[i], t["word"]) for t, rows in jobs for i in rows]
    control = [without_word(data.texts[i], _other_word(data.texts[i], t["word"], rng)) for t, rows in jobs for i in rows]
    pairs = [data.pairs[i] for t, rows in jobs for i in rows] if data.pairs is not None else None
    logits, _ = run_rows(data.ck, texts + control, pairs=pairs + pairs if pairs is not None else None,
                         batch_size=data.batch_size, max_length=data.max_length, progress=progress)
    probs = data.problem.probabilities(logits) if len(logits) else logits
    probs, control_probs = probs[:len(texts)], probs[len(texts):]
    found_words, driving, at = [], [], 0
    base = data.probabilities
    for t, held in jobs:
        p, pc = probs[at:at + len(held)], control_probs[at:at + len(held)]
        at += len(held)
        if not len(held):
            continue
        label = t["label"]
        flipped, control_flipped = p.argmax(-1) != label, pc.argmax(-1) != label
        flips, control_rate = float(flipped.mean()), float(control_flipped.mean())
        p_value = removal_test(flipped, control_flipped)
        name = found.name_of(data, label)
        fields = {"word": t["word"], "label": name, "rows": [int(i) for i in held], "rows_with_word": t["rows"],
                  "share_predicted": t["predicted_share"], "share_given": t["given_share"], "errors": t["errors"],
                  "errors_q": t["errors_p"], "effect": round(float(np.mean(base[held, label] - p[:, label])), 4),
                  "flip_rate": round(flips, 4), "control_flip_rate": round(control_rate, 4),
                  "removal_p": round(p_value, 6), "association": round(t["association"], 3), "kind": t["kind"],
                  "read_through_mapping": found.through_mapping}
        if t["kind"] == SHORTCUT:
            if flips < MINOR_FLIPS or p_value >= ALPHA:
                continue  # tied to the errors, but the model does not hinge on it there
            fields["to_given"] = round(float(np.mean(p.argmax(-1) == given[held])), 4)  # back to the data's label
            found_words.append(Finding("shortcut.word", "major" if flips >= MAJOR_FLIPS else "minor",
                                       Message("scan_shortcut_against_labels", word=t["word"], label=name,
                                               n=len(held), flips=f"{flips:.0%}", control=f"{control_rate:.0%}"),
                                       fields))
        elif flips > control_rate and p_value < ALPHA:
            driving.append(fields)
    out = sorted(found_words, key=lambda f: (-f.fields["flip_rate"], -f.fields["effect"]))
    if driving:
        key = "scan_label_drivers" if data.given is not None else "scan_relied_words"
        listing = "; ".join(f"{d['label']}: " + ", ".join(f"'{e['word']}'" for e in driving if e["label"] == d["label"])
                            for d in {d["label"]: d for d in driving}.values())
        out.append(Finding("shortcut.word", "info", Message(key, words=listing),
                           {"words": [{k: d[k] for k in ("word", "label", "flip_rate", "control_flip_rate",
                                                          "share_predicted", "share_given", "kind")} for d in driving],
                            "kind": MEANING if data.given is not None else UNKNOWN,
                            "read_through_mapping": found.through_mapping}))
    return out
