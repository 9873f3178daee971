"""Words the model's predictions hinge on: candidates tied to a predicted label by a chi-squared statistic over
the rows (a contrastive score, so a frequent word that every label shares scores near 0, where a raw count would
rank it first), each verified by taking the word out of the rows that hold it and running them again."""
from __future__ import annotations

import re

import numpy as np

from explorer.data.words import contrastive_words, word_matrix
from explorer.scan.base import Found, Finding, ScanData, check, classifier
from explorer.scan.forward import run_rows
from explorer.text.errors import Message

CANDIDATES = 20  # words verified, strongest association first (bounds the cost: CANDIDATES x ROWS_PER_WORD rows)
ROWS_PER_WORD = 50
MIN_ROWS = 3  # a word in fewer rows is too rare to call a pattern
MINOR_FLIPS, MAJOR_FLIPS = 0.10, 0.50  # share of its rows whose label flips without the word


def without_word(text: str, word: str) -> str:
    """`text` with every occurrence of `word` (case-insensitive, whole word) taken out, spaces tidied."""
    out = re.sub(rf"(?iu)\b{re.escape(word)}\b", "", text)
    return re.sub(r"\s{2,}", " ", out).strip()


@check("shortcut.word", classifier, cost=1.0)
def find_shortcuts(data: ScanData, found: Found, progress) -> list[Finding]:
    pred = data.predicted
    x, words = word_matrix(list(data.texts), MIN_ROWS)
    candidates = []
    for label in np.unique(pred):
        for word, score, rows, share in contrastive_words(x, words, pred, int(label), CANDIDATES):
            candidates.append((score, word, int(label), rows, share))
    candidates = sorted(candidates, key=lambda c: -c[0])[:CANDIDATES]
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
    pairs = [data.pairs[i] for c, rows in jobs for i in rows] if data.pairs is not None else None
    logits, _ = run_rows(data.ck, texts, pairs, batch_size=data.batch_size, max_length=data.max_length,
                         progress=progress)
    probs = data.problem.probabilities(logits) if len(texts) else logits
    findings, at = [], 0
    base = data.probabilities
    for (score, word, label, rows, share), held in jobs:
        p = probs[at:at + len(held)]
        at += len(held)
        if not len(held):
            continue
        drop = float(np.mean(base[held, label] - p[:, label]))
        flips = float(np.mean(p.argmax(-1) != label))
        if flips < MINOR_FLIPS:
            continue
        name = found.name_of(data, label)
        fields = {"word": word, "label": name, "rows": [int(i) for i in held], "rows_with_word": rows,
                  "share_predicted": round(share, 4), "effect": round(drop, 4), "flip_rate": round(flips, 4),
                  "association": round(score, 3), "read_through_mapping": found.through_mapping}
        findings.append(Finding("shortcut.word", "major" if flips >= MAJOR_FLIPS else "minor",
                                Message("scan_shortcut", word=word, label=name, n=rows, share=f"{share:.0%}",
                                        flips=f"{flips:.0%}", drop=f"{drop:.2f}"), fields))
    return sorted(findings, key=lambda f: (-f.fields["flip_rate"], -f.fields["effect"]))
