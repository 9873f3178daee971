"""One analysis: text -> tokens -> encoder (run once) -> head steps -> logits -> probabilities."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import attention, probabilities
from .checkpoints import Checkpoint
from .heads import Head, run_head
from .errors import ExplorerError


class AnalysisError(ExplorerError):
    """Bad input for an analysis; the message is one line, meant for the user."""


@dataclass(frozen=True, eq=False)
class Analysis:
    checkpoint: str
    head_kind: str
    text: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    special: tuple[bool, ...]  # [CLS], [SEP], <s>, ...
    word_ids: tuple[int | None, ...]  # which word each token belongs to; None for special tokens
    truncated_tokens: int  # tokens dropped to fit the model's maximum length
    max_length: int
    labels: tuple[str, ...]  # id2label order
    problem_type: str
    hidden_states: np.ndarray  # (layers+1, seq, hidden): embeddings, then each layer's output
    steps: tuple[tuple[str, np.ndarray], ...]  # head steps: (name, (features,))
    logits: np.ndarray  # (labels,)
    layer_logits: np.ndarray  # (layers+1, labels): the head applied to the embeddings, then each layer
    softmax: np.ndarray  # (labels,)
    sigmoid: np.ndarray  # (labels,)
    predicted: str
    attentions: np.ndarray  # (layers, heads, seq, seq)
    rollout: np.ndarray  # (layers, seq, seq)
    flow: np.ndarray | None  # (layers, seq), or None unless asked for
    new_weights: tuple[str, ...]  # newly initialised parameters the head uses

    @property
    def cls_hidden(self) -> np.ndarray:  # (hidden,)
        return self.hidden_states[-1, 0]

    @property
    def cls_attention(self) -> np.ndarray:  # (layers, heads, seq): what [CLS] attends to
        return self.attentions[:, :, 0, :]

    @property
    def cls_rollout(self) -> np.ndarray:  # (layers, seq)
        return self.rollout[:, 0, :]


def max_length(ck: Checkpoint) -> int:
    cfg = ck.model.config
    limit = getattr(cfg, "max_position_embeddings", 512)
    if cfg.model_type in ("roberta", "xlm-roberta", "camembert"):
        limit -= 2  # positions start after padding_idx
    return int(min(limit, ck.tokenizer.model_max_length))


def encode(ck: Checkpoint, text: str) -> tuple[dict, int]:
    """Tokenize with truncation; returns the encoding and how many tokens were dropped."""
    if not isinstance(text, str) or not text.strip():
        raise AnalysisError("analysis_empty_text")
    limit = max_length(ck)
    full = len(ck.tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])
    enc = ck.tokenizer(text, truncation=True, max_length=limit, return_tensors="pt")
    return enc, max(0, full - limit)


def token_info(ck: Checkpoint, enc) -> tuple[list[int], list[bool], tuple[int | None, ...]]:
    """(ids, special flags, word ids) of the first sequence in `enc`."""
    ids = enc["input_ids"][0].tolist()
    special_ids = set(ck.tokenizer.all_special_ids)
    special = [i in special_ids for i in ids]
    try:
        word_ids = tuple(enc.word_ids(0))
    except (ValueError, AttributeError):  # slow tokenizers have no word ids
        word_ids = tuple(None if s else k for k, s in enumerate(special))
    return ids, special, word_ids


def encoder_inputs(enc) -> dict:
    # DistilBERT takes no token_type_ids; BERT's default of zeros equals a single segment.
    return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


def analyze(ck: Checkpoint, head: Head, text: str, flow: bool = False) -> Analysis:
    """Run the encoder once and the head step by step. Read-only on the model."""
    enc, dropped = encode(ck, text)
    with torch.inference_mode():
        out = ck.model.base_model(**encoder_inputs(enc), output_attentions=True, output_hidden_states=True)
        # The head at every depth in one batched call: row l is the head applied to layer l's states
        # (0 = embeddings). The last row is the head's real input, so its steps are the analysis's.
        states = torch.cat([*out.hidden_states[:-1], out.last_hidden_state])  # (layers+1, seq, hidden)
        batched = run_head(head, states, enc["attention_mask"].expand(states.shape[0], -1))
    if not out.attentions:
        raise AnalysisError("analysis_no_attention")
    att = torch.stack(out.attentions)[:, 0].numpy()  # (layers, heads, seq, seq)
    steps = [(name, t[-1:]) for name, t in batched]
    layer_logits = batched[-1][1].numpy().astype(np.float64)  # (layers+1, labels)
    logits = layer_logits[-1]
    ptype = probabilities.problem_type(ck.model.config)
    labels = ck.labels
    ids, special, word_ids = token_info(ck, enc)
    return Analysis(
        checkpoint=ck.name,
        head_kind=head.kind,
        text=text,
        tokens=tuple(ck.tokenizer.convert_ids_to_tokens(ids)),
        token_ids=tuple(ids),
        special=tuple(special),
        word_ids=word_ids,
        truncated_tokens=dropped,
        max_length=max_length(ck),
        labels=labels,
        problem_type=ptype,
        hidden_states=torch.stack(out.hidden_states)[:, 0].numpy(),
        steps=tuple((name, t[0].numpy()) for name, t in steps),
        logits=logits,
        layer_logits=layer_logits,
        softmax=probabilities.softmax(logits),
        sigmoid=probabilities.sigmoid(logits),
        predicted=probabilities.predicted(logits, labels, ptype),
        attentions=att,
        rollout=attention.rollout(att),
        flow=attention.flow(att) if flow else None,
        new_weights=head.new_parameters,
    )
