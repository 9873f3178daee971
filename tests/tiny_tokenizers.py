"""Tiny tokenizers of the families whose vocabulary strings are not plain text, trained in code on a few
sentences (milliseconds, no files, no hub): byte-level BPE as RoBERTa and GPT-2 wrap it, and a
SentencePiece-style Unigram as XLM-RoBERTa wraps it. Their ids fit the 30522-row vocabularies of
tests/tiny_archs.py, so `tiny_archs.save(..., tokenizer=...)` pairs them with any tiny model."""
from __future__ import annotations

import json

import transformers as tf
from tokenizers import ByteLevelBPETokenizer, SentencePieceUnigramTokenizer

# Vietnamese, an emoji and accents: each has characters whose UTF-8 bytes a byte-level BPE splits.
CORPUS = ["Tiếng Việt rất hay", "phim này hay lắm", "café au lait 😀", "the café was good 😀",
          "good movie, bad plot", "the cat sat on the mat"] * 3
_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>", "<|endoftext|>"]


def _byte_level():
    bpe = ByteLevelBPETokenizer(add_prefix_space=False)
    # A small vocabulary: multi-byte characters stay split across tokens, as in real checkpoints' rare words.
    bpe.train_from_iterator(CORPUS, vocab_size=300, min_frequency=1, special_tokens=_SPECIAL, show_progress=False)
    model = json.loads(bpe._tokenizer.to_str())["model"]
    return model["vocab"], [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]


def roberta_style() -> tf.PreTrainedTokenizerBase:
    vocab, merges = _byte_level()
    return tf.RobertaTokenizer(vocab=vocab, merges=merges, model_input_names=["input_ids", "attention_mask"])


def gpt2_style() -> tf.PreTrainedTokenizerBase:
    vocab, merges = _byte_level()
    return tf.GPT2Tokenizer(vocab=vocab, merges=merges, pad_token="<|endoftext|>",
                            model_input_names=["input_ids", "attention_mask"])


def sentencepiece_style() -> tf.PreTrainedTokenizerBase:
    spm = SentencePieceUnigramTokenizer()
    spm.train_from_iterator(CORPUS, vocab_size=120, special_tokens=_SPECIAL[:5], unk_token="<unk>", show_progress=False)
    vocab = [tuple(v) for v in json.loads(spm._tokenizer.to_str())["model"]["vocab"]]
    return tf.XLMRobertaTokenizer(vocab=vocab, model_input_names=["input_ids", "attention_mask"])
