"""One analysis: text -> tokens -> encoder (run once) -> head steps -> logits -> probabilities."""
from __future__ import annotations

import functools
import html
from dataclasses import dataclass

import numpy as np
import torch

from explorer.model import attention
from explorer.model import problem
from explorer.model.problem import ProblemType
from explorer.model.checkpoints import (TOKEN_CLASSIFICATION, Checkpoint, forward_inputs,  # noqa: F401
                                        max_length)  # max_length: re-exported
from explorer.model.heads import Head, head_at_precision, is_per_token, run_head, used_new_weights
from explorer.model.kernel import attention_kernel
from explorer.model.readable import readable_tokens, word_pieces
from explorer.results import JsonResult, html_table, rounded
from explorer.runtime import device as dev
from explorer.runtime import precision
from explorer.text.errors import ExplorerError


class AnalysisError(ExplorerError):
    """Bad input for an analysis; the message is one line, meant for the user."""


@dataclass(frozen=True, eq=False)
class Analysis(JsonResult):
    checkpoint: str
    head_kind: str
    text: str
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    special: tuple[bool, ...]  # [CLS], [SEP], <s>, ... (not [UNK]: it stands for a word of the text)
    word_ids: tuple[int | None, ...]  # which word each token belongs to; None for special tokens
    truncated_tokens: int  # tokens dropped to fit the model's maximum length
    max_length: int
    labels: tuple[str, ...]  # id2label order
    problem_type: ProblemType
    hidden_states: np.ndarray  # (layers+1, seq, hidden): embeddings, then each layer's output
    steps: tuple[tuple[str, np.ndarray], ...]  # head steps: (name, (features,))
    logits: np.ndarray  # (labels,)
    layer_logits: np.ndarray  # (layers+1, labels): the head applied to the embeddings, then each layer
    softmax: np.ndarray  # (labels,)
    sigmoid: np.ndarray  # (labels,)
    predicted: problem.Prediction  # by the model's own rule (ProblemType.predict): a label, labels, or a value
    # What transformers.pipeline("text-classification", top_k=None) returns for this text: its default
    # function (problem.pipeline_rule; not always the loss's: num_labels == 1 trains on the raw value,
    # yet the pipeline returns its sigmoid) and the (labels,) scores it gives each label.
    pipeline_function: str
    pipeline_scores: np.ndarray
    attentions: np.ndarray  # (layers, heads, seq, seq)
    flow: np.ndarray | None  # (layers, seq), or None unless asked for
    new_weights: tuple[str, ...]  # newly initialised parameters this analysis uses, by HF's full name
    text_pair: str = ""  # the second text of a sentence pair ("" for one text)
    # Per token: 0 = text A, 1 = text B. Special tokens belong to the segment before them (a leading
    # one to text A), as BERT's token_type_ids count them; the boundary is where 0 turns to 1.
    segments: tuple[int, ...] = ()
    unused_weights: tuple[str, ...] = ()  # weights in the checkpoint's files that the model does not use
    dtype: str = "float32"  # the precision the forward ran in (explorer/runtime/precision.py)
    reads: int | None = None  # the token the head's pooling reads; None when it pools over all tokens
    unknown: tuple[bool, ...] = ()  # per token: the vocabulary had no piece for it ([UNK])
    # Per token, as the tokenizer decodes it (explorer/model/readable.py): the form views show, and its share
    # of its word's text (a word's pieces concatenated are the word; byte-level tokens decoded).
    shown: tuple[str, ...] = ()
    pieces: tuple[str, ...] = ()

    def __post_init__(self):
        # HF's exact strings are accepted (a copy made with dataclasses.replace and a config's string), and
        # kept as the ProblemType they name, so every reader can call its methods.
        object.__setattr__(self, "problem_type", ProblemType(self.problem_type))

    @property
    def scores(self) -> np.ndarray:  # (labels,): through the function the model's loss reads (softmax, sigmoid, none)
        return self.problem_type.probabilities(self.logits)

    @property
    def pipeline_differs(self) -> bool:
        """pipeline() reads the logits through another function than the model's own loss does."""
        return self.problem_type.output != self.pipeline_function

    @property
    def cls_hidden(self) -> np.ndarray:  # (hidden,)
        return self.hidden_states[-1, 0]

    @property
    def cls_attention(self) -> np.ndarray:  # (layers, heads, seq): what [CLS] attends to
        return self.attentions[:, :, 0, :]

    # Rollout is read on first use, not computed with the analysis: the full (layers, seq, seq) products took
    # a sixth of a 256-token analysis, and every view reads only [CLS]'s rows. Both are kept once computed.
    @functools.cached_property
    def rollout(self) -> np.ndarray:  # (layers, seq, seq)
        return attention.attention_rollout(self.attentions)

    @functools.cached_property
    def cls_rollout(self) -> np.ndarray:  # (layers, seq): rollout[:, 0] to float64 rounding, without the full products
        return attention.cls_rollout(self.attentions)

    def to_dict(self) -> dict:
        """The analysis as JSON-safe values (what `analyze --json` prints); numbers rounded to 6 digits."""
        return {
            "checkpoint": self.checkpoint,
            "tokens": list(self.tokens),  # the vocabulary strings
            "token_text": list(self.shown),  # each token as the tokenizer decodes it (explorer/model/readable.py)
            "special": list(self.special),
            "labels": list(self.labels),
            "logits": rounded(self.logits),
            "layer_logits": rounded(self.layer_logits),  # (layers+1, labels): the head at the embeddings, then each layer
            "softmax": rounded(self.softmax),
            "sigmoid": rounded(self.sigmoid),
            "problem_type": self.problem_type,
            # A label; for multi-label the list of labels over 0.5 ([] when none is); a regression's value.
            "predicted": _prediction_json(self.predicted),
            "pipeline": {"function": self.pipeline_function,
                         "scores": dict(zip(self.labels, rounded(self.pipeline_scores)))},
            "new_weights": list(self.new_weights),
            "head": {"kind": self.head_kind, "steps": [{"name": n, "values": rounded(v)} for n, v in self.steps]},
            "attention": {"cls_raw": rounded(self.cls_attention), "rollout": rounded(self.cls_rollout),
                          "flow": rounded(self.flow)},
            "truncated_tokens": self.truncated_tokens,
            "text_pair": self.text_pair,
            "segments": list(self.segments),  # per token: 0 = text A, 1 = text B
            "reads": self.reads,  # the token the head pools, or null when it pools over all tokens
            "unused_weights": list(self.unused_weights),
            "dtype": self.dtype,
        }

    def _repr_html_(self) -> str:
        rows = [{"label": name, "logit": float(self.logits[i]), "softmax": float(self.softmax[i]),
                 "sigmoid": float(self.sigmoid[i]), f"pipeline() {self.pipeline_function}": float(self.pipeline_scores[i])}
                for i, name in enumerate(self.labels)]
        return (f"<p><b>{html.escape(problem.prediction_text(self.predicted))}</b> ({html.escape(self.checkpoint)}, "
                f"{html.escape(self.head_kind)} head) &middot; {html.escape(' '.join(self.shown))}</p>"
                + html_table(rows))


