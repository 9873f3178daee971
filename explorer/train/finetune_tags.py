"""Fine-tuning a token-classification head on tagged words, the token sibling of explorer.train.finetune.

`head` mode freezes the encoder and trains the classifier (dropout + linear, as HF's ...ForTokenClassification
applies it to every token) on cached features of each word's first subword: the tokens HF's alignment
labels. `full` mode trains everything with transformers' Trainer and DataCollatorForTokenClassification
on labels aligned to subwords (first subword labelled, -100 elsewhere). Both share sequence fine-tuning's
epoch reports, stop flag, best-epoch rule and export; metrics are seqeval's entity precision, recall and
F1 (the conlleval rules HF's run_ner.py reports) plus word accuracy.
"""
from __future__ import annotations

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from explorer.data.subwords import IGNORE, align_labels, word_logits, word_outputs
from explorer.data.tags import TagData
from explorer.model.checkpoints import TOKEN_CLASSIFICATION, Checkpoint
from explorer.model.problem import ProblemType
from explorer.train.finetune import (FinetuneError, FinetuneResult, OnEpoch, Settings, Stop, checked, kept_epoch,
                                     session_name, train_epochs, train_with_trainer, trainable_copy, trained)

# Ties on validation loss go to the higher word accuracy, as for single-label sentences (problem.score).
_RULE = ProblemType.SINGLE


def _check_head(s: Settings) -> None:
    # The token head is HF's own (dropout + linear on every token), the only one save_pretrained writes.
    if s.head != "own":
        raise FinetuneError("finetune_own_head", native="own", head=s.head)


def split_sentences(n: int, fraction: float, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train idx, val idx) over sentences; a sentence never straddles the split."""
    n_val = max(int(round(n * fraction)), 1)
    if n - n_val < 2:
        raise FinetuneError("finetune_too_few", n=n)
    return tuple(train_test_split(np.arange(n), test_size=n_val, random_state=seed))


def entity_metrics(true_tags: list[list[str]], pred_tags: list[list[str]]) -> dict:
    """seqeval's entity-level micro precision, recall and F1 (default, conlleval mode) and word accuracy."""
    from seqeval.metrics import accuracy_score, f1_score, precision_score, recall_score

    kw = dict(zero_division=0)
    return {"precision": float(precision_score(true_tags, pred_tags, **kw)),
            "recall": float(recall_score(true_tags, pred_tags, **kw)),
            "f1": float(f1_score(true_tags, pred_tags, **kw)),
            "accuracy": float(accuracy_score(true_tags, pred_tags))}


def _evaluate(logits: list[np.ndarray], data: TagData, idx, names) -> tuple[dict, float]:
    """(metrics, mean cross-entropy over the labelled words) from per-sentence (words kept, labels) logits."""
    truth = [list(data.tags[i][:len(r)]) for i, r in zip(idx, logits)]
    pred = [[names[k] for k in r.argmax(-1)] for r in logits]
    ids = data.ids
    y = torch.from_numpy(np.concatenate([ids[i][:len(r)] for i, r in zip(idx, logits)]))
    flat = torch.from_numpy(np.concatenate(logits)) if logits else torch.zeros((0, len(names)))
    loss = float(torch.nn.functional.cross_entropy(flat, y)) if len(y) else float("nan")
    return entity_metrics(truth, pred), loss


