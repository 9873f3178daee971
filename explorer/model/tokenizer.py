"""A tokenizer shared by every session, safe to call from many threads at once.

HF fast tokenizers keep truncation and padding as state on their Rust backend: every call sets it
for itself and leaves it set. Two sessions tokenizing at once could each encode under the other's
settings (a 600-token text untruncated into a 512-position model), and the shared object drifts
(128 → None → 512). `share(tok)` makes each encode of `tok` atomic (one lock per tokenizer) and
puts the backend's settings back afterwards, so the shared tokenizer never changes. Fine-tuning
works on a private copy (`private`), which its Trainer may set as it likes.
"""
from __future__ import annotations

import copy
import threading
import types
import weakref

_LOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tokenizer -> RLock
_GUARD = threading.Lock()


def share(tok):
    """`tok`, its encodes made atomic and state-preserving. Slow tokenizers keep no backend state."""
    if getattr(tok, "is_fast", False):
        # A bound method, so a deepcopy of the tokenizer rebinds it to the copy.
        tok._encode_plus = types.MethodType(_encode_plus, tok)
    return tok


def private(tok):
    """A copy of `tok` for one job (e.g. fine-tuning) that nobody else calls."""
    return copy.deepcopy(tok)


def state(tok) -> tuple:
    """(truncation, padding) settings of the backend; None where the tokenizer has no backend."""
    backend = tok.backend_tokenizer if getattr(tok, "is_fast", False) else None
    return (backend.truncation, backend.padding) if backend is not None else (None, None)


def _lock(tok) -> threading.RLock:
    with _GUARD:
        lock = _LOCKS.get(tok)
        if lock is None:
            lock = _LOCKS[tok] = threading.RLock()
        return lock


def _encode_plus(self, *args, **kwargs):
    backend = self.backend_tokenizer
    with _lock(self):
        truncation, padding = backend.truncation, backend.padding
        try:
            return type(self)._encode_plus(self, *args, **kwargs)
        finally:
            if truncation is None:
                backend.no_truncation()
            else:
                backend.enable_truncation(**truncation)
            if padding is None:
                backend.no_padding()
            else:
                backend.enable_padding(**padding)