def _prediction_json(pred: problem.Prediction):
    if isinstance(pred, str):
        return pred
    if isinstance(pred, tuple):
        return [_prediction_json(p) for p in pred]
    return round(float(pred), 6)


MAX_TEXT_CHARS = 20_000  # characters read before tokenizing (the sidebar shows the same limit)


def encode(ck: Checkpoint, text: str, text_pair: str | None = None, **options) -> tuple[dict, int]:
    """Tokenize (a pair as the tokenizer's pair encoding) with truncation; returns the encoding and
    how many tokens were dropped. `options` go to the tokenizer (return_offsets_mapping, ...)."""
    if not isinstance(text, str) or not text.strip():
        raise AnalysisError("analysis_empty_text")
    pair = text_pair if isinstance(text_pair, str) and text_pair.strip() else None
    # Read at most MAX_TEXT_CHARS: the model sees ≤ 512 tokens anyway, and tokenizing a pasted
    # 4.8 MB text once took 11 s and 450 MB.
    text, pair = text[:MAX_TEXT_CHARS], pair[:MAX_TEXT_CHARS] if pair else pair
    limit = max_length(ck)
    enc = ck.tokenizer(text, pair, return_tensors="pt", verbose=False, **options)
    full = enc["input_ids"].shape[1]
    if full > limit:  # a second pass only for long texts: the tokenizer's own truncation strategy
        enc = ck.tokenizer(text, pair, truncation=True, max_length=limit, return_tensors="pt", **options)
    return dev.to(enc, ck.model.device), full - enc["input_ids"].shape[1]  # on the model's device  # what was dropped, not what should have been


def segments(enc) -> tuple[int, ...]:
    """Segment of each token of the first row: 0 for text A, 1 for text B (see Analysis.segments)."""
    try:
        ids = enc.sequence_ids(0)
    except (ValueError, AttributeError):  # slow tokenizers: their token type ids, if any
        types = enc.get("token_type_ids")
        return tuple(types[0].tolist()) if types is not None else (0,) * enc["input_ids"].shape[1]
    out, seg = [], 0
    for sid in ids:
        seg = seg if sid is None else sid
        out.append(seg)
    return tuple(out)


def readable(ck: Checkpoint, tokens: tuple[str, ...], special, word_ids, segs) -> dict:
    """The `shown` and `pieces` fields of an analysis or attribution of these tokens."""
    return {"shown": readable_tokens(ck.tokenizer, tokens, special),
            "pieces": word_pieces(ck.tokenizer, tokens, special, word_ids, segs)}


def token_info(ck: Checkpoint, enc) -> tuple[list[int], list[bool], tuple[int | None, ...]]:
    """(ids, special flags, word ids) of the first sequence in `enc`."""
    ids = enc["input_ids"][0].tolist()
    # [UNK] is in the tokenizer's special list, but it replaces a real word: never hidden as special.
    special_ids = set(ck.tokenizer.all_special_ids) - {ck.tokenizer.unk_token_id}
    special = [i in special_ids for i in ids]
    try:
        word_ids = tuple(enc.word_ids(0))
    except (ValueError, AttributeError):  # slow tokenizers have no word ids
        word_ids = tuple(None if s else k for k, s in enumerate(special))
    return ids, special, word_ids


