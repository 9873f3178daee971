"""How tokens read: each token's readable form, and its share of its word's text, as the tokenizer
decodes them.

A vocabulary string is not text on every family. Byte-level BPE (GPT-2, RoBERTa, Qwen, ...) stores each
byte as a printable stand-in, so "café" is the tokens "caf" + "Ã©" and 😀 is "ðŁ" + "ĺ" + "Ģ"; byte
fallback (Llama-style SentencePiece) stores "<0xE1>". Only the tokenizer knows how its tokens become
text: `convert_tokens_to_string` (its decoder) is asked, never a list of families or markers.

- Words (`word_pieces`): a word's text is the decoding of all its tokens together, leading space
  dropped. Each token gets the part of that text its decoding adds, so concatenating a word's pieces
  gives the word, even where one character's bytes span two tokens.
- Tokens (`readable_tokens`): a token's vocabulary string where it already reads as text (WordPiece
  "##ing", SentencePiece "▁good", byte-level "Ġgood" stay as they are); otherwise its decoding, with the
  tokenizer's word-start marker kept. A token holding only part of a character's bytes shows "�" (the
  Unicode replacement mark) in place of those bytes: the word view shows the whole character.
"""
from __future__ import annotations

import functools
from typing import Sequence

REPLACEMENT = "\ufffd"  # what decoding with errors="replace" gives for an incomplete UTF-8 sequence


def _decode(tokenizer, tokens: Sequence[str]) -> str:
    return tokenizer.convert_tokens_to_string(list(tokens))


# A token's form and a word's pieces depend only on the tokenizer and the tokens, and a class's texts
# keep meeting the same ones: remembered, they cost nothing the second time (~0.15 ms per short analysis
# otherwise). Keyed by the tokenizer object, which the cache holds: a tokenizer whose checkpoint left the
# model cache stays referenced (a few MB) until its entries age out; the bound keeps a stream of new words
# from growing it.
@functools.lru_cache(maxsize=1 << 16)
def _token_form(tokenizer, tok: str) -> str:
    text = _decode(tokenizer, [tok])
    if text.strip() in tok:  # the decoder only dropped markers: the vocabulary string reads
        return tok
    if text[:1].isspace() and _decode(tokenizer, [tok[0]]).isspace():
        return tok[0] + text.lstrip()  # keep the word-start marker ("Ġcafé", not " café")
    return text


def readable_tokens(tokenizer, tokens: Sequence[str], special: Sequence[bool]) -> tuple[str, ...]:
    """Per token, the form a view shows (see the module docstring); special tokens as they are."""
    return tuple(tok if sp else _token_form(tokenizer, tok) for tok, sp in zip(tokens, special))


def word_index(word_ids: Sequence[int | None], special: Sequence[bool],
               segments: Sequence[int] = ()) -> list[int | None]:
    """Per token, the index of its word among the text's words (0, 1, ... in order), None for a special token:
    the one token-to-word grouping (attribution.merge_words, the sampled methods' features, the dataset
    explanations' words and word_pieces all read it).

    The rule: a special token belongs to no word and ends the word before it. A non-special token continues
    the word of the token just before it when that token is not special and both have the same word id (not
    None) and the same segment (`segments`, a pair's 0/1 per token; empty: one text); otherwise it starts a
    new word, so a non-special token of no word id is a word of its own."""
    segments = segments or (0,) * len(word_ids)
    out: list[int | None] = []
    k = -1
    for t, (wid, sp) in enumerate(zip(word_ids, special)):
        if sp:
            out.append(None)
            continue
        if t == 0 or out[-1] is None or wid is None or wid != word_ids[t - 1] or segments[t] != segments[t - 1]:
            k += 1
        out.append(k)
    return out


def word_pieces(tokenizer, tokens: Sequence[str], special: Sequence[bool], word_ids: Sequence[int | None],
                segments: Sequence[int] = ()) -> tuple[str, ...]:
    """Per token, its share of its word's decoded text (see the module docstring), words as word_index groups
    them; a special token as it is."""
    index = word_index(word_ids, special, segments)
    pieces: list[str] = []
    k = 0
    while k < len(tokens):
        end = k + 1
        if index[k] is not None:
            while end < len(tokens) and index[end] == index[k]:
                end += 1
        pieces += [tokens[k]] if special[k] else _split(tokenizer, tuple(tokens[k:end]))
        k = end
    return tuple(pieces)


@functools.lru_cache(maxsize=1 << 16)
def _split(tokenizer, group: tuple[str, ...]) -> tuple[str, ...]:
    """One word's tokens -> what each adds to the word's decoded text (leading space dropped)."""
    word = _decode(tokenizer, group).lstrip()
    pieces, done = [], ""
    for n in range(1, len(group)):
        # Text up to token n, less a trailing incomplete character: its bytes finish in a later token.
        sofar = _decode(tokenizer, group[:n]).lstrip().rstrip(REPLACEMENT)
        if not sofar.startswith(done) or not word.startswith(sofar):
            return (word,) + ("",) * (len(group) - 1)  # a decoder that is not prefix-stable: the first token holds it
        pieces.append(sofar[len(done):])
        done = sofar
    return (*pieces, word[len(done):])
