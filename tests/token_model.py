"""A real (if small) NER checkpoint for tests and benches: BertForTokenClassification fine-tuned from the
embedded MiniLM with transformers' own Trainer on a few dozen BIO sentences, in a few seconds.

Labels go on the first subword of each word and -100 on the rest (HF's convention), so the model learns
subword labels the way real NER checkpoints do; the names are chosen to split into several subwords.
"""
from __future__ import annotations

import random
from pathlib import Path

import torch

from explorer.model.checkpoints import embedded_encoder_dir

TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
PEOPLE = (("John", "Smithson"), ("Maria", "Kowalczyk"), ("Linh",), ("Ahmed", "Okonkwo"), ("Sarah", "Brightwater"))
PLACES = (("Paris",), ("New", "York"), ("Hanoi",), ("Reykjavik",), ("Buenos", "Aires"))
ORGS = (("Acme", "Corporation"), ("Globex",), ("Initech", "Labs"), ("Vinamilk",))
TEMPLATES = (
    ("{per}", "works", "for", "{org}", "in", "{loc}", "."),
    ("{per}", "visited", "{loc}", "last", "week", "."),
    ("{org}", "opened", "an", "office", "in", "{loc}", "."),
    ("Yesterday", "{per}", "met", "{per2}", "."),
    ("The", "weather", "in", "{loc}", "is", "cold", "."),
    ("{per}", "left", "{org}", "."),
)


def sentences(n: int = 48, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    """`n` (words, BIO tags) sentences from the templates."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        words, tags = [], []
        for slot in TEMPLATES[k % len(TEMPLATES)]:
            kind = {"{per}": "PER", "{per2}": "PER", "{loc}": "LOC", "{org}": "ORG"}.get(slot)
            if kind is None:
                words.append(slot)
                tags.append("O")
                continue
            name = rng.choice({"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS}[kind])
            words += name
            tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(name) - 1)
        out.append((words, tags))
    return out


def train(out: Path, epochs: int = 6, seed: int = 0) -> Path:
    """Fine-tune and save_pretrained (with the tokenizer and id2label BIO names) into `out`; returns it."""
    from transformers import (AutoTokenizer, BertForTokenClassification, DataCollatorForTokenClassification, Trainer,
                              TrainingArguments)

    src = str(embedded_encoder_dir())
    tok = AutoTokenizer.from_pretrained(src)
    label2id = {t: i for i, t in enumerate(TAGS)}
    torch.manual_seed(seed)
    model = BertForTokenClassification.from_pretrained(src, num_labels=len(TAGS), id2label=dict(enumerate(TAGS)),
                                                       label2id=label2id)
    # Frozen embeddings: Adam's update of the 30522×384 word table cost more than the rest of each step.
    model.bert.embeddings.requires_grad_(False)
    rows = []
    for words, tags in sentences(32, seed=seed):
        enc = tok(words, is_split_into_words=True)
        previous, labels = None, []
        for w in enc.word_ids():  # the first subword of a word carries its tag, the rest -100
            labels.append(-100 if w is None or w == previous else label2id[tags[w]])
            previous = w
        rows.append({**enc, "labels": labels})
    args = TrainingArguments(output_dir=str(out.with_name(out.name + "-trainer")), num_train_epochs=epochs, per_device_train_batch_size=8,
                             learning_rate=5e-4, weight_decay=0.0, warmup_steps=0, seed=seed, report_to=[],
                             save_strategy="no", logging_strategy="no", disable_tqdm=True, use_cpu=True)
    Trainer(model=model, args=args, train_dataset=rows, data_collator=DataCollatorForTokenClassification(tok)).train()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
