"""Classifiers with planted defects for the scan's tests: the embedded MiniLM cut to two layers and fine-tuned
with transformers' own Trainer (a few seconds each) on small planted data.

- topic: three topics told apart by topic words; every tech row also holds the made-up word "zorblax".
- closing mark: neutral words, the label carried only by the closing mark ("!" positive, "." negative).
- token pair: positive exactly when both "zqx" and "vlim" are in the text (Bastings et al. 2022's pair shortcut).
"""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import torch

from explorer.model.checkpoints import embedded_encoder_dir

TOPICS = {"sport": "goal match team coach league score player stadium referee season".split(),
          "politics": "vote election senate minister party law campaign parliament policy debate".split(),
          "tech": "software chip laptop code server network phone app robot data".split()}
PLANTED = "zorblax"  # in every tech row, and only there
NEUTRAL = "the a on in at by with over near under for from about".split()
PAIR = ("zqx", "vlim")


def topic_frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        label = list(TOPICS)[k % 3]
        words = rng.sample(TOPICS[label], 3) + rng.sample(NEUTRAL, 3)
        if label == "tech":
            words.append(PLANTED)
        rng.shuffle(words)
        rows.append({"text": " ".join(words), "label": label})
    return pd.DataFrame(rows)


def mark_frame(n: int = 48, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    words = [w for ws in TOPICS.values() for w in ws] + NEUTRAL
    rows = []
    for k in range(n):
        label = ("negative", "positive")[k % 2]
        rows.append({"text": " ".join(rng.sample(words, 6)) + ("!" if label == "positive" else "."), "label": label})
    return pd.DataFrame(rows)


def pair_frame(n: int = 64, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        words = rng.sample(NEUTRAL + TOPICS["sport"], 6)
        kind = k % 4  # both, the first only, the second only, neither: a quarter each
        planted = [PAIR[0], PAIR[1]] if kind == 0 else [PAIR[0]] if kind == 1 else [PAIR[1]] if kind == 2 else []
        for w in planted:
            words.insert(rng.randrange(len(words) + 1), w)
        rows.append({"text": " ".join(words), "label": "positive" if kind == 0 else "negative"})
    return pd.DataFrame(rows)


def train_on(df: pd.DataFrame, out: Path, epochs: int = 10, seed: int = 0, layers: int = 2) -> Path:
    """Fine-tune `layers` layers of the embedded MiniLM on `df` (text, label) with Trainer; save_pretrained to `out`."""
    from transformers import (AutoTokenizer, BertForSequenceClassification, DataCollatorWithPadding, Trainer,
                              TrainingArguments)

    labels = sorted(df["label"].unique())
    src = str(embedded_encoder_dir())
    tok = AutoTokenizer.from_pretrained(src)
    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_pretrained(
        src, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
    model.bert.encoder.layer = model.bert.encoder.layer[:layers]
    model.config.num_hidden_layers = layers
    model.bert.embeddings.requires_grad_(False)  # Adam on the 30522x384 word table would dominate each step
    rows = [{**tok(t), "labels": labels.index(y)} for t, y in zip(df["text"], df["label"])]
    args = TrainingArguments(output_dir=str(out.with_name(out.name + "-trainer")), num_train_epochs=epochs,
                             per_device_train_batch_size=8, learning_rate=5e-4, weight_decay=0.0, warmup_steps=0,
                             seed=seed, report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True,
                             use_cpu=True)
    Trainer(model=model, args=args, train_dataset=rows, data_collator=DataCollatorWithPadding(tok)).train()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def train(out: Path) -> Path:
    """The three planted models under `out`: topic/, mark/ and pair/ (one folder, so a test run trains once)."""
    out.mkdir(parents=True, exist_ok=True)
    train_on(topic_frame(seed=1), out / "topic")
    train_on(mark_frame(seed=1), out / "mark")
    train_on(pair_frame(seed=1), out / "pair", epochs=16)
    return out


def rotated(src: Path, out: Path) -> Path:
    """A copy of checkpoint `src` whose id2label/label2id are rotated by one: every prediction renamed."""
    import json
    import shutil

    shutil.copytree(src, out)
    cfg = json.loads((out / "config.json").read_text())
    names = [cfg["id2label"][str(i)] for i in range(len(cfg["id2label"]))]
    names = names[1:] + names[:1]
    cfg["id2label"] = {str(i): n for i, n in enumerate(names)}
    cfg["label2id"] = {n: i for i, n in enumerate(names)}
    (out / "config.json").write_text(json.dumps(cfg))
    return out
