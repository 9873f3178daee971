"""Token classifiers, on a real NER head (MiniLM fine-tuned with Trainer on BIO sentences, tests/token_model.py):

- one token analysis (encoder with every hidden state, the own head on every token at every layer, entities
  for all five aggregation strategies) against one plain model(**enc) forward;
- entities for 200 sentences by analyze_tokens against transformers' pipeline("token-classification") on
  the same 200 sentences (aggregation simple), both end to end from text.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bench.bench_arch import against_forward
from bench.timing import best_of, row

TEXT = "Yesterday Maria Kowalczyk met John Smithson of Acme Corporation in Buenos Aires to talk about Hanoi."


def _sentences(n: int = 200) -> list[str]:
    from tests.token_model import sentences

    return [" ".join(words).replace(" .", ".") for words, _ in sentences(n, seed=1)]


def run() -> list[dict]:
    from transformers import pipeline

    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from explorer.model.token_analysis import analyze_tokens
    from tests.token_model import train

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HEAD_EXPLORER_ROOTS"] = os.pathsep.join(
            [str(root), *os.environ.get("HEAD_EXPLORER_ROOTS", "").split(os.pathsep)]).rstrip(os.pathsep)
        folder = train(root / "ner")
        ck = load_checkpoint(str(folder))
        head = build_head(ck, "own")
        rows = [against_forward(ck, TEXT, lambda: analyze_tokens(ck, head, TEXT), "analyze_tokens, NER MiniLM")]
        texts = _sentences()
        pipe = pipeline("token-classification", model=ck.model, tokenizer=ck.tokenizer, aggregation_strategy="simple")
        theirs = best_of(lambda: [pipe(t) for t in texts], repeat=3)
        ours = best_of(lambda: [analyze_tokens(ck, head, t).grouped() for t in texts], repeat=3)
        rows.append(row("entities of 200 sentences: analyze_tokens / pipeline()", ours, theirs, "ratio <= 1.2",
                        ours / theirs <= 1.2))
        return rows
