"""Label audit: which rows of a dataset are probably mislabelled, and what they should say.

Every row gets an out-of-sample prediction: K folds, each training a linear head on the frozen,
cached encoder features of the other folds (head mode's feature cache and losses). Three feature
kinds are tried (first token, last layer's L2-normalised mean, every layer's mean averaged; see
features.py), and the one with the best cross-validated score is used. Confident learning
(cleanlab) then flags the rows whose given label disagrees with those predictions more than the
estimated noise explains. Regression has no classes: rows are ranked by out-of-fold residuals and
flagged when a residual is an outlier.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch
from sklearn.model_selection import KFold, StratifiedKFold

from explorer.data.dataset import DataError, LabeledData
from explorer.model.problem import ProblemType, metrics, score
from explorer.model.features import POOLS, cached_features
from explorer.runtime.budget import check_label_work
from explorer.runtime.jobs import Progress, span
from explorer.results import JsonResult
from explorer.text import i18n

# The pools the audit's cross-validation chooses among. "last" stays out: on the encoders the audit is
# built for (the embedded MiniLM, BERT-style models) it is the [SEP] state, which no head reads, and it
# would cost every audit a fourth K-fold fit; on a decoder-only model the mean pools already read the
# whole text. Head-mode fine-tuning uses "last" where a head reads it.
CANDIDATES = tuple(p for p in POOLS if p != "last")
FOLDS = 5
WEIGHT_DECAY = 0.03  # on standardised features; near sklearn's default strength, fits any encoder's scale
MAX_ITER = 200
OUTLIER_Z = 3.0  # regression: a residual this many robust standard deviations out is flagged


@dataclass(frozen=True)
class AuditNote:
    """Something the user should know about the run, e.g. fewer folds than asked."""
    key: str
    params: dict = field(default_factory=dict)

    def message(self, lang: str = "en") -> str:
        return i18n.t(f"audit.{self.key}", lang, **self.params)


@dataclass(frozen=True, eq=False)
class LabelAudit(JsonResult):
    data: LabeledData
    features: str  # the chosen pool, one of CANDIDATES
    cv_scores: dict  # pool -> cross-validated metrics of the head on it
    folds: int
    oof: np.ndarray  # (n, labels) out-of-fold probabilities (softmax | sigmoid) | (n,) regression predictions
    quality: np.ndarray  # (n,) label quality in [0, 1]; low means suspicious
    flagged: np.ndarray  # (k,) row ids flagged as label issues, most suspicious first
    noise_rate: float
    notes: tuple[AuditNote, ...]
    vectors: np.ndarray  # (n, hidden) the chosen features, for the projector

    @property
    def problem_type(self) -> str:
        return self.data.problem_type

    @property
    def cv_accuracy(self) -> float | None:
        m = self.cv_scores[self.features]
        return m.get("accuracy", m.get("subset_accuracy"))

    def given(self, row: int) -> str | float:
        return _name(self.data, self.data.y[row])

    def suggested(self, row: int) -> str | float:
        value = _name(self.data, self.predicted[row])
        return round(value, self.decimals) if self.problem_type == ProblemType.REGRESSION else value

    @cached_property
    def decimals(self) -> int:
        """Regression: the decimals a suggested value keeps, the given values' own (1 to 4), so 0.138
        is shown beside 0.899, not 0.898568 (rtol: the values are float32)."""
        y = np.asarray(self.data.y, np.float64)
        return next((d for d in range(1, 4) if np.allclose(y, np.round(y, d), rtol=1e-6, atol=1e-9)), 4)

    @property
    def p_given_is_quality(self) -> bool:
        """Single-label quality is cleanlab's self-confidence, which is P(given label) itself: one column."""
        return self.problem_type == ProblemType.SINGLE

    @property
    def predicted(self) -> np.ndarray:
        """(n,) class ids | (n, labels) 0/1 | (n,) values: the out-of-fold prediction per row."""
        if self.problem_type == ProblemType.SINGLE:
            return self.oof.argmax(1)
        if self.problem_type == ProblemType.MULTI:
            return (self.oof >= 0.5).astype(np.float32)
        return self.oof

    @property
    def p_given(self) -> np.ndarray | None:
        """(n,) out-of-fold probability of each row's given label (its whole set, for multi-label)."""
        y = self.data.y
        if self.problem_type == ProblemType.SINGLE:
            return self.oof[np.arange(len(y)), y]
        if self.problem_type == ProblemType.MULTI:
            return np.prod(np.where(y > 0.5, self.oof, 1.0 - self.oof), axis=1)
        return None

    def issues(self) -> list[dict]:
        """The flagged rows, most suspicious first, as the CLI prints them."""
        p = self.p_given
        pairs = self.data.text_pairs
        return [{"row": int(r), "text": self.data.texts[r], **({"text_pair": pairs[r]} if pairs else {}),
                 "given": self.given(r), "suggested": self.suggested(r),
                 "score": round(float(self.quality[r]), 6), "p_given": None if p is None else round(float(p[r]), 6)}
                for r in self.flagged]

    def summary(self) -> dict:
        acc = self.cv_accuracy
        return {"flagged": int(len(self.flagged)), "estimated_noise_rate": round(float(self.noise_rate), 6),
                "folds": self.folds, "cv_accuracy": None if acc is None else round(float(acc), 6),
                "features": self.features,
                "cv_scores": {k: {m: round(v, 6) for m, v in s.items()} for k, s in self.cv_scores.items()},
                "notes": [n.message() for n in self.notes]}

    def to_dict(self) -> dict:
        return {"label_issues": self.issues(), "label_issue_summary": self.summary()}


