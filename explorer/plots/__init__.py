"""Plotly renderers, one module per concept. They take results (numbers, Analysis), never models."""
from . import attention, dropout, examples, logits, vectors
from .common import label_bars
from .training import confusion_heatmap, training_curves

__all__ = ["attention", "confusion_heatmap", "dropout", "examples", "label_bars", "logits", "training_curves", "vectors"]
