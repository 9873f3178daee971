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


def problem_type(config) -> str:
    """HF's rule: the config's problem_type if set; else regression when num_labels == 1."""
    if getattr(config, "problem_type", None) in PROBLEM_TYPES:
        return config.problem_type
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
