"""Fine-tuned session models stay within a per-session cap and a process-wide budget, and memory
really goes back: RSS after 20 fine-tunes stays under the base plus the cap."""
import gc
import weakref
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from explorer.data.dataset import prepare, read_csv
from explorer.model.checkpoints import Checkpoint, embedded_encoder_dir
from explorer.runtime.config import ConfigError, env_config
from explorer.runtime.session_models import BUDGET, CAP, ModelStore, model_bytes, release_memory
from explorer.train.finetune import Settings, finetune

ROOT = Path(__file__).resolve().parent.parent
ROWS = "".join(f"sentence number {i} is here,{['pos', 'neg'][i % 2]}\n" for i in range(40))


@pytest.fixture(scope="module")
def ck():
    """A tiny BERT with a real vocabulary: ~16 MB, so each copy shows in RSS."""
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, num_labels=2)
    model = BertForSequenceClassification(cfg).eval().requires_grad_(False)
    model.set_attn_implementation("eager")  # as load_checkpoint does
    tok = AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))
    return Checkpoint("tiny-128", model, tok, (), "test")


@pytest.fixture(scope="module")
def data():
    return prepare(read_csv(("text,label\n" + ROWS).encode()))


def _tuned(ck, data, seed=0):
    return finetune(ck, data, settings=Settings(epochs=1, seed=seed)).checkpoint


def test_cap_per_owner_evicts_the_owners_oldest(ck, data):
    store = ModelStore(per_owner=2, budget_bytes=2**40)
    a, b, c = (_tuned(ck, data, s) for s in range(3))
    other = _tuned(ck, data, 9)
    store.add("s1", a)
    store.add("s2", other)
    store.add("s1", b)
    store.add("s1", c)
    assert store.names("s1") == [b.name, c.name] and store.names("s2") == [other.name]
    assert store.take_evicted("s1") == [(a.name, CAP)] and store.take_evicted("s1") == []
    assert store.get("s1", a.name) is None and store.get("s1", c.name) is c
    assert store.get("s2", c.name) is None  # no session sees another's model


def test_budget_evicts_the_process_oldest_and_drop_owner_frees(ck, data):
    size = model_bytes(ck)
    store = ModelStore(per_owner=5, budget_bytes=int(2.5 * size))
    first, second, third = (_tuned(ck, data, s) for s in range(3))
    store.add("s1", first)
    store.add("s2", second)
    store.add("s2", third)
    assert store.total_bytes <= 2.5 * size
    assert store.take_evicted("s1") == [(first.name, BUDGET)] and store.names("s2") == [second.name, third.name]
    store.drop_owner("s2")
    assert store.total_bytes == 0


def test_bounds_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_SESSION_MODELS", "5")
    monkeypatch.setenv("HEAD_EXPLORER_MODELS_MB", "64")
    store = ModelStore()
    assert store.per_owner == 5 and store.budget_bytes == 64 * 2**20
    monkeypatch.setenv("HEAD_EXPLORER_SESSION_MODELS", "lots")
    with pytest.raises(ConfigError, match='^HEAD_EXPLORER_SESSION_MODELS is "lots": it must be a whole number'):
        ModelStore()  # nonsense is one line naming the variable, not a silent default


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.slow
def test_rss_after_20_finetunes_stays_under_base_plus_cap(ck, data):
    cap = 3
    store = ModelStore(per_owner=cap, budget_bytes=2**40)
    _tuned(ck, data)  # warm-up: feature cache, kernels, allocator
    release_memory()
    base = _rss()
    for seed in range(20):
        store.add("session", _tuned(ck, data, seed))
    gc.collect()
    release_memory()
    grown = _rss() - base
    assert len(store.names("session")) == cap
    # The store keeps 3 copies (48 MB); allow one more for the allocator's working memory.
    # Unbounded, or with freed memory kept by the allocator, the 20 copies would add 320 MB.
    size = model_bytes(ck)
    assert grown < (cap + 1) * size, f"RSS grew {grown / 2**20:.0f} MB; cap {cap * size / 2**20:.0f} MB"


def test_a_kept_model_reads_with_the_shared_tokenizer(ck, data):
    """Training used a private tokenizer (the Trainer's collator sets padding on it); the kept model goes
    back to the shared one, so it costs its weights alone and the memory bound above holds."""
    from explorer.model import tokenizer as shared_tokenizer

    before = shared_tokenizer.state(ck.tokenizer)
    tuned = _tuned(ck, data)
    assert tuned.tokenizer is ck.tokenizer and shared_tokenizer.state(ck.tokenizer) == before


