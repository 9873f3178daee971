"""Calibration against the given labels, read through a found mapping: the expected calibration error over 15
equal-width bins of the top probability (as Guo and others, 2017, define it), a temperature fitted by NLL on one half of the rows
and judged on the other, and Giskard's over- and underconfidence rates."""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from explorer.scan.base import READS_LABELS, Found, Finding, ScanData, check, labelled_single
from explorer.text.errors import Message

BINS = 15
MINOR_ECE, MAJOR_ECE = 0.05, 0.15
RATE = 0.10  # Giskard's threshold: a slice's rate at least this much above the dataset's own rate (relative)
WORST_ROWS = 20  # the most confident wrong rows a miscalibration finding points at
MIN_FLAGGED = 20  # Giskard's least count of flagged rows in a slice
ALPHA = 0.05  # the slices' false discovery rate (as the slices check)
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
    if not len(y):  # no row's label names one of the checkpoint's: nothing to measure (JSON null, not NaN)
        return {"ece": None, "bins": BINS, "temperature": None, "nll": None, "nll_scaled": None, "rows": 0,
                "reliability": [], "overconfident_rows": [], "confident_wrong_rows": [], "overconfidence_rate": None, "underconfident_rows": [],
                "underconfidence_rate": None}
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
    wrong_rows = np.flatnonzero(wrong)
    confident_wrong = keep[wrong_rows[np.argsort(-top[wrong_rows], kind="stable")]]  # most confident first
    two = -np.sort(-p, axis=-1)[:, :2]
    under = two[:, 1] / np.maximum(two[:, 0], 1e-12) > UNDER_RATIO
    # No held-out row (no given label the checkpoint's names match): the NLL of an empty set is undefined, None
    undefined = not len(held)
    return {"ece": round(value, 6), "bins": BINS, "temperature": round(t, 6),
            "nll": None if undefined else round(nll(logits[held], y[held]), 6),
            "nll_scaled": None if undefined else round(nll(logits[held], y[held], t), 6),
            "rows": int(len(y)), "reliability": bins,
            "overconfident_rows": keep[over].tolist(), "overconfidence_rate": round(float(over.sum() / max(wrong.sum(), 1)), 6),
            "confident_wrong_rows": confident_wrong.tolist(),
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
    changes = c["nll"] is not None and f"{c['nll']:.3f}" != f"{c['nll_scaled']:.3f}"
    message = (Message("scan_ece", ece=f"{value:.3f}", t=f"{c['temperature']:.2f}", nll=f"{c['nll']:.3f}",
                       nll_scaled=f"{c['nll_scaled']:.3f}") if changes else Message("scan_ece_alone", ece=f"{value:.3f}"))
    fields = {k: c[k] for k in ("ece", "bins", "temperature", "nll", "nll_scaled")}
    if severity != "info":  # the rows that make it: the most confident wrong predictions, most confident first
        fields["rows"] = c["confident_wrong_rows"][:WORST_ROWS]
    return [Finding("calibration.ece", severity, message, fields | {"read_through_mapping": found.through_mapping})]


def confidence_slices(data: ScanData, found: Found, flagged: np.ndarray, among: np.ndarray) -> list[dict]:
    """Giskard's slice rule for over- and underconfidence: the rate of `flagged` rows among the `among` rows of
    a slice (the scan's slices: length quartiles and frequent words) against the same rate over the dataset; a
    slice is kept where it holds at least MIN_FLAGGED flagged rows, stands RATE above the dataset's rate
    (relative), and, unlike Giskard, where a one-sided Fisher test of the slice against the rest survives
    Benjamini-Hochberg over every slice tested (a 10% relative excess on a few dozen rows is noise)."""
    from scipy.stats import false_discovery_control, fisher_exact
    from explorer.scan.checks.slices import slice_masks

    reference = flagged[among].mean() if among.any() else 0.0
    if reference == 0:
        return []
    tested = []
    for name, m in slice_masks(data).items():
        inside, rest = m & among, ~m & among
        if flagged[inside].sum() < MIN_FLAGGED or not rest.any():
            continue
        rate = float(flagged[inside].mean())
        a, b = int(flagged[inside].sum()), int((~flagged[inside]).sum())
        c, d = int(flagged[rest].sum()), int((~flagged[rest]).sum())
        p = fisher_exact([[a, b], [c, d]], alternative="greater").pvalue
        tested.append({"slice": name, "rate": round(rate, 4), "reference": round(float(reference), 4),
                       "relative_excess": round(float(rate / reference - 1), 4), "p": float(p),
                       "rows": np.flatnonzero(inside & flagged).tolist()})
    if not tested:
        return []
    q = false_discovery_control([t["p"] for t in tested], method="bh")
    out = []
    for t, qv in zip(tested, q):
        if t["relative_excess"] > RATE and qv < ALPHA:
            out.append({k: v for k, v in t.items() if k != "p"} | {"q_value": round(float(qv), 6)})
    return sorted(out, key=lambda t: -t["relative_excess"])


def _slice_findings(check_id: str, key: str, data: ScanData, found: Found, flagged_key: str) -> list[Finding]:
    c = found.result("calibration.ece") or calibration(data, found)
    y = found.given_ids(data)
    keep = y >= 0
    flagged = np.zeros(data.rows, bool)
    flagged[c[flagged_key]] = True
    among = keep & (data.predicted != y) if check_id == "calibration.overconfidence" else keep
    out = []
    for s in confidence_slices(data, found, flagged, among):
        major = s["relative_excess"] > 2 * RATE
        out.append(Finding(check_id, "major" if major else "minor",
                           Message(key, slice=s["slice"], rate=f"{s['rate']:.0%}", reference=f"{s['reference']:.0%}",
                                   n=len(s["rows"])),
                           s | {"read_through_mapping": found.through_mapping}))
    return out


@check("calibration.overconfidence", _with_labels, cost=0.0, needs=("calibration.ece",), deeper="pages/logits.py")
def find_overconfidence(data: ScanData, found: Found, progress) -> list[Finding]:
    """Slices whose wrong predictions are overconfident more often than the dataset's wrong predictions are."""
    return _slice_findings("calibration.overconfidence", "scan_overconfident_slice", data, found,
                           "overconfident_rows")


@check("calibration.underconfidence", _with_labels, cost=0.0, needs=("calibration.ece",), deeper="pages/logits.py")
def find_underconfidence(data: ScanData, found: Found, progress) -> list[Finding]:
    """Slices whose predictions are underconfident (the top two labels almost tied) more often than the dataset's."""
    return _slice_findings("calibration.underconfidence", "scan_underconfident_slice", data, found,
                           "underconfident_rows")
