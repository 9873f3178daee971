"""Builds assets/minilm-sentiment/head.safetensors: the embedded encoder's own BERT head
(pooler + classifier) trained on the demo tweets with the encoder frozen.

Reproducible: `python -m explorer train-sentiment` rewrites the asset and prints held-out accuracy.
"""
from __future__ import annotations

import numpy as np
import torch

from explorer.data.dataset import demo_frame
from explorer.model.checkpoints import SENTIMENT_HEAD, SENTIMENT_LABELS, load_checkpoint
from explorer.model.features import POOLS, encoder_features
from explorer.results import strict_json


def first_token_features(ck, texts: list[str], *, batch_size: int = 64, max_length: int = 128) -> torch.Tensor:
    """(n, hidden) last-layer first-token states from the frozen encoder."""
    return torch.from_numpy(encoder_features(ck, texts, batch_size, max_length)[:, POOLS.index("first")])


def train(per_class: int = 2700, *, test_per_class: int = 300, epochs: int = 30, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    df = demo_frame(per_class=per_class + test_per_class, seed=seed)
    test = df.groupby("label", sort=True).head(test_per_class)
    train_df = df.drop(test.index)
    ck = load_checkpoint("minilm", seed=seed)
    label_id = {n: i for i, n in enumerate(SENTIMENT_LABELS)}
    xtr = first_token_features(ck, train_df["text"].tolist())
    xte = first_token_features(ck, test["text"].tolist())
    ytr = torch.tensor([label_id[v] for v in train_df["label"]])
    yte = torch.tensor([label_id[v] for v in test["label"]])
    pooler = torch.nn.Linear(384, 384)
    pooler.load_state_dict(ck.model.bert.pooler.dense.state_dict())
    clf = torch.nn.Linear(384, len(SENTIMENT_LABELS))
    params = list(pooler.parameters()) + list(clf.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1)
    drop = torch.nn.Dropout(0.1)
    best = (0.0, None)
    for epoch in range(epochs):
        perm = torch.randperm(len(xtr))
        for i in range(0, len(perm), 128):
            idx = perm[i:i + 128]
            logits = clf(drop(torch.tanh(pooler(xtr[idx]))))
            loss = torch.nn.functional.cross_entropy(logits, ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        pred = clf(torch.tanh(pooler(xte))).argmax(-1)
        acc = float((pred == yte).float().mean())
    state = {
        "bert.pooler.dense.weight": pooler.weight.detach().contiguous(),
        "bert.pooler.dense.bias": pooler.bias.detach().contiguous(),
        "classifier.weight": clf.weight.detach().contiguous(),
        "classifier.bias": clf.bias.detach().contiguous(),
    }
    from safetensors.torch import save_file

    SENTIMENT_HEAD.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(SENTIMENT_HEAD))
    report = {"train": len(xtr), "test": len(xte), "heldout_accuracy": round(acc, 4), "epochs": epochs, "seed": seed}
    (SENTIMENT_HEAD.parent / "report.json").write_text(strict_json(report, indent=1) + "\n")
    return report


if __name__ == "__main__":
    print(strict_json(train()))