def finetune_tags(ck: Checkpoint, data: TagData, *, settings: Settings = Settings(), on_epoch: OnEpoch | None = None,
                  stop: Stop | None = None, name: str | None = None) -> FinetuneResult:
    """Train a token-classification copy of `ck` on tagged words; `ck` itself is never modified. The result's
    problem_type is "token-classification" and its metrics seqeval's (entity_metrics)."""
    s = checked(ck, settings, rows=len(data.words), check=_check_head)
    name = name or session_name(ck.name, mode=s.mode, data=data.layout, epochs=s.epochs)
    train_idx, val_idx = split_sentences(len(data.words), s.val_fraction, seed=s.seed)
    run = _train_head if s.mode == "head" else _train_full
    work, s, (history, best_epoch, stopped, val_logits), seconds = trained(
        ck, s, make_copy=lambda: trainable_copy(ck, data.tag_names, name=name, seed=s.seed, token=True),
        run=lambda work, s: run(work, data, s, train_idx, val_idx, on_epoch, stop))
    m, _ = _evaluate(val_logits, data, val_idx, data.tag_names)
    return FinetuneResult(checkpoint=work, metrics=m, history=tuple(history), labels=data.tag_names,
                          problem_type=TOKEN_CLASSIFICATION, confusion=None, train_seconds=seconds, best_epoch=best_epoch,
                          stopped=stopped, kept_by=kept_epoch(history, _RULE, early_stopping=s.early_stopping)[1],
                          epochs=s.epochs)


def _train_head(work, data, s, train_idx, val_idx, on_epoch, stop):
    model = work.model
    feats = word_outputs(model, work.tokenizer, words=[list(w) for w in data.words], max_length=s.max_length,
                         batch_size=s.batch_size,
                         encoder=True, stop=stop)  # per sentence (words kept, hidden)
    ids = data.ids
    device = model.device
    xtr = torch.cat([feats[i] for i in train_idx]).to(device)  # (train words, hidden)
    ytr = torch.from_numpy(np.concatenate([ids[i][:len(feats[i])] for i in train_idx])).to(device)
    head = model.classifier  # a Linear: trainable_copy checked it
    cfg = model.config
    p = next((v for k in ("classifier_dropout", "hidden_dropout_prob", "dropout", "seq_classif_dropout")
              if isinstance(v := getattr(cfg, k, None), float)), 0.1)
    dropout = torch.nn.Dropout(p)

    def evaluate() -> tuple[list[np.ndarray], dict, float]:
        with torch.no_grad():
            logits = [head(feats[i].to(device)).float().cpu().numpy() for i in val_idx]
        return (logits, *_evaluate(logits, data, val_idx, data.tag_names))

    def loss_of(b: torch.Tensor, _gen: torch.Generator) -> torch.Tensor:
        # Dropout from the global generator, as HF's token classifier draws it in full mode.
        return torch.nn.functional.cross_entropy(head(dropout(xtr[b])), ytr[b])

    return train_epochs(list(head.parameters()), len(xtr), s=s, device=device, rule=_RULE, loss_of=loss_of,
                        evaluate=evaluate, on_epoch=on_epoch, stop=stop)


class _Sentences(torch.utils.data.Dataset):
    """Aligned encodings (input ids, mask, labels with -100) of pre-split sentences."""

    def __init__(self, tokenizer, words: list[list[str]], labels: list[np.ndarray], max_length: int):
        self.enc = align_labels(tokenizer, words, labels, max_length)

    def __len__(self):
        return len(self.enc["input_ids"])

    def __getitem__(self, i):
        return {k: v[i] for k, v in self.enc.items()}


def _train_full(work, data, s, train_idx, val_idx, on_epoch, stop):
    from transformers import DataCollatorForTokenClassification

    ids = data.ids
    val_words = [list(data.words[i]) for i in val_idx]

    def evaluate(model) -> tuple[list[np.ndarray], dict, float]:
        logits = word_logits(model, work.tokenizer, val_words, s.max_length, s.batch_size)
        return (logits, *_evaluate(logits, data, val_idx, data.tag_names))

    train = _Sentences(work.tokenizer, [list(data.words[i]) for i in train_idx], [ids[i] for i in train_idx],
                       s.max_length)
    collator = DataCollatorForTokenClassification(work.tokenizer, label_pad_token_id=IGNORE)
    return train_with_trainer(work, s, train=train, collator=collator, evaluate=evaluate, rule=_RULE, on_epoch=on_epoch,
                              stop=stop)