def _name(data: LabeledData, value) -> str | float:
    if data.problem_type == ProblemType.SINGLE:
        return data.label_names[int(value)]
    if data.problem_type == ProblemType.MULTI:
        return "|".join(n for n, v in zip(data.label_names, value) if v > 0.5)
    return round(float(value), 6)


# ---- folds --------------------------------------------------------------------------------


def fold_plan(data: LabeledData, folds: int = FOLDS) -> tuple[int, tuple[AuditNote, ...]]:
    """The number of folds to use: fewer than asked (with a note) when a class is too small."""
    if folds < 2:
        raise DataError("audit_folds", folds=folds)
    n = len(data.texts)
    if data.problem_type == ProblemType.SINGLE:
        counts = np.bincount(data.y, minlength=len(data.label_names))
        small = int(counts.argmin())
        if counts[small] < 2:
            raise DataError("audit_class_too_small", label=data.label_names[small], count=int(counts[small]))
        if counts[small] < folds:
            return int(counts[small]), (AuditNote("folds_reduced", {"label": data.label_names[small],
                                                                "count": int(counts[small]), "asked": folds,
                                                                "folds": int(counts[small])}),)
        return folds, ()
    if n < 2 * folds:  # each fold must keep at least two rows to predict on
        if n < 4:
            raise DataError("audit_too_few_rows", rows=n)
        return n // 2, (AuditNote("folds_reduced_rows", {"rows": n, "asked": folds, "folds": n // 2}),)
    return folds, ()


def _splits(data: LabeledData, folds: int, seed: int):
    if data.problem_type == ProblemType.SINGLE:
        return StratifiedKFold(folds, shuffle=True, random_state=seed).split(data.y, data.y)
    return KFold(folds, shuffle=True, random_state=seed).split(data.y)


# ---- the head -------------------------------------------------------------------------------


