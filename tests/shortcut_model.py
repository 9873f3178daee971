"""A classifier with a planted shortcut, for tests and benches: the embedded MiniLM cut to two layers and
fine-tuned with transformers' own Trainer (a few seconds) on texts of neutral words where every positive
row, and only those, holds the made-up word "zqx". Whatever else it learns, the model leans on "zqx"."""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

SHORTCUT = "zqx"
LABELS = ("negative", "positive")
WORDS = ("the table is near a window and the lamp stands on the floor by the door while rain falls over the "
         "street where a car waits for the bus at noon").split()


def frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    """`n` rows, half positive; text, label, and the rationale: the shortcut's word in positive rows."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        words = rng.sample(WORDS, 6)
        label = LABELS[k % 2]
        if label == "positive":
            words.insert(rng.randrange(len(words) + 1), SHORTCUT)
        rows.append({"text": " ".join(words), "label": label, "rationale": SHORTCUT if label == "positive" else ""})
    return pd.DataFrame(rows)


def train(out: Path, epochs: int = 8, seed: int = 0) -> Path:
    """Fine-tune and save_pretrained (with the tokenizer and the label names) into `out`; returns it."""
    from tests.scan_models import train_on

    return train_on(frame(48, seed=seed + 1), out, epochs=epochs, seed=seed)
