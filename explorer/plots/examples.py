"""Pictures of what a page draws once it has run, for the pages that wait for a click (Label audit, Dataset
explanations, Fine-tune): the pages' own renderers on fixed example numbers, each titled as an example."""
from __future__ import annotations

import plotly.graph_objects as go

from .audit import confusion_cells
from .common import label_bars
from .training import training_curves

LABELS = ("negative", "neutral", "positive")  # the demo tweets' labels


def audit_example(t) -> go.Figure:
    """The audit's confusion matrix, given label against predicted: most rows on the diagonal."""
    counts = [[30, 4, 1], [3, 25, 2], [0, 5, 41]]
    return confusion_cells(counts, LABELS, cols=LABELS, title=t("example.audit_title"),
                           x_title=t("audit.predicted_axis"),
                           y_title=t("audit.given_axis"), count_name=t("audit.count"))


def explain_example(t) -> go.Figure:
    """One label's words, by how much they push the prediction toward it over the data."""
    words, shares = ("love", "great", "thanks", "happy", "best"), (0.31, 0.24, 0.12, 0.09, 0.07)
    return label_bars(words, shares, title=t("example.explain_title"), x_title=t("example.word_axis"),
                      y_title=t("example.share_axis"),
                      fmt=".2f")


def finetune_example(t) -> go.Figure:
    """Training and validation loss and accuracy, epoch by epoch."""
    history = [{"epoch": 1, "loss": 0.92, "val_loss": 0.81, "accuracy": 0.62},
               {"epoch": 2, "loss": 0.58, "val_loss": 0.60, "accuracy": 0.74},
               {"epoch": 3, "loss": 0.41, "val_loss": 0.55, "accuracy": 0.78}]
    names = {k: t(f"finetune.metric_{k}") for k in ("loss", "val_loss", "accuracy")}
    return training_curves(history, names, title=t("example.finetune_title"), x_title=t("finetune.epoch_axis"),
                           y_title=t("finetune.value_axis"))