def test_the_app_says_which_model_was_evicted(tiny):
    """The fourth model of a session evicts its first; the next page run says so, and the sidebar offers the rest."""
    import dataclasses

    from explorer.text import i18n
    from explorer.ui import MODELS
    from tests.test_app import _app

    at = _app(None)
    owner = at.session_state["_model_owner"].id
    names = [f"finetuned-evict{i}" for i in range(4)]
    for name in names:
        MODELS.add(owner, dataclasses.replace(tiny["bert"], name=name))
    at.run()
    assert [i.value for i in at.info] == [i18n.t("safety.evicted_cap", "en", name=names[0], n=MODELS.per_owner,
                                                 mb=MODELS.budget_bytes // 2**20)]
    assert [n for n in at.sidebar.selectbox(key="checkpoint").options if n.startswith("finetuned-")] == names[1:]
    at.run()
    assert not at.info  # said once
    MODELS.drop_owner(owner)


def test_a_page_run_makes_one_owner_and_drops_nothing(monkeypatch):
    """The session's owner key is made once: a spare one would die at once and its finalizer would drop
    an owner and run release_memory (a gen-1 collection and malloc_trim) several times per rerun."""
    from explorer import ui
    from tests.test_app import _app

    drops = []
    monkeypatch.setattr(ui.MODELS, "drop_owner", drops.append)
    at = _app(None)
    owner = at.session_state["_model_owner"].id
    at.run()
    gc.collect()
    assert at.session_state["_model_owner"].id == owner and drops == []


def test_release_memory_looks_libc_up_once(monkeypatch):
    import ctypes.util

    from explorer.runtime import session_models

    calls = []
    real = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: calls.append(name) or real(name))
    session_models._libc.cache_clear()
    for _ in range(3):
        release_memory()
    assert calls == ["c"]  # find_library forks `ldconfig -p` on each call


def test_feature_cache_stays_within_its_budget(monkeypatch, ck):
    """Head mode and the audit cache a dataset's features for every session; all of them together stay
    under HEAD_EXPLORER_FEATURES_MB, oldest dropped first, the newest kept (it is being trained on)."""
    import numpy as np

    from explorer.model import features

    passes = []

    def fake_pass(ck, texts, **kwargs):  # 2 rows x 4 pools x 65,536 floats = 2 MB per dataset
        passes.append(tuple(texts))
        return np.zeros((len(texts), len(features.POOLS), 2**16), np.float32)

    monkeypatch.setattr(features, "encoder_features", fake_pass)
    monkeypatch.setattr(features, "_FEATURES", features.ByteCache(lambda: env_config().features_mb, max_entries=4))
    monkeypatch.setenv(features.FEATURES_ENV, "3")
    first, second = ("a", "b"), ("c", "d")
    features.cached_features(ck, first, 16)
    features.cached_features(ck, second, 16)
    assert len(features._FEATURES) == 1  # 4 MB > 3 MB: the older went
    features.cached_features(ck, second, 16)
    assert passes == [first, second]  # the newest is still cached
    monkeypatch.setenv(features.FEATURES_ENV, "100")
    features.cached_features(ck, first, 16)
    assert len(features._FEATURES) == 2 and passes == [first, second, first]


class _Node:
    pass


def test_freeze_long_lived_takes_the_living_out_of_each_collection_and_frees_what_died_since():
    from explorer.runtime.session_models import freeze_long_lived

    try:
        node = _Node()
        node.me, node.payload = node, torch.zeros(1000)  # a cycle: only a collection frees it
        gone = weakref.ref(node)
        freeze_long_lived()
        assert gc.get_freeze_count() > 10_000  # the test process's modules
        del node
        gc.collect()  # Streamlit's pass after a run: the frozen cycle is out of its reach...
        assert gone() is not None
        freeze_long_lived()  # ...until the next load or server report unfreezes and collects first
        assert gone() is None
    finally:
        gc.unfreeze()


def test_the_app_freezes_what_its_first_load_brought_in():
    """After a page's first run has loaded a model, Streamlit's full collection after each later run walks
    what the runs made, not every module's and the model's objects (the server's CPU per edit: bench_classroom)."""
    from streamlit.testing.v1 import AppTest

    from explorer.ui import cache

    gc.unfreeze()
    cache.shared_checkpoint.clear()
    cache._loaded.clear()  # the one load per name that every seed's copy shares: this run loads it again
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        at.switch_page("pages/tokens.py").run()
        assert not at.exception
        frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
        assert frozen > 100_000 and walked < frozen / 2, (frozen, walked)
    finally:
        gc.unfreeze()