def encoder_inputs(enc, ck: Checkpoint | None = None) -> dict:
    """What the tokenizer gave that the model's forward takes (token_type_ids where it takes them)."""
    if ck is None:
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
    names = forward_inputs(ck.model)
    return {k: v for k, v in enc.items() if k in names}


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """A tensor as float32 numpy (or float64 as it is): numpy has no bfloat16, and a half-precision
    checkpoint's numbers are shown, charted and compared in float32 (exact for fp16 and bf16 values)."""
    return x.detach().cpu().numpy() if x.dtype in (torch.float32, torch.float64) or not x.is_floating_point() \
        else x.detach().float().cpu().numpy()


def _reads(hidden: np.ndarray, pooled: np.ndarray) -> int | None:
    """The token whose last hidden state is the pooled vector, if one is."""
    if pooled.shape != hidden.shape[1:]:
        return None
    dist = np.abs(hidden - pooled).max(axis=1)  # (seq,)
    k = int(np.argmin(dist))
    return k if dist[k] <= 1e-6 * max(1.0, float(np.abs(pooled).max())) else None


def analyze(ck: Checkpoint, head: Head, text: str, flow: bool = False, text_pair: str | None = None,
            dtype: str | torch.dtype | None = None) -> Analysis:
    """Run the encoder once and the head step by step. Read-only on the model. `dtype` (float32, bfloat16,
    float16; None: the model's own) runs both on a cached cast copy (explorer/runtime/precision.py); numbers
    come back in float32 or wider either way."""
    if dtype is not None:
        ck, head = head_at_precision(ck, head, dtype)
    if ck.task == TOKEN_CLASSIFICATION or is_per_token(head):  # one row per token: token_analysis.analyze_tokens
        raise AnalysisError("analysis_token_model", name=ck.name)
    enc, dropped = encode(ck, text, text_pair)
    with torch.inference_mode(), attention_kernel(ck, "eager"):  # the weights are read: eager, even inside sdpa
        out = ck.model.base_model(**encoder_inputs(enc, ck), output_attentions=True, output_hidden_states=True)
        # The head at every depth in one batched call: row l is the head applied to layer l's states
        # (0 = embeddings). The last row is the head's real input, so its steps are the analysis's.
        states = torch.cat([*out.hidden_states[:-1], out.last_hidden_state])  # (layers+1, seq, hidden)
        rows = states.shape[0]
        batched = run_head(head, states, enc["attention_mask"].expand(rows, -1),
                           input_ids=enc["input_ids"].expand(rows, -1))
    if not out.attentions:
        raise AnalysisError("analysis_no_attention")
    att = to_numpy(torch.stack(out.attentions)[:, 0])  # (layers, heads, seq, seq)
    steps = tuple((name, to_numpy(t[-1])) for name, t in batched)  # the last row: the head's real input
    layer_logits = to_numpy(batched[-1][1]).astype(np.float64)  # (layers+1, labels)
    logits = layer_logits[-1]
    ptype = problem.problem_type(ck.model.config)
    labels = ck.labels
    ids, special, word_ids = token_info(ck, enc)
    unk = ck.tokenizer.unk_token_id  # a property that looks the token up: read once, not per token
    # The embeddings, then each layer's output: the rows of `states` wherever hidden_states ends with
    # last_hidden_state itself (every architecture we test), so no second copy is made.
    hidden = to_numpy(states) if out.hidden_states[-1] is out.last_hidden_state \
        else to_numpy(torch.stack(out.hidden_states)[:, 0])
    tokens, segs = tuple(ck.tokenizer.convert_ids_to_tokens(ids)), segments(enc)
    return Analysis(
        checkpoint=ck.name,
        head_kind=head.kind,
        text=text,
        tokens=tokens,
        token_ids=tuple(ids),
        special=tuple(special),
        unknown=tuple(unk is not None and i == unk for i in ids),
        word_ids=word_ids,
        truncated_tokens=dropped,
        max_length=max_length(ck),
        labels=labels,
        problem_type=ptype,
        hidden_states=hidden,
        steps=steps,
        logits=logits,
        layer_logits=layer_logits,
        softmax=problem.softmax(logits),
        sigmoid=problem.sigmoid(logits),
        predicted=ptype.predict(logits, labels),
        pipeline_function=(rule := problem.pipeline_rule(ck.model.config)),
        pipeline_scores=problem.pipeline_scores(logits, rule),
        attentions=att,
        flow=attention.flow(att) if flow else None,
        new_weights=used_new_weights(ck, head),
        text_pair=text_pair or "",
        segments=segs,
        unused_weights=ck.unused_weights,
        dtype=precision.dtype_name(precision.model_dtype(ck.model)),
        reads=_reads(to_numpy(out.last_hidden_state[0]), steps[0][1]),
        **readable(ck, tokens, special, word_ids, segs),
    )
