"""One token-to-word grouping (readable.word_index): the word view (attribution.merge_words), the sampled methods'
word features (sampled.attribute_sampled) and the dataset explanations' words (dataset.words_of) all group as it does,
special tokens included: a special token is no word, stays an entry of its own in the word view, is no
feature of the sampled methods, and ends the word before it."""
import numpy as np
import pytest
import torch

from explorer.explain.attribution import attribute, merge_words
from explorer.explain.dataset import words_of
from explorer.model.heads import build_head
from explorer.model.readable import word_index

torch.set_num_threads(1)

# A pair, a word cut into pieces, and the tokenizer's own separator typed inside text A: a special token
# in the middle of a text, whatever its word id.
TEXTS = [("Unbelievably, tokenization works", None), ("good movie {sep} bad ending", None),
         ("Unbelievably good", "tokenization works")]


def test_the_rule_on_hand_made_ids():
    # specials (None) belong to no word and end the word before them, even with the word id it had; a
    # non-special token of no word id is a word of its own; a new segment starts a new word.
    assert word_index([None, 0, 0, 1, None, 0, None], [True, False, False, False, True, False, True]) == \
        [None, 0, 0, 1, None, 2, None]
    assert word_index([None, 0, 0, 0, None], [True, False, True, False, True]) == [None, 0, None, 1, None]
    assert word_index([0, None, None, 1], [False, False, False, False]) == [0, 1, 2, 3]
    assert word_index([0, 0, 0], [False, False, False], [0, 0, 1]) == [0, 0, 1]


@pytest.mark.parametrize("arch", ["bert", "roberta"])
@pytest.mark.parametrize("text,pair", TEXTS)
def test_every_caller_groups_as_word_index(tiny, arch, text, pair):
    ck = tiny[arch]
    text = text.format(sep=ck.tokenizer.sep_token)
    head = build_head(ck, "own")
    r = attribute(ck, head, text=text, method="kernel_shap", text_pair=pair, n_samples=16)
    index = word_index(r.word_ids, r.special)
    if pair is not None or ck.tokenizer.sep_token in text:
        assert any(r.special[1:-1])  # a special token inside the text, not only at its ends
    n = 1 + max(i for i in index if i is not None)

    # The word view: specials in place, each word's tokens summed in one entry.
    words, sums = merge_words(r.tokens, r.word_ids, scores=r.scores, pieces=r.pieces, special=r.special)
    entries = [("s", k) if i is None else ("w", i) for k, i in enumerate(index)]
    assert len(words) == len(dict.fromkeys(entries))
    want = np.array([sum(r.scores[k] for k, e in enumerate(entries) if e == key) for key in dict.fromkeys(entries)])
    np.testing.assert_allclose(sums, want, atol=1e-12)
    assert r.words()[0] == words

    # The dataset explanations: the same index, the same words and sums, specials left out.
    d_words, d_scores, d_index = words_of(r)
    assert d_index == index and len(d_words) == n
    assert d_words == tuple(w for w, e in zip(words, dict.fromkeys(entries)) if e[0] == "w")
    np.testing.assert_allclose(d_scores, [s for s, e in zip(sums, dict.fromkeys(entries)) if e[0] == "w"],
                               atol=1e-12)

    # The sampled methods: one feature per word, its weight shared evenly by the word's tokens; specials none.
    assert all(r.scores[k] == 0 for k, i in enumerate(index) if i is None)
    for w in range(n):
        shares = [r.scores[k] for k, i in enumerate(index) if i == w]
        assert shares == pytest.approx([shares[0]] * len(shares), abs=1e-9)
    assert len({float(r.scores[k]) * sum(i == index[k] for i in index) for k in range(len(index))
                if index[k] is not None}) > 1  # the words' weights differ: features are words, not one
