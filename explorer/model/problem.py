"""Logits to probabilities, problem types and losses, following HF's rules."""
from __future__ import annotations

import numpy as np
import torch

PROBLEM_TYPES = ("single_label_classification", "multi_label_classification", "regression")
LOSS_NAMES = {
    "single_label_classification": "CrossEntropyLoss",
    "multi_label_classification": "BCEWithLogitsLoss",
    "regression": "MSELoss",
}
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


def problem_type(config) -> str:
    """HF's rule: the config's problem_type if set; else regression when num_labels == 1."""
    ptype = getattr(config, "problem_type", None)
    if ptype in PROBLEM_TYPES:
        return ptype
    return "regression" if config.num_labels == 1 else "single_label_classification"


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64) / temperature))


def probabilities(logits: np.ndarray, ptype: str) -> np.ndarray:
    """What the model's own loss implies: softmax, sigmoid, or the raw value for regression."""
    if ptype == "single_label_classification":
        return softmax(logits)
    if ptype == "multi_label_classification":
        return sigmoid(logits)
    return np.asarray(logits, dtype=np.float64)


def predicted(logits: np.ndarray, labels: tuple[str, ...], ptype: str) -> str:
    """A label name: argmax for single-label; for multi-label the labels over 0.5 joined by '|'
    (the top one when none is); for regression the only label."""
    logits = np.asarray(logits)
    if ptype == "multi_label_classification":
        on = [labels[i] for i in np.flatnonzero(sigmoid(logits) > 0.5)]
        return "|".join(on) if on else labels[int(logits.argmax())]
    return labels[int(logits.argmax())]


def loss(logits: np.ndarray, target, ptype: str) -> float:
    """The loss HF's XxxForSequenceClassification would compute for one example."""
    z = torch.as_tensor(np.asarray(logits, dtype=np.float32)).reshape(1, -1)
    if ptype == "single_label_classification":
        return float(torch.nn.functional.cross_entropy(z, torch.tensor([int(target)])))
    if ptype == "multi_label_classification":
        t = torch.as_tensor(np.asarray(target, dtype=np.float32)).reshape(1, -1)
        return float(torch.nn.functional.binary_cross_entropy_with_logits(z, t))
    t = torch.as_tensor(np.asarray(target, dtype=np.float32)).reshape(z.shape)
    return float(torch.nn.functional.mse_loss(z.squeeze(), t.squeeze()))


def pipeline_function(num_labels: int, ptype: str | None) -> str:
    """What transformers' text-classification pipeline applies by default (its own rule, which
    differs from the loss's rule for num_labels == 1): none | sigmoid | softmax."""
    if ptype == "regression":
        return "none"
    if ptype == "multi_label_classification" or num_labels == 1:
        return "sigmoid"
    return "softmax"


def single_output_trap(logit: float, target: float, ptype: str | None = None) -> dict[str, float | str]:
    """A one-output head: the model's loss is MSE on the raw number (problem_type defaults to
    regression), while pipeline() reports sigmoid(logit) unless problem_type is set to regression."""
    func = pipeline_function(1, ptype)
    score = float(sigmoid(np.array([logit]))[0]) if func == "sigmoid" else float(logit)
    return {"loss_name": "MSELoss", "loss": loss(np.array([logit]), target, "regression"),
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
            torch.nn.BCEWithLogitsLoss()(z, t)
            out[kind] = ""
        except (ValueError, RuntimeError) as err:
            out[kind] = str(err).strip().splitlines()[0]
    return out
