"""The shared tokenizer (model/tokenizer.share) under many threads: each encode gets its own truncation and
padding, whatever the other threads ask at the same moment, and the backend's settings stay as they were.
transformers' fast tokenizers set both on the Rust backend for every call and leave them set, so without
share() a thread can encode under another's max_length."""
from __future__ import annotations

import threading

import pytest
from transformers import AutoTokenizer

from explorer.model import tokenizer as shared_tokenizer
from explorer.model.checkpoints import embedded_encoder_dir

THREADS, ROUNDS = 12, 60
TEXTS = [" ".join(f"word{k}{i} and some more text" for i in range(20 + 7 * k)) for k in range(THREADS)]


def _encode(tok, k: int) -> tuple:
    enc = tok([TEXTS[k], TEXTS[k][: 40 * (k + 1)]], truncation=True, max_length=8 + 9 * k,
              padding=("longest" if k % 2 else "max_length"))
    return tuple(map(tuple, enc["input_ids"])), tuple(map(tuple, enc["attention_mask"]))


def encoded_by_threads(tok) -> list[set]:
    """Per thread k, the set of distinct encodings it got over ROUNDS calls, all threads running at once."""
    seen: list[set] = [set() for _ in range(THREADS)]
    start = threading.Barrier(THREADS)

    def run(k: int) -> None:
        start.wait()
        for _ in range(ROUNDS):
            seen[k].add(_encode(tok, k))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen


@pytest.fixture(scope="module")
def shared():
    return shared_tokenizer.share(AutoTokenizer.from_pretrained(str(embedded_encoder_dir())))


def test_threads_get_what_one_thread_gets(shared):
    before = shared_tokenizer.state(shared)
    alone = [_encode(shared, k) for k in range(THREADS)]
    assert len({len(a[0][0]) for a in alone}) == THREADS  # every thread asks a different length
    assert encoded_by_threads(shared) == [{a} for a in alone]
    assert shared_tokenizer.state(shared) == before
