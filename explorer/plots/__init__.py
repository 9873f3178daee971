"""Plotly renderers, one module per concept. They take results (numbers, Analysis), never models."""
from .common import label_bars
from .training import confusion_heatmap, training_curves

__all__ = ["confusion_heatmap", "label_bars", "training_curves"]
