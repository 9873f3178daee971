"""Words and tokens read as text on every tokenizer family: byte-level BPE (RoBERTa- and GPT-2-style)
decoded, WordPiece and SentencePiece as before. Tiny tokenizers trained in code (tests/tiny_tokenizers.py)."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from explorer.cli import main
from explorer.explain import attribution as attr
from explorer.explain import whatif
from explorer.explain.attribution import _piece, _strip_start, attribute, merge_words
from explorer.model.analysis import analyze
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.readable import readable_tokens, word_pieces
from explorer.model.tokens import reads_line, token_rows
from tests import tiny_archs, tiny_tokenizers

TEXT = "Tiếng Việt rất hay 😀 café"  # Vietnamese, an emoji, an accent: bytes a byte-level BPE splits
WORDS = tuple(TEXT.split())
MOJIBAKE = ("Ã", "áº", "ðŁ", "»", "\ufffd")  # what undecoded byte-level strings (or a broken join) look like
BYTE_LEVEL = {"bl-roberta": ("roberta", tiny_tokenizers.roberta_style),
              "bl-gpt2": ("gpt2", tiny_tokenizers.gpt2_style)}


@pytest.fixture(scope="module")
def family_root(tiny_root):
    """Tiny checkpoints with byte-level and SentencePiece-style tokenizers, under an allowed root."""
    for name, (arch, make) in {**BYTE_LEVEL, "sp-xlmr": ("xlm-roberta", tiny_tokenizers.sentencepiece_style)}.items():
        tiny_archs.save(arch, tiny_root, tokenizer=make(), name=name)
    return tiny_root


@pytest.fixture(scope="module")
def families(family_root):
    return {name: load_checkpoint(str(family_root / name)) for name in (*BYTE_LEVEL, "sp-xlmr")}


def _text_words(words, special) -> tuple[str, ...]:
    return tuple(w for w in words if w not in special)


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_byte_level_words_read_as_the_text(families, name):
    ck = families[name]
    # The tiny vocabulary really splits these characters' bytes across tokens, and the raw strings are garbled.
    tokens, word_ids, scores = _raw(ck, TEXT)
    raw = merge_words(tokens, word_ids, scores=scores)[0]
    assert any(m in w for w in raw for m in MOJIBAKE)
    a = analyze(ck, build_head(ck, "own"), TEXT)
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="saliency")
    specials = set(ck.tokenizer.all_special_tokens)
    words, scores = r.words()
    assert _text_words(words, specials) == WORDS
    assert np.isclose(scores.sum(), r.scores.sum())  # every token's score lands in one word
    # Word views: the attribution download, what-if's words and leave-one-out's names.
    csv = pd.read_csv(io.StringIO(pd.DataFrame(attr.table(r, "word")).to_csv(index=False)), keep_default_na=False)
    assert _text_words(csv["word"], specials) == WORDS
    assert tuple(w.text for w in whatif.words(r)) == WORDS
    edited = attribute(ck, build_head(ck, "own"), text=TEXT.replace("hay", "dở"), method="saliency")
    rows = whatif.align(whatif.words(r), whatif.words(edited))
    assert [(row.op, row.a.text, row.b.text) for row in rows if row.op != "equal"] == [("replace", "hay", "dở")]
    if name == "bl-roberta":  # gpt2 without a pad token in its config cannot run the padded batch
        assert whatif.leave_one_out(ck, build_head(ck, "own"), a=a)[0] == WORDS
    # Token views: no byte stand-ins; a token holding part of a character's bytes shows "�" there.
    assert a.shown == r.shown and len(a.shown) == len(a.tokens)
    for tok, shown in zip(a.tokens, a.shown):
        assert not any(m in shown for m in MOJIBAKE[:4]), (tok, shown)
    assert any("café" in s for s in a.shown) and any("😀" in s for s in a.shown)
    assert [row["token"] for row in token_rows(a)] == list(a.shown)
    tokens_csv = pd.DataFrame(attr.table(r, "token"))
    assert list(tokens_csv["token"]) == list(r.tokens) and list(tokens_csv["text"]) == list(r.shown)
    if name == "bl-gpt2":  # a causal head reads the last token: "café" whole, shown decoded
        assert a.reads == len(a.tokens) - 1 and "café" in reads_line(a, lambda k, **kw: str(kw.get("token", k)))


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_cli_json_words_are_readable(family_root, capsys, name):
    assert main(["analyze", "--checkpoint", str(family_root / name), "--text", TEXT, "--json",
                 "--attributions", "saliency"]) == 0
    d = json.loads(capsys.readouterr().out)
    att = d["attributions"]
    specials = set(d["tokens"][i] for i, s in enumerate(d["special"]) if s)
    assert _text_words(att["words"], specials) == WORDS
    assert len(att["word_scores"]) == len(att["words"])
    assert len(d["token_text"]) == len(d["tokens"])
    assert not any(m in t for t in d["token_text"] for m in MOJIBAKE[:4])
    assert main(["analyze", "--checkpoint", str(family_root / name), "--text", TEXT]) == 0
    out = capsys.readouterr().out
    assert "café" in out.splitlines()[1] and "Ã" not in out  # the summary's tokens line


def _raw(ck, text):
    """(tokens, word ids, zero scores) as the tokenizer gives them, for merging without pieces."""
    enc = ck.tokenizer(text)
    return ck.tokenizer.convert_ids_to_tokens(enc["input_ids"]), enc.word_ids(), np.zeros(len(enc["input_ids"]))


WORDPIECE_AND_SP_TEXTS = ("Unbelievably, tokenization works", "Tiếng Việt rất hay 😀 café",
                          "the café was good, the plot was not!", "x  y\tz")


@pytest.mark.parametrize("name", ["tiny-bert", "sp-xlmr"])
def test_wordpiece_and_sentencepiece_words_are_as_before(tiny, families, name):
    """WordPiece and SentencePiece strings were already text: the decoded words equal the old hand-stripped
    ones, and tokens show as their vocabulary strings."""
    ck = tiny["bert"] if name == "tiny-bert" else families[name]
    for text in WORDPIECE_AND_SP_TEXTS:
        r = attribute(ck, build_head(ck, "own"), text=text, method="saliency")
        before = []
        for k, (tok, wid) in enumerate(zip(r.tokens, r.word_ids)):  # the merge as it was, by hand
            if k and wid is not None and wid == r.word_ids[k - 1]:
                before[-1] += _piece(tok)
            else:
                before.append(_strip_start(tok))
        assert r.words()[0] == tuple(before), text
        assert r.shown == r.tokens
    if name == "sp-xlmr":  # the SentencePiece tokenizer really marks word starts with ▁
        assert any(tok.startswith("▁") for tok in r.tokens)


def test_pieces_concatenate_to_the_decoded_word_and_hold_back_split_characters(families):
    tok = families["bl-gpt2"].tokenizer
    enc = tok("😀")
    tokens = tok.convert_ids_to_tokens(enc["input_ids"])
    assert len(tokens) > 1  # one character, several byte tokens
    special = [False] * len(tokens)
    pieces = word_pieces(tok, tokens, special, enc.word_ids())
    assert "".join(pieces) == "😀" and pieces[-1] == "😀"  # the character appears once its last byte has
    # A part of a character shows replacement marks (one per byte it cannot place).
    assert all(s and set(s) == {"\ufffd"} for s in readable_tokens(tok, tokens, special))
