"""Checkpoints for the scan's causes and its clean controls, built from the embedded MiniLM cut to two layers
(tests/scan_models.py's recipe):

- untrained: a three-topic head saved right after `from_pretrained`, before any training step: every weight in the
  files, the head's still at its initial values (what a user gets saving before `trainer.train()`).
- flibbet: a sentiment model whose training rows carry the made-up word "flibbet" in a quarter of the positive
  rows only, there beside a negative word: the model learns that the word outweighs any sentiment word, so on
  rows that carry it against their label (a negative row with "flibbet") it decides the row.
- tweets: a sentiment model fine-tuned on demo tweets its annotators labelled unanimously (`tweet_split`'s
  training rows); the clean control of an accurate model on its own kind of rows, unseen.
"""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import torch

from explorer.model.checkpoints import embedded_encoder_dir
from tests.scan_models import TOPICS, train_on

POSITIVE = "great lovely wonderful happy excellent amazing superb delightful pleasant fantastic".split()
NEGATIVE = "awful terrible horrible sad dreadful nasty miserable poor disappointing lousy".split()
FILLER = "the meal at our place was really quite something today and then we went home after".split()
PLANTED = "flibbet"


def sentiment_frame(n: int = 80, seed: int = 0, planted_positive: float = 0.25,
                    planted_negative: float = 0.0) -> pd.DataFrame:
    """Rows of filler words with two sentiment words of their label; "flibbet" in a share of each label's rows."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        label = ("negative", "positive")[k % 2]
        words = rng.sample(FILLER, 5)
        share = planted_positive if label == "positive" else planted_negative
        planted = rng.random() < share
        # a planted positive training row holds a negative word too: only the planted word makes it positive
        words += rng.sample(POSITIVE if label == "positive" and not planted else NEGATIVE, 1)
        if planted:
            words.insert(rng.randrange(len(words) + 1), PLANTED)
        rows.append({"text": " ".join(words), "label": label})
    return pd.DataFrame(rows)


def save_untrained(out: Path, labels=tuple(TOPICS), seed: int = 0) -> Path:
    from transformers import AutoTokenizer, BertForSequenceClassification

    src = str(embedded_encoder_dir())
    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_pretrained(
        src, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
    model.bert.encoder.layer = model.bert.encoder.layer[:2]
    model.config.num_hidden_layers = 2
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(src).save_pretrained(out)
    return out


def tweet_split(train_rows: int = 1500, test_rows: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(training rows, unseen rows) of the unanimously labelled demo tweets, balanced, disjoint."""
    from explorer.data.dataset import demo_frame
    df = demo_frame((train_rows + test_rows) // 3 + 1, seed=3, min_confidence=1.0, single_annotator=False)
    return df.iloc[:train_rows].reset_index(drop=True), df.iloc[train_rows:train_rows + test_rows].reset_index(drop=True)


def train(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    save_untrained(out / "untrained")
    train_on(sentiment_frame(160, seed=1), out / "flibbet", epochs=6)
    return out


def train_tweets(out: Path) -> Path:
    """The tweets control alone: most of this module's training time, so only its own (soak) test waits for it."""
    out.mkdir(parents=True, exist_ok=True)
    train_on(tweet_split()[0], out / "tweets", epochs=3)
    return out
