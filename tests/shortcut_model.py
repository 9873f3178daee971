"""A classifier with a planted shortcut, for tests and benches: the embedded MiniLM cut to two layers and
fine-tuned with transformers' own Trainer (a few seconds) on texts of neutral words where every positive
row, and only those, holds the made-up word "zqx". Whatever else it learns, the model leans on "zqx"."""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import torch

from explorer.model.checkpoints import embedded_encoder_dir

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
    from transformers import (AutoTokenizer, BertForSequenceClassification, DataCollatorWithPadding, Trainer,
                              TrainingArguments)

    src = str(embedded_encoder_dir())
    tok = AutoTokenizer.from_pretrained(src)
    torch.manual_seed(seed)
    model = BertForSequenceClassification.from_pretrained(
        src, num_labels=2, id2label=dict(enumerate(LABELS)), label2id={n: i for i, n in enumerate(LABELS)})
    model.bert.encoder.layer = model.bert.encoder.layer[:2]  # two of six layers: the test needs a model, not a good one
    model.config.num_hidden_layers = 2
    model.bert.embeddings.requires_grad_(False)  # Adam on the 30522×384 word table would dominate each step
    df = frame(48, seed=seed + 1)
    rows = [{**tok(t), "labels": LABELS.index(y)} for t, y in zip(df["text"], df["label"])]
    args = TrainingArguments(output_dir=str(out.with_name(out.name + "-trainer")), num_train_epochs=epochs,
                             per_device_train_batch_size=8, learning_rate=5e-4, weight_decay=0.0, warmup_steps=0,
                             seed=seed, report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True,
                             use_cpu=True)
    Trainer(model=model, args=args, train_dataset=rows, data_collator=DataCollatorWithPadding(tok)).train()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
