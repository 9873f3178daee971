"""Token-level views of one analysis: the token table, hiding special tokens, how much [CLS] mixes."""
from __future__ import annotations

import numpy as np

from explorer.model.analysis import Analysis


def token_rows(a: Analysis) -> list[dict]:
    """One row per token: position, id, piece (as explorer/model/readable.py shows it), and whether it is special or continues a word; for a
    sentence pair also its segment (A or B)."""
    rows = []
    for i, (tok, tid, sp, wid) in enumerate(zip(a.shown, a.token_ids, a.special, a.word_ids)):
        cont = not sp and wid is not None and i > 0 and a.word_ids[i - 1] == wid
        rows.append({"position": i, "token": tok, "id": tid, "word": wid, "special": sp, "continues_word": cont,
                     "unknown": bool(a.unknown and a.unknown[i])})
        if a.text_pair:
            rows[-1]["segment"] = "AB"[a.segments[i]]
    return rows


def pair_boundary(segments, hidden=None) -> int | None:
    """Index, among the tokens not `hidden` (a bool per token), of text B's first token; None for one text."""
    hidden = hidden if hidden is not None else (False,) * len(segments)
    shown = [s for s, h in zip(segments, hidden) if not h]
    return next((i for i, s in enumerate(shown) if s == 1), None)


def without_special(values: np.ndarray, special: tuple[bool, ...]) -> np.ndarray:
    """(..., n) -> (..., kept): drop special-token columns and renormalise each row to sum to 1,
    so the remaining shares stay comparable with each other."""
    keep = ~np.asarray(special, dtype=bool)
    kept = np.asarray(values, dtype=np.float64)[..., keep]
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)


def visible(tokens: tuple[str, ...], special: tuple[bool, ...], hide: bool) -> tuple[str, ...]:
    return tuple(t for t, s in zip(tokens, special) if not (hide and s))


def rollout_off_cls(rollout: np.ndarray) -> np.ndarray:
    """(L, n, n) rollout, or its (L, n) [CLS] rows (Analysis.cls_rollout) -> (L,): the share of [CLS]'s
    rollout that comes from other input positions."""
    rows = rollout[:, 0] if rollout.ndim == 3 else rollout
    return 1.0 - rows[:, 0]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na and nb else 0.0


def cls_vs_mean(hidden_states: np.ndarray) -> np.ndarray:
    """(L+1, n, d) -> (L+1,): cosine of the [CLS] vector with the mean of the other tokens, per layer.
    At the embeddings it is low; as layers mix, [CLS] comes to resemble a summary of the text."""
    return np.array([cosine(h[0], h[1:].mean(axis=0)) if len(h) > 1 else 1.0 for h in hidden_states])


def reads_line(a: Analysis, t, quote=str) -> str:
    """One sentence: which token the head's pooling reads (or that it pools over all tokens); `quote`
    makes the token plain text where the sentence is shown (explorer.text.plain.markdown for Markdown)."""
    if a.reads is None:
        return t("arch.reads_all")
    how = t("arch.reads_first") if a.reads == 0 else t("arch.reads_last")
    return t("arch.reads_token", position=a.reads, token=quote(a.shown[a.reads]), how=how)
