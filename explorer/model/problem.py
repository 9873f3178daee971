"""Logits to probabilities, problem types and losses, following HF's rules."""
from __future__ import annotations

from enum import StrEnum

import numpy as np
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, mean_squared_error


# What a problem type predicts: a label's name (single-label); the names over 0.5, maybe none
# (multi-label); the value, or one value per output (regression).
Prediction = str | tuple[str, ...] | float | tuple[float, ...]


class ProblemType(StrEnum):
    """HF's `config.problem_type`, by its exact strings (a member equals its string, so JSON outputs and
    i18n keys built from one stay what they were), with the loss, output function and prediction rule
    that `XxxForSequenceClassification` ties to it."""

    SINGLE = "single_label_classification"
    MULTI = "multi_label_classification"
    REGRESSION = "regression"

    @property
    def loss_class(self) -> type[torch.nn.Module]:
        """The torch loss HF's sequence classifiers compute for this problem type."""
        return _LOSSES[self]

    @property
    def loss_name(self) -> str:
        return self.loss_class.__name__

    @property
    def output(self) -> str:
        """What turns logits into the quantity the loss is about: softmax | sigmoid | none."""
        return {ProblemType.SINGLE: "softmax", ProblemType.MULTI: "sigmoid"}.get(self, "none")

    def probabilities(self, logits: np.ndarray) -> np.ndarray:
        """(..., labels) -> (..., labels): softmax, sigmoid, or the raw value for regression."""
        if self is ProblemType.SINGLE:
            return softmax(logits)
        if self is ProblemType.MULTI:
            return sigmoid(logits)
        return np.asarray(logits, dtype=np.float64)

    def predict(self, logits: np.ndarray, labels: tuple[str, ...]) -> Prediction:
        """(labels,) logits -> the prediction by this problem type's rule: single-label, the argmax's name;
        multi-label, the names whose sigmoid is over 0.5, in id2label order (an empty tuple when none is:
        no label is predicted); regression, the value itself (one per output when there are several)."""
        logits = np.asarray(logits, dtype=np.float64)
        if self is ProblemType.MULTI:
            return tuple(labels[i] for i in np.flatnonzero(sigmoid(logits) > 0.5))
        if self is ProblemType.REGRESSION:
            return float(logits[0]) if logits.shape[-1] == 1 else tuple(float(v) for v in logits)
        return labels[int(logits.argmax())]

    def batch_loss(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """(batch, labels) logits and targets (class ids; 0/1 floats; values) -> the mean loss, with
        HF's shapes (a regression head's one output against the targets)."""
        fn = self.loss_class()
        return fn(logits[:, 0], y) if self is ProblemType.REGRESSION else fn(logits, y)


_LOSSES: dict[ProblemType, type[torch.nn.Module]] = {
    ProblemType.SINGLE: torch.nn.CrossEntropyLoss,
    ProblemType.MULTI: torch.nn.BCEWithLogitsLoss,
    ProblemType.REGRESSION: torch.nn.MSELoss,
}
PROBLEM_TYPES: tuple[ProblemType, ...] = tuple(ProblemType)
# Charts of one bar per label show at most this many: a 10,000-label checkpoint's two bar charts (20,000
# bars with printed values, ~700 kB of figure) took the browser 49 s to draw on the Pipeline page.
TOP_LABELS = 20


def top_labels(values: np.ndarray, k: int = TOP_LABELS) -> np.ndarray:
    """(labels,) -> indices of the labels a chart shows: all of them in id2label order when there are at
    most k, else the k largest values, largest first (softmax and sigmoid keep the logits' order)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) <= k:
        return np.arange(len(values))
    top = np.argpartition(-values, k - 1)[:k]
    return top[np.argsort(-values[top], kind="stable")]


def label_rows(labels, logits, softmax, sigmoid) -> list[dict]:
    """One row per label for a CSV download: every label, in id2label order."""
    return [{"label": name, "logit": float(lg), "softmax": float(sm), "sigmoid": float(sg)}
            for name, lg, sm, sg in zip(labels, logits, softmax, sigmoid)]


def problem_type(config) -> ProblemType:
    """HF's rule: the config's problem_type if set; else regression when num_labels == 1."""
    ptype = getattr(config, "problem_type", None)
    if ptype in PROBLEM_TYPES:
        return ProblemType(ptype)
    return ProblemType.REGRESSION if config.num_labels == 1 else ProblemType.SINGLE


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64) / temperature))


def rounded_to_sum(p: np.ndarray, decimals: int = 2) -> np.ndarray:
    """(labels,) `p` rounded to `decimals` so the shown values keep p's sum (largest remainder): a
    softmax of 0.004, 0.074, 0.922 reads 0.01, 0.07, 0.92, not 0.00, 0.07, 0.92 (0.99). Each value
    moves by less than one unit of the last decimal. Neither numpy nor scipy has this rounding."""
    x = np.asarray(p, np.float64) * 10 ** decimals
    out = np.floor(x)
    short = int(round(x.sum() - out.sum()))
    out[np.argsort(out - x, kind="stable")[:short]] += 1  # largest remainders first, ties by position
    return out / 10 ** decimals


def prediction_text(pred: Prediction, none: str = "none") -> str:
    """A prediction as views show it: a label as is, labels joined by '|', values to 4 decimals, and
    `none` (the caller's translation) for a multi-label prediction of no label."""
    if isinstance(pred, str):
        return pred
    if isinstance(pred, tuple):
        return "|".join(prediction_text(p) for p in pred) if pred else none
    return f"{pred:.4f}"


def loss(logits: np.ndarray, target, ptype: str) -> float:
    """The loss HF's XxxForSequenceClassification would compute for one example, with its loss class
    and its shapes: class indices for single-label, floats shaped like the logits otherwise, and for
    regression the squeezed pair."""
    ptype = ProblemType(ptype)
    z = torch.as_tensor(np.asarray(logits, dtype=np.float32)).reshape(1, -1)  # (1, labels)
    fn = ptype.loss_class()
    if ptype is ProblemType.SINGLE:
        return float(fn(z, torch.tensor([int(target)])))
    if ptype is ProblemType.MULTI:
        return float(fn(z, torch.as_tensor(np.asarray(target, dtype=np.float32)).reshape(1, -1)))
    t = torch.as_tensor(np.asarray(target, dtype=np.float32)).reshape(z.shape)
    return float(fn(z.squeeze(), t.squeeze()))


PIPELINE_FUNCTIONS = ("softmax", "sigmoid", "none")


def pipeline_function(num_labels: int, ptype: str | None, fallback: str | None = None) -> str:
    """What transformers' text-classification pipeline applies by default: none | sigmoid | softmax.
    `ptype` is the config's own problem_type (None when unset, not the type HF's loss infers), and the
    branches are TextClassificationPipeline.postprocess's, in its order: num_labels == 1 gets a sigmoid
    although the loss then is MSE on the raw value; `fallback` is config.function_to_apply, which it reads
    only when neither a problem type nor num_labels >= 1 decides."""
    if ptype == ProblemType.REGRESSION:
        return "none"
    if ptype == ProblemType.MULTI or num_labels == 1:
        return "sigmoid"
    if ptype == ProblemType.SINGLE or num_labels > 1:
        return "softmax"
    fallback = str(fallback or "none").lower()
    return fallback if fallback in PIPELINE_FUNCTIONS else "none"


def pipeline_rule(config) -> str:
    """pipeline_function of a model config, as the pipeline reads it."""
    return pipeline_function(config.num_labels, getattr(config, "problem_type", None),
                             getattr(config, "function_to_apply", None))


def pipeline_scores(logits: np.ndarray, function: str) -> np.ndarray:
    """(labels,) -> (labels,): the scores `pipeline("text-classification", top_k=None)` returns, in
    id2label order (it sorts them by score; a caller keys them by label)."""
    if function == "softmax":
        return softmax(logits)
    if function == "sigmoid":
        return sigmoid(logits)
    return np.asarray(logits, dtype=np.float64)


def single_output_trap(logit: float, target: float, ptype: str | None = None) -> dict[str, float | str]:
    """A one-output head: the model's loss is MSE on the raw number (problem_type defaults to
    regression), while pipeline() reports sigmoid(logit) unless problem_type is set to regression."""
    func = pipeline_function(1, ptype)
    score = float(sigmoid(np.array([logit]))[0]) if func == "sigmoid" else float(logit)
    reg = ProblemType.REGRESSION
    return {"loss_name": reg.loss_name, "loss": loss(np.array([logit]), target, reg),
            "pipeline_function": func, "pipeline_score": score}


def bce_integer_label_errors(logits: np.ndarray, target: int) -> dict[str, str]:
    """Call BCEWithLogits the wrong ways a single-label habit suggests, and return torch's messages:
    'shape' for a class index (1,) against (1, labels), 'dtype' for a one-hot of integers."""
    z = torch.as_tensor(np.asarray(logits, dtype=np.float32)).reshape(1, -1)
    out = {}
    wrong = {
        "shape": torch.tensor([int(target)]),
        "dtype": torch.nn.functional.one_hot(torch.tensor([int(target)]), z.shape[1]),  # int64
    }
    for kind, t in wrong.items():
        try:
            ProblemType.MULTI.loss_class()(z, t)
            out[kind] = ""
        except (ValueError, RuntimeError) as err:
            out[kind] = str(err).strip().splitlines()[0]
    return out


# ---- evaluation -------------------------------------------------------------------------------


def confusion_counts(y_true, y_pred, n_true: int, n_pred: int | None = None) -> np.ndarray:
    """(n_true, n_pred) int64 counts of (true id, predicted id) pairs; the two label sets may differ
    in size (a CSV's labels against a checkpoint's), ids beyond either size are not counted."""
    n_pred = n_true if n_pred is None else n_pred
    size = max(n_true, n_pred, 1)
    counts = confusion_matrix(np.asarray(y_true, np.int64), np.asarray(y_pred, np.int64), labels=np.arange(size))
    return counts[:n_true, :n_pred].astype(np.int64)


def metrics(problem_type: str, logits: np.ndarray, y: np.ndarray, n_labels: int) -> dict:
    """The problem type's validation metrics from (n, labels) logits: accuracy and macro F1; micro/macro
    F1 and subset accuracy of the labels over 0; or the MSE of the one output."""
    if problem_type == ProblemType.REGRESSION:
        return {"mse": float(mean_squared_error(y, logits[:, 0]))}
    if problem_type == ProblemType.MULTI:
        pred = (logits > 0).astype(int)
        return {"f1_micro": float(f1_score(y, pred, average="micro", zero_division=0)),
                "f1_macro": float(f1_score(y, pred, average="macro", zero_division=0)),
                "subset_accuracy": float(accuracy_score(y, pred))}
    pred = logits.argmax(-1)
    return {"accuracy": float(accuracy_score(y, pred)),
            "macro_f1": float(f1_score(y, pred, average="macro", labels=list(range(n_labels)), zero_division=0))}


def score(problem_type: str, m: dict) -> float:
    """Higher is better: the number that picks the best epoch."""
    return {ProblemType.SINGLE: m.get("accuracy", 0.0),
            ProblemType.MULTI: m.get("f1_micro", 0.0)}.get(problem_type, -m.get("mse", 0.0))


def confusion(problem_type: str, logits: np.ndarray, y: np.ndarray, n_labels: int) -> np.ndarray | None:
    """(true, predicted) counts of (n, labels) logits' argmax, single-label only."""
    if problem_type != ProblemType.SINGLE:
        return None
    return confusion_counts(y, logits.argmax(-1), n_labels)
