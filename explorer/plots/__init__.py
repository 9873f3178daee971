"""Plotly renderers, one module per concept. They take results (numbers, Analysis), never models."""
from . import attention, dropout, logits, vectors
from .common import label_bars

__all__ = ["label_bars", "attention", "dropout", "logits", "vectors"]
