"""Words the model's predictions hinge on. Candidates are words tied to a predicted label by a chi-squared statistic
over the rows (contrastive: a frequent word that every label shares scores near 0, where a raw count would rank it
first), kept where the tie holds after a Benjamini-Hochberg correction over every word tested. Each is verified
by taking the word out of the rows that hold it and running them again, against a control: a random other word
taken out of the same rows (in a short text, taking out any word can tip a borderline row)."""
from __future__ import annotations

import re

import numpy as np

from explorer.data.words import WORD, contrastive_words, word_matrix
from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, classifier
from explorer.scan.forward import run_rows
from explorer.text.errors import Message

CANDIDATES = 20  # words verified, strongest association first (bounds the cost: CANDIDATES x ROWS_PER_WORD rows)
ROWS_PER_WORD = 50
MIN_ROWS = 3  # a word in fewer rows is too rare to call a pattern
MINOR_FLIPS, MAJOR_FLIPS = 0.10, 0.50  # share of its rows whose label flips without the word
MINOR_EXCESS, MAJOR_EXCESS = 0.10, 0.30  # ... beyond the share that flips without a random other word
ALPHA = 0.05  # the association's false discovery rate


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


@check("shortcut.word", classifier, cost=1.0, needs=READS_LABELS, deeper="pages/attributions.py")
def find_shortcuts(data: ScanData, found: Found, progress) -> list[Finding]:
    pred = data.predicted
    x, words = word_matrix(list(data.texts), MIN_ROWS)
    from scipy.stats import false_discovery_control

    tested = [(score, word, int(label), rows, share, p) for label in np.unique(pred)
              for word, score, rows, share, p in contrastive_words(x, words, pred, int(label))]
    q = false_discovery_control([c[5] for c in tested], method="bh") if tested else []
    candidates = sorted((c[:5] for c, qv in zip(tested, q) if qv < ALPHA), key=lambda c: -c[0])[:CANDIDATES]
    rng = np.random.default_rng(data.seed)
    index = {w: j for j, w in enumerate(words)}
    jobs = []  # (candidate, rows) with the word, predicted its label
    for c in candidates:
        holding = x[:, index[c[1]]].nonzero()[0]
        holding = holding[pred[holding] == c[2]]
        if len(holding) > ROWS_PER_WORD:
            holding = np.sort(rng.choice(holding, ROWS_PER_WORD, replace=False))
        jobs.append((c, holding))
    texts = [without_word(data.texts[i], c[1]) for c, rows in jobs for i in rows]
    control = [without_word(data.texts[i], _other_word(data.texts[i], c[1], rng)) for c, rows in jobs for i in rows]
    pairs = [data.pairs[i] for c, rows in jobs for i in rows] if data.pairs is not None else None
    logits, _ = run_rows(data.ck, texts + control, pairs + pairs if pairs is not None else None,
                         batch_size=data.batch_size, max_length=data.max_length, progress=progress)
    probs = data.problem.probabilities(logits) if len(logits) else logits
    probs, control_probs = probs[:len(texts)], probs[len(texts):]
    findings, at = [], 0
    base = data.probabilities
    for (score, word, label, rows, share), held in jobs:
        p, pc = probs[at:at + len(held)], control_probs[at:at + len(held)]
        at += len(held)
        if not len(held):
            continue
        drop = float(np.mean(base[held, label] - p[:, label]))
        flips = float(np.mean(p.argmax(-1) != label))
        excess = flips - float(np.mean(pc.argmax(-1) != label))
        if flips < MINOR_FLIPS or excess < MINOR_EXCESS:
            continue
        name = found.name_of(data, label)
        fields = {"word": word, "label": name, "rows": [int(i) for i in held], "rows_with_word": rows,
                  "share_predicted": round(share, 4), "effect": round(drop, 4), "flip_rate": round(flips, 4),
                  "control_flip_rate": round(flips - excess, 4), "association": round(score, 3),
                  "read_through_mapping": found.through_mapping}
        major = flips >= MAJOR_FLIPS and excess >= MAJOR_EXCESS
        findings.append(Finding("shortcut.word", "major" if major else "minor",
                                Message("scan_shortcut", word=word, label=name, n=rows, share=f"{share:.0%}",
                                        flips=f"{flips:.0%}", drop=f"{drop:.2f}"), fields))
    return sorted(findings, key=lambda f: (-f.fields["flip_rate"], -f.fields["effect"]))
