"""Tiny classifiers for the scan against a baseline (tests/test_scan_baseline*.py): the tiny models of
tests/conftest.py with their heads centred and scaled on the test rows, so that each predicts every label on some
rows, and a copy of one with its id2label rotated (every prediction renamed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tests import scan_models
from tests.conftest import TINY_LABELS

WORDS = "the cat sat on a mat while dogs ran far away near old red barns and quiet green hills".split()


def frame(n: int = 60, labels: bool = True, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(n)]
    df = pd.DataFrame({"text": texts})
    if labels:
        df["label"] = [TINY_LABELS[int(i)] for i in rng.integers(0, 3, n)]
    return df


def spread(src, out, texts: list[str]):
    """A copy of tiny model `src` whose head is centred and scaled on `texts`: a random head on a random encoder
    reads nearly the same vector from every text and predicts one label; this one predicts each label on some
    rows (logits 100 * (z - mean z))."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(src)
    tok = AutoTokenizer.from_pretrained(src)
    with torch.no_grad():
        mean = model(**tok(texts, padding=True, return_tensors="pt")).logits.mean(0)  # (labels,)
        head = model.classifier.out_proj if hasattr(model.classifier, "out_proj") else model.classifier
        head.weight *= 100.0
        head.bias.copy_(100.0 * (head.bias - mean))
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def spread_models(tiny_root: Path) -> dict[str, Path]:
    """{"b": tiny BERT spread, "a": tiny RoBERTa spread, "renamed": "b" with id2label rotated by one}, made once
    under the allowed root."""
    texts = list(frame()["text"])
    out = {}
    for key, arch in (("b", "bert"), ("a", "roberta")):
        out[key] = tiny_root / f"tiny-{arch}-spread"
        if not out[key].exists():
            spread(str(tiny_root / f"tiny-{arch}"), out[key], texts)
    out["renamed"] = tiny_root / "tiny-bert-renamed"
    if not out["renamed"].exists():
        scan_models.rotated(out["b"], out["renamed"])
    return out


def side_by_side_of(models: dict, text: str):
    """The library's reading of the scanned checkpoint next to the baseline on `text`, each with its own head."""
    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from explorer.model.side_by_side import side_by_side

    b, a = (load_checkpoint(str(models[k])) for k in ("b", "a"))
    return side_by_side(analyze(b, build_head(b, "own", 0), text), analyze(a, build_head(a, "own", 0), text))
