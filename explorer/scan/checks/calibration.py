"""Calibration against the given labels (read through a found mapping): expected calibration error over 15
equal-width bins of the top probability (Guo et al. 2017), a temperature fitted by NLL on one half of the rows
and judged on the other, and Giskard's over- and underconfidence rates."""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import Message

BINS = 15
MINOR_ECE, MAJOR_ECE = 0.05, 0.15
RATE = 0.10  # Giskard's threshold on the over- and underconfidence rates
UNDER_RATIO = 0.90  # underconfident: the second probability is at least this share of the first (Giskard)


def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = BINS) -> tuple[float, list[dict]]:
    """(ECE, one dict per non-empty bin: lo, hi, rows, confidence, accuracy). Bins are (lo, hi], the first
    [0, hi]: a top probability of exactly 1/bins falls in the first."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    total, out = 0.0, []
    for b in range(bins):
        m = which == b
        if not m.any():
            continue
        conf, acc = float(confidence[m].mean()), float(correct[m].mean())
        total += m.mean() * abs(acc - conf)
        out.append({"lo": float(edges[b]), "hi": float(edges[b + 1]), "rows": int(m.sum()), "confidence": conf,
                    "accuracy": acc})
    return float(total), out


def nll(logits: np.ndarray, y: np.ndarray, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of labels `y` under softmax(logits / temperature)."""
    if not len(y):
        return float("nan")
    # max(0, ...): a rounding error on a perfect fit must not read as a negative likelihood
    return max(0.0, float(-log_softmax(logits / temperature, axis=-1)[np.arange(len(y)), y].mean()))


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The temperature with the least NLL on (logits, y), searched on log T in [-3, 3]."""
    if not len(y):
        return 1.0
    res = minimize_scalar(lambda s: nll(logits, y, float(np.exp(s))), bounds=(-3.0, 3.0), method="bounded")
    return float(np.exp(res.x))


def overconfidence_threshold(n_labels: int) -> float:
    """Giskard's default gap between the predicted and the true label's probability, by number of labels."""
    n = n_labels
    return 1 / (3e-1 * (n - 2) + 2 - 1e-3 * (n - 2) ** 2)


def calibration(data: ScanData, found: Found) -> dict:
    y = found.given_ids(data)
    keep = np.flatnonzero(y >= 0)
    logits, y = data.logits[keep], y[keep]
    p = data.probabilities[keep]
    top = p.max(-1)
    correct = p.argmax(-1) == y
    value, bins = ece(top, correct)
    rng = np.random.default_rng(data.seed)
    order = rng.permutation(len(y))
    fit, held = order[: len(y) // 2], order[len(y) // 2:]
    t = fit_temperature(logits[fit], y[fit])
    gap = top - p[np.arange(len(y)), y]  # (n,) 0 where the prediction is right
    wrong = ~correct
    over = wrong & (gap > overconfidence_threshold(p.shape[1]))
    two = -np.sort(-p, axis=-1)[:, :2]
    under = two[:, 1] / np.maximum(two[:, 0], 1e-12) > UNDER_RATIO
    # No held-out row (no given label the checkpoint's names match): the NLL of an empty set is undefined, None
    undefined = not len(held)
    return {"ece": round(value, 6), "bins": BINS, "temperature": round(t, 6),
            "nll": None if undefined else round(nll(logits[held], y[held]), 6),
            "nll_scaled": None if undefined else round(nll(logits[held], y[held], t), 6),
            "rows": int(len(y)), "reliability": bins,
            "overconfident_rows": keep[over].tolist(), "overconfidence_rate": round(float(over.sum() / max(wrong.sum(), 1)), 6),
            "underconfident_rows": keep[under].tolist(), "underconfidence_rate": round(float(under.mean()) if len(y) else 0.0, 6)}


def _with_labels(data: ScanData) -> str | None:
    return labelled_single(data)


@check("calibration.ece", _with_labels, cost=0.0, needs=READS_LABELS, deeper="pages/logits.py")
def find_miscalibration(data: ScanData, found: Found, progress) -> list[Finding]:
    c = calibration(data, found)
    found.results["calibration.ece"] = c
    if not c["rows"]:  # the reason its figures are null
        found.not_applicable.append(("calibration.ece", Message("scan_calibration_no_rows")))
        return []
    value = c["ece"]
    severity = "major" if value >= MAJOR_ECE else "minor" if value >= MINOR_ECE else "info"
    return [Finding("calibration.ece", severity,
                    Message("scan_ece", ece=f"{value:.3f}", t=f"{c['temperature']:.2f}", nll=f"{c['nll']:.3f}",
                            nll_scaled=f"{c['nll_scaled']:.3f}"),
                    {k: c[k] for k in ("ece", "bins", "temperature", "nll", "nll_scaled")}
                    | {"read_through_mapping": found.through_mapping})]


@check("calibration.overconfidence", _with_labels, cost=0.0, needs=("calibration.ece",), deeper="pages/logits.py")
def find_overconfidence(data: ScanData, found: Found, progress) -> list[Finding]:
    c = found.result("calibration.ece") or calibration(data, found)
    rate = c["overconfidence_rate"]
    if rate < RATE or not c["overconfident_rows"]:
        return []
    return [Finding("calibration.overconfidence", "major" if rate >= 2 * RATE else "minor",
                    Message("scan_overconfident", rate=f"{rate:.0%}", n=len(c["overconfident_rows"])),
                    {"rate": rate, "rows": c["overconfident_rows"]})]


@check("calibration.underconfidence", _with_labels, cost=0.0, needs=("calibration.ece",), deeper="pages/logits.py")
def find_underconfidence(data: ScanData, found: Found, progress) -> list[Finding]:
    c = found.result("calibration.ece") or calibration(data, found)
    rate = c["underconfidence_rate"]
    if rate < RATE:
        return []
    return [Finding("calibration.underconfidence", "major" if rate >= 2 * RATE else "minor",
                    Message("scan_underconfident", rate=f"{rate:.0%}", n=len(c["underconfident_rows"])),
                    {"rate": rate, "rows": c["underconfident_rows"]})]
