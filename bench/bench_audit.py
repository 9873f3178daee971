"""Label audit: how well it finds planted label errors, and what it costs beyond the feature pass.

Data: 5,000 demo tweets that several annotators labelled unanimously (`demo_frame(min_confidence=1.0,
single_annotator=False)`: corpus confidence exactly 1.0, single-annotator rows excluded), 3 balanced
classes (negative, neutral, positive; 1,667/1,667/1,666), chosen without the model or the flips.
10% of their labels are flipped to another class, uniformly, for flip seeds 0, 1 and 2.
Quality: precision among the N most suspicious rows (N = rows flipped) and recall of the flagged set,
each the mean over the 3 flip seeds (the features are computed once), against cleanlab's defaults
(CleanLearning with sklearn's LogisticRegression, 5 folds) on the same features, in the same run.
Even unanimous crowd labels hold some errors, so some "false" flags are real: precision is a lower
bound. The bound's reference: the audit's own head trained on the unflipped labels (which no real
audit has), ranking rows by the probability of their flipped label.
Speed: the whole audit (features, 15 K-fold fits, confident learning) against the feature pass alone.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from bench.timing import row
from explorer.data.audit import audit, out_of_fold
from explorer.data.dataset import LabeledData, demo_frame, prepare, read_csv
from explorer.model.checkpoints import load_checkpoint
from explorer.model import features
from explorer.model.features import encoder_features

ROWS = 5000
FLIP = 0.10
SEED = 0
FLIP_SEEDS = (0, 1, 2)


def clean_data() -> LabeledData:
    df = demo_frame(per_class=-(-ROWS // 3), seed=SEED, min_confidence=1.0, single_annotator=False)
    return prepare(read_csv(df.head(ROWS).to_csv(index=False).encode()))


def flip(data: LabeledData, seed: int) -> tuple[LabeledData, np.ndarray]:
    """(the data with FLIP of its labels moved to another class, boolean mask of the flipped rows)."""
    rng = np.random.default_rng(seed)
    flipped = rng.choice(len(data.y), int(FLIP * len(data.y)), replace=False)
    y = data.y.copy()
    y[flipped] = (y[flipped] + rng.integers(1, len(data.label_names), len(flipped))) % len(data.label_names)
    truth = np.zeros(len(y), bool)
    truth[flipped] = True
    return dataclasses.replace(data, y=y), truth


def _precision(quality: np.ndarray, truth: np.ndarray) -> float:
    """Precision among the N lowest-quality rows, N = rows flipped."""
    return float(truth[np.argsort(quality, kind="stable")[:int(truth.sum())]].mean())


def _recall(flagged: np.ndarray, truth: np.ndarray) -> float:
    return float(truth[flagged].sum() / truth.sum())


def _baseline(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import warnings

    from cleanlab.classification import CleanLearning
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LogisticRegression's default max_iter warns; defaults are the point
        issues = CleanLearning(LogisticRegression(), seed=SEED, verbose=False).find_label_issues(x, y)
    return issues["label_quality"].to_numpy(), np.flatnonzero(issues["is_label_issue"].to_numpy())


def _fmt(values) -> str:
    return "/".join(f"{v:.2f}" for v in values)


def run() -> list[dict]:
    ck = load_checkpoint("minilm")
    clean = clean_data()
    noisy, _ = flip(clean, FLIP_SEEDS[0])
    feature_s = audit_s = float("inf")
    for _ in range(2):  # interleaved best-of-2: the shared CPU swings single runs by tens of percent
        t0 = time.perf_counter()
        encoder_features(ck, list(noisy.texts))
        feature_s = min(feature_s, time.perf_counter() - t0)
        features._FEATURES.clear()  # the audit pays for its own feature pass
        t0 = time.perf_counter()
        audit(ck, noisy)
        audit_s = min(audit_s, time.perf_counter() - t0)
    per_seed, pools, flagged = [], [], []
    for seed in FLIP_SEEDS:  # the texts are the same, so the features come from the cache
        data, truth = flip(clean, seed)
        found = audit(ck, data)
        b_quality, b_flagged = _baseline(found.vectors, data.y)
        # The reference: the same head trained on the unflipped labels, ranking by p(flipped label).
        oof = out_of_fold(features.cached_features(ck, data.texts, 128, found.features), clean, found.folds)
        bound = oof[np.arange(len(data.y)), data.y]
        per_seed.append((_precision(found.quality, truth), _recall(found.flagged, truth),
                         _precision(b_quality, truth), _recall(b_flagged, truth), _precision(bound, truth)))
        pools.append(found.features)
        flagged.append((len(found.flagged), len(b_flagged)))
    p, r, bp, br, ref = np.array(per_seed).T
    n, seeds = len(clean.texts), len(FLIP_SEEDS)
    return [
        row(f"audit top-N precision, {n} unanimous tweets, 10% flipped, mean of {seeds} flip seeds "
            f"(per seed {_fmt(p)}; baseline {_fmt(bp)}; head trained on unflipped labels {_fmt(ref)}; "
            f"features {'/'.join(pools)})", p.mean(), bp.mean(), ">= 0.80 and >= cleanlab+LR",
            p.mean() >= 0.80 and p.mean() >= bp.mean(), unit="prec"),
        row(f"audit recall of the flagged set, mean of {seeds} seeds (per seed {_fmt(r)}, baseline {_fmt(br)}; "
            f"flagged {'/'.join(str(a) for a, _ in flagged)} vs {'/'.join(str(b) for _, b in flagged)})",
            r.mean(), br.mean(), ">= 0.85 and >= cleanlab+LR", r.mean() >= 0.85 and r.mean() >= br.mean(), unit="rec"),
        row(f"audit throughput vs feature pass alone, {n} rows (rows/s)", n / audit_s, n / feature_s,
            "ratio >= 0.77 (<= 1.3x)", audit_s <= 1.3 * feature_s, unit="r/s"),
    ]
