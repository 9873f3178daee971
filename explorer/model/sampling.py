"""Dropout sampled functionally, the one way every head path draws it (named heads, the own head's
real code and its replay): the model stays in eval mode and a seeded generator makes samples repeat."""
from __future__ import annotations

import torch


def sample_dropout(x: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """Dropout drawn from `generator` (keep mask * 1/(1-p)), so no module is ever put in train mode."""
    if p <= 0:
        return x
    if p >= 1:
        return torch.zeros_like(x)
    # Drawn from the (CPU) generator, then moved: the same masks on every device.
    keep = (torch.rand(x.shape, generator=generator) >= p).to(x.device)
    return x * keep / (1.0 - p)
