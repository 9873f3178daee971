"""Robustness: the share of rows whose predicted label flips under each small perturbation. Only the rows a
perturbation changes (as the tokenizer reads them) run again, so lowercasing text an uncased tokenizer reads
the same costs nothing and is reported as not applicable, not as a pass."""
from __future__ import annotations

import numpy as np

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, classifier
from explorer.scan.forward import run_rows, token_ids
from explorer.scan.transforms import FITTED, TRANSFORMS
from explorer.text.errors import Message

MINOR, MAJOR = 0.05, 0.10  # flip rates (Giskard's thresholds); major read off the rate's lower confidence bound
CONFIDENCE = 0.95
EXAMPLES = 5


def flips(data: ScanData, name: str, progress=None, found: Found | None = None) -> dict:
    """{flip_rate, rows (changed), flipped, examples} of transform `name`; rows 0 means not applicable."""
    options = {}
    if name in FITTED:
        y = found.given_ids(data) if found is not None and data.given is not None else np.full(data.rows, -1)
        options = FITTED[name](data.texts, np.where(y >= 0, y, data.predicted), predicted=data.predicted)
        if options is None:
            return {"flip_rate": None, "rows": 0, "flipped": [], "examples": []}
    new = [TRANSFORMS[name](t, data.seed, **options) for t in data.texts]
    new_pairs = [TRANSFORMS[name](t, data.seed, **options) for t in data.pairs] if data.pairs is not None else None
    before = token_ids(data.ck, data.texts, pairs=data.pairs, max_length=data.max_length)
    after = token_ids(data.ck, new, pairs=new_pairs, max_length=data.max_length)
    changed = np.array([i for i in range(data.rows) if before[i] != after[i]], dtype=np.int64)
    if not len(changed):
        return {"flip_rate": None, "rows": 0, "flipped": [], "examples": []}
    logits, _ = run_rows(data.ck, [new[i] for i in changed],
                         pairs=[new_pairs[i] for i in changed] if new_pairs is not None else None,
                         batch_size=data.batch_size, max_length=data.max_length, progress=progress)
    moved = changed[logits.argmax(-1) != data.predicted[changed]]
    labels = data.ck.labels
    new_pred = dict(zip(changed.tolist(), logits.argmax(-1).tolist()))
    examples = [{"row": int(i), "text": data.texts[i], "perturbed": new[i], "before": labels[data.predicted[i]],
                 "after": labels[new_pred[int(i)]]} for i in moved[:EXAMPLES]]
    return {"flip_rate": round(len(moved) / len(changed), 4), "rows": int(len(changed)),
            "flipped": [int(i) for i in moved], "examples": examples, **options}


def _check_one(name: str):
    def run(data: ScanData, found: Found, progress) -> list[Finding]:
        result = flips(data, name, progress, found)
        found.results[f"robustness.{name}"] = result
        rate = result["flip_rate"]
        if rate is None:
            # Not a pass: nothing was tested (case on an uncased tokenizer, no punctuation to remove).
            found.not_applicable.append((f"robustness.{name}", Message("scan_robust_na", transform=name)))
            return []
        # Giskard's thresholds on the flip rate; major only where its lower 95% bound (Wilson) clears the bar too:
        # 28 flips in 259 rows is 10.8%, but a rate the rows cannot tell from 8% is no major finding (on large data
        # the two agree).
        from scipy.stats import binomtest
        low = float(binomtest(len(result["flipped"]), result["rows"]).proportion_ci(CONFIDENCE, "wilson").low)
        result["flip_rate_low"] = round(low, 4)
        severity = "major" if low >= MAJOR else "minor" if rate >= MINOR else None
        if severity is None:
            return []
        return [Finding(f"robustness.{name}", severity,
                        Message("scan_robust_flips", transform=name, rate=f"{rate:.0%}", n=len(result["flipped"]),
                                rows=result["rows"]),
                        {"flip_rate": rate, "flip_rate_low": result["flip_rate_low"], "rows": result["flipped"],
                         "changed": result["rows"],
                         "examples": result["examples"]})]
    run.__name__ = f"find_{name}_flips"
    return run


for _name in TRANSFORMS:
    check(f"robustness.{_name}", classifier, cost=1.0, needs=READS_LABELS, deeper="pages/whatif.py")(_check_one(_name))
