"""What an attribution request may be refused with: the one-line AttributionError (a message key and its
parameters), shared by attribution.py, sampled.py and batched.py, below all three."""
from __future__ import annotations

from explorer.text.errors import ExplorerError


class AttributionError(ExplorerError):
    """Bad attribution request; the message is one line, meant for the user."""