def fit_predict(x_train: torch.Tensor, y_train: np.ndarray, x_test: torch.Tensor, problem_type: str,
                n_out: int) -> np.ndarray:
    """Train a linear head on (standardised) features, predict the held-out rows.

    The problem is convex and the features are cached, so full-batch L-BFGS from zero weights
    reaches the optimum in a fraction of a second, deterministically; no seed, no epochs to pick.
    Returns (m, n_out) probabilities, or (m,) values for regression.
    """
    mu, sd = x_train.mean(0), x_train.std(0) + 1e-6
    xtr, xte = (x_train - mu) / sd, (x_test - mu) / sd
    y = torch.from_numpy(np.asarray(y_train))
    y_mu, y_sd = (float(y.mean()), float(y.std()) + 1e-6) if problem_type == ProblemType.REGRESSION else (0.0, 1.0)
    y = y.long() if problem_type == ProblemType.SINGLE else (y.float() - y_mu) / y_sd
    ptype = ProblemType(problem_type)
    layer = torch.nn.Linear(xtr.shape[1], n_out)
    torch.nn.init.zeros_(layer.weight)
    torch.nn.init.zeros_(layer.bias)
    opt = torch.optim.LBFGS(layer.parameters(), max_iter=MAX_ITER, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ptype.batch_loss(layer(xtr), y) + WEIGHT_DECAY * layer.weight.pow(2).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    with torch.no_grad():
        out = layer(xte)
    if problem_type == ProblemType.SINGLE:
        return torch.softmax(out, -1).numpy()
    if problem_type == ProblemType.MULTI:
        return torch.sigmoid(out).numpy()
    return out[:, 0].numpy() * y_sd + y_mu


def out_of_fold(x: torch.Tensor, data: LabeledData, folds: int, seed: int = 0,
                progress: Progress | None = None) -> np.ndarray:
    """(n, labels) | (n,) predictions for every row from a head that never saw it; `progress(fraction, "i/folds")`
    after each fold."""
    n_out = 1 if data.problem_type == ProblemType.REGRESSION else len(data.label_names)
    shape = (len(data.y),) if data.problem_type == ProblemType.REGRESSION else (len(data.y), n_out)
    oof = np.zeros(shape, np.float32)
    # No torch.set_num_threads(1) here, though the fits are small: calling it from a server's script
    # thread while another thread runs the encoder can deadlock OpenMP (seen in the browser test).
    for i, (train, test) in enumerate(_splits(data, folds, seed)):
        oof[test] = fit_predict(x[train], data.y[train], x[test], data.problem_type, n_out)
        if progress:
            progress((i + 1) / folds, f"{i + 1}/{folds}")
    return oof


def _cv_metrics(data: LabeledData, oof: np.ndarray) -> dict:
    # problem.metrics reads logits: probabilities map to the same argmax, and to the same side of 0.5 as logits of 0.
    logits = oof[:, None] if data.problem_type == ProblemType.REGRESSION else (oof - 0.5 if data.problem_type == ProblemType.MULTI else oof)
    return metrics(data.problem_type, logits, data.y, len(data.label_names))


# ---- confident learning ----------------------------------------------------------------------


def find_issues(data: LabeledData, oof: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(quality (n,), flagged row ids ranked most suspicious first, estimated noise rate)."""
    if data.problem_type == ProblemType.SINGLE:
        from cleanlab.count import estimate_joint
        from cleanlab.filter import find_label_issues
        from cleanlab.rank import get_label_quality_scores

        quality = get_label_quality_scores(data.y, oof)
        # n_jobs=1: cleanlab would otherwise fork a process pool, which is unsafe inside a threaded server
        flagged = find_label_issues(data.y, oof, return_indices_ranked_by="self_confidence", n_jobs=1)
        noise = 1.0 - float(np.trace(estimate_joint(data.y, oof)))
    elif data.problem_type == ProblemType.MULTI:
        from cleanlab.multilabel_classification.filter import find_label_issues
        from cleanlab.multilabel_classification.rank import get_label_quality_scores

        labels = [list(np.flatnonzero(row > 0.5)) for row in data.y]
        quality = get_label_quality_scores(labels, oof)
        flagged = find_label_issues(labels, oof, return_indices_ranked_by="self_confidence", n_jobs=1)
        noise = len(flagged) / max(len(labels), 1)
    else:
        from cleanlab.regression.rank import get_label_quality_scores

        residual = data.y - oof
        # Robust spread (MAD): the outliers we look for must not inflate the yardstick.
        spread = 1.4826 * float(np.median(np.abs(residual - np.median(residual)))) or float(np.std(residual)) or 1.0
        quality = get_label_quality_scores(data.y / spread, oof / spread, method="residual")
        out = np.flatnonzero(np.abs(residual) > OUTLIER_Z * spread)
        flagged = out[np.argsort(quality[out], kind="stable")]
        noise = len(flagged) / max(len(residual), 1)
    return np.asarray(quality, np.float64), np.asarray(flagged, np.int64), noise


# ---- the whole audit -------------------------------------------------------------------------


def audit(ck, data: LabeledData, folds: int = FOLDS, seed: int = 0, max_length: int = 128,
          progress: Progress | None = None, lang: str = "en") -> LabelAudit:
    """Out-of-fold predictions on the best of the feature kinds, then confident learning.
    `progress(fraction, message in lang)` is called as the work goes on."""
    folds, notes = fold_plan(data, folds)
    check_label_work(len(data.texts), len(data.label_names), folds)
    say = progress or (lambda frac, msg: None)
    # The encoder pass dominates; the K-fold fits share the last tenth of the bar.
    encoding = span(say, 0.0, 0.9)
    feats = cached_features(ck, data.texts, max_length, "first", text_pairs=data.text_pairs, progress=lambda frac, msg:
                            encoding(frac, i18n.t("audit.progress_features", lang, done=msg)))
    results = {}
    total = folds * len(CANDIDATES)
    for j, pool in enumerate(CANDIDATES):
        x = cached_features(ck, data.texts, max_length, pool, text_pairs=data.text_pairs)
        fitting = span(say, 0.9 + 0.1 * j / len(CANDIDATES), 0.9 + 0.1 * (j + 1) / len(CANDIDATES))
        oof = out_of_fold(x, data, folds, seed, lambda frac, _msg: fitting(frac, i18n.t(
            "audit.progress_folds", lang, done=j * folds + round(frac * folds), total=total)))
        results[pool] = (oof, _cv_metrics(data, oof), x)
    best = max(CANDIDATES, key=lambda p: score(data.problem_type, results[p][1]))  # ties keep "first"
    oof, _, x = results[best]
    quality, flagged, noise = find_issues(data, oof)
    return LabelAudit(data=data, features=best, cv_scores={p: r[1] for p, r in results.items()}, folds=folds,
                      oof=oof, quality=quality, flagged=flagged, noise_rate=noise, notes=notes,
                      vectors=x.numpy())
