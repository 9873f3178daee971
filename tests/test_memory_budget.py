"""Memory budgets on the analysis side: batched views in chunks within HEAD_EXPLORER_BATCH_MB (same
numbers as one batch), the analyses' and pages' results under HEAD_EXPLORER_ANALYSES_MB for all
sessions together, and the pages ask before a long leave-one-out or What-if."""
import numpy as np
import pytest

from explorer.explain import dropout, faithfulness, whatif
from explorer.model.analysis import analyze
from explorer.model.heads import build_head
from explorer.runtime import budget, session_models
from explorer.runtime.config import env_config

LONG = " ".join(f"word{k} good" for k in range(50))  # 100 words, 152 tokens: above both caps


def _loo(monkeypatch, ck, head, a, mb: str):
    monkeypatch.setenv(budget.BATCH_ENV, mb)
    # whole memory batches: the job's pacing by time (HEARD_S) splits them further, and is tested in test_whatif.py
    monkeypatch.setattr(whatif, "HEARD_S", None)
    calls = []
    names, change = whatif.leave_one_out(ck, head, a=a, progress=lambda frac, _msg: calls.append(frac))
    return names, change, calls


@pytest.mark.parametrize("model", ["tiny", "sentiment"])
def test_leave_one_out_in_chunks_equals_one_batch(monkeypatch, request, model):
    """A 1 MB batch budget splits the texts-minus-one-word into many forwards; the numbers are those
    of one padded batch (a large budget) to 1e-6, and progress reaches 1 once per batch."""
    ck = request.getfixturevalue(model)
    ck = ck["bert"] if isinstance(ck, dict) else ck
    head = build_head(ck)
    a = analyze(ck, head, "Unbelievably good acting, terrible plot, and a score I will hum for weeks.")
    names, one, calls = _loo(monkeypatch, ck, head, a, "100000")
    assert len(calls) == 1 and calls[-1] == 1.0
    monkeypatch.setattr(budget, "row_bytes", lambda *args, **kw: 2**19)  # 2 rows per 1 MB batch
    names2, chunked, calls = _loo(monkeypatch, ck, head, a, "1")
    assert len(calls) == -(-(len(names) + 1) // 2) > 4 and calls == sorted(calls) and calls[-1] == 1.0
    assert names2 == names
    np.testing.assert_allclose(chunked, one, atol=1e-6, rtol=0)


def test_batch_rows_follow_the_budget_and_the_length(monkeypatch, sentiment):
    cfg = sentiment.model.config
    monkeypatch.setenv(budget.BATCH_ENV, "256")
    short, long_ = budget.batch_rows(cfg, 16), budget.batch_rows(cfg, 512)
    assert short > 50 * long_ >= 50  # a 512-token row costs far more than a 16-token one
    assert budget.batch_rows(cfg, 512, attentions=True) < long_
    assert budget.batch_rows(cfg, 512, grad=True) < long_
    monkeypatch.setenv(budget.BATCH_ENV, "1")
    assert budget.batch_rows(cfg, 512, grad=True) == 1  # never 0: one row always runs
    monkeypatch.setenv(budget.BATCH_ENV, "512")
    assert budget.batch_rows(cfg, 512) == pytest.approx(2 * long_, abs=1)
    # A 256 MB batch of 512-token MiniLM rows stays within its budget by this estimate.
    assert long_ * budget.row_bytes(cfg, 512) <= 256 * 2**20 < (long_ + 1) * budget.row_bytes(cfg, 512)


def test_leave_one_out_cap_counts_words():
    from explorer.model.analysis import Analysis

    def fake(n):  # only the fields leave-one-out's word count reads
        a = object.__new__(Analysis)
        for k, v in dict(tokens=("[CLS]", *(f"w{i}" for i in range(n)), "[SEP]"), word_ids=(None, *range(n), None),
                         segments=()).items():
            object.__setattr__(a, k, v)
        return a

    assert whatif.loo_words(fake(whatif.LOO_WARN_WORDS)) == whatif.LOO_WARN_WORDS
    assert not whatif.loo_is_costly(fake(whatif.LOO_WARN_WORDS))
    assert whatif.loo_is_costly(fake(whatif.LOO_WARN_WORDS + 1))


def test_faithfulness_and_dropout_in_chunks_equal_one_batch(monkeypatch, tiny):
    ck = tiny["bert"]
    head = build_head(ck, "mean-linear")  # mean pooling materialises (samples, seq, hidden)
    a = analyze(ck, head, "Unbelievably good acting, terrible plot.")
    monkeypatch.setenv(budget.BATCH_ENV, "100000")
    mc = dropout.mc_dropout(head, a.hidden_states[-1], p=0.3, samples=1, seed=0)
    prob = faithfulness.model_prob(ck, head, target=0)
    batch = [list(a.token_ids), list(a.token_ids[:5]), list(a.token_ids[::2])]
    one = prob(batch)
    monkeypatch.setenv(budget.BATCH_ENV, "1")
    monkeypatch.setattr(budget, "row_bytes", lambda *args, **kw: 2**20)  # one row per batch
    np.testing.assert_allclose(prob(batch), one, atol=1e-6, rtol=0)
    forwards = []
    real = dropout.run_head
    monkeypatch.setattr(dropout, "run_head", lambda h, x, *args, **kw: forwards.append(len(x)) or real(h, x, *args, **kw))
    monkeypatch.setattr(budget, "rows_within", lambda per_row, device=None: 3)
    many = dropout.mc_dropout(head, a.hidden_states[-1], p=0.0, samples=10,
                              seed=0)  # p=0: every sample is the eval pass
    assert forwards == [3, 3, 3, 1, 1] and many.logits.shape == (10, 3)
    np.testing.assert_allclose(many.logits, np.repeat(mc.eval_logits[None], 10, axis=0), atol=1e-6)


def test_byte_cache_keeps_the_newest_and_evicts_the_oldest(monkeypatch):
    freed = []
    monkeypatch.setattr(budget, "release_memory", lambda: freed.append(1))
    cache = budget.ByteCache(lambda: 3)
    mb = lambda: np.zeros(2**18, np.float32)  # noqa: E731 - 1 MB
    for k in range(3):
        cache.put(k, mb())
    assert len(cache) == 3 and not freed
    cache.get(0)  # now the newest: 1 is the oldest
    cache.put(3, mb())
    assert 1 not in cache and {0, 2, 3} == {k for k in range(4) if k in cache} and freed
    cache.put(4, np.zeros(2**21, np.float32))  # 8 MB: over the budget alone, and still kept
    assert len(cache) == 1 and 4 in cache
    cache.drop(lambda k: k == 4)
    assert len(cache) == 0


def test_nbytes_counts_nested_arrays_once(sentiment):
    a = analyze(sentiment, build_head(sentiment), "A fine film.")
    arrays = a.hidden_states.nbytes + a.attentions.nbytes + a.rollout.nbytes
    assert arrays < budget.nbytes(a) < arrays + 100_000
    assert budget.nbytes((a, a, [a])) == budget.nbytes(a)


def test_analysis_cache_stays_under_its_budget_with_distinct_long_texts(monkeypatch, sentiment):
    """Twenty distinct 20,000-character texts once kept ~88 MB each (st.cache_data, 128 entries); all the
    cached analyses now stay under HEAD_EXPLORER_ANALYSES_MB, the newest kept, and memory is released."""
    from explorer.ui import cache
    from explorer.ui.session import Selection

    monkeypatch.setattr(cache, "ANALYSES", budget.ByteCache(lambda: env_config().analyses_mb))
    monkeypatch.setenv(budget.ANALYSES_ENV, "200")
    released = []
    real = session_models.release_memory
    monkeypatch.setattr(budget, "release_memory", lambda: released.append(1) or real())
    texts = [f"text {k}: " + "a rather long review of a film " * 700 for k in range(4)]  # 21,000+ characters
    for text in texts:
        a = cache._cached_analysis(Selection("minilm-sentiment", "own", text, 0))
        assert a.truncated_tokens > 0 and cache.ANALYSES.total_bytes <= 200 * 2**20
    assert budget.nbytes(a) > 60 * 2**20  # each is large: without the budget four would hold > 240 MB
    assert 1 <= len(cache.ANALYSES) < len(texts) and released
    assert cache._cached_analysis(Selection("minilm-sentiment", "own", texts[-1], 0)) is a  # the newest is kept


def _long_text_page(page: str):
    from explore_helpers import open_page

    return open_page(page, text=LONG)


@pytest.mark.slow
def test_lesson_asks_before_leave_one_out_on_a_long_text(monkeypatch):
    calls = []
    real = whatif.leave_one_out
    monkeypatch.setattr(whatif, "leave_one_out", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    at = _long_text_page("lesson")
    assert not at.exception and not at.error
    assert any("Leave-one-out on 100 words" in w.value for w in at.warning) and not calls
    at.button(key="lesson_loo_anyway").click().run()
    assert not at.exception and calls == [1]
    at.run()  # the answer is remembered for this text, and the result kept
    assert not at.exception and calls == [1] and not any("Leave-one-out" in w.value for w in at.warning)


@pytest.mark.slow
def test_lesson_drops_the_first_words_of_a_long_text_unless_all_are_asked_for(monkeypatch):
    """A long text's leave-one-out (a job) drops its first LOO_MAX_WORDS words, says so, and runs every word
    once "all words" is ticked and agreed to."""
    from explore_helpers import open_page

    limits = []

    def fake(ck, head, a, progress=None, limit=None):  # the page's side only: the numbers have their own tests
        limits.append(limit)
        progress(1.0, "")
        n = whatif.loo_words(a) if limit is None else limit
        return tuple(f"w{k}" for k in range(n)), np.linspace(-1, 1, n)

    monkeypatch.setattr(whatif, "leave_one_out", fake)
    text = " ".join(f"word{k}" for k in range(whatif.LOO_MAX_WORDS + 40))
    at = open_page("lesson", text=text)
    cap, n = whatif.LOO_MAX_WORDS, int(at.checkbox(key="lesson_loo_all").label.split()[1])  # "All 194 words"
    assert n > cap  # the words within the model's 512 tokens
    assert any(f"Leave-one-out on {cap} words" in w.value for w in at.warning) and not limits
    at.button(key="lesson_loo_anyway").click().run()
    assert not at.exception and limits == [cap]
    assert any(f"The first {cap} of the text's {n} words" in c.value for c in at.caption), [c.value for c in at.caption]
    at.checkbox(key="lesson_loo_all").check().run()  # every word: asked again, for all of them
    assert any(f"Leave-one-out on {n} words" in w.value for w in at.warning) and limits == [cap]
    at.button(key="lesson_loo_anyway").click().run()
    assert not at.exception and limits == [cap, None]
    assert not any("The first" in c.value for c in at.caption)


@pytest.mark.slow
def test_whatif_asks_before_comparing_long_texts(monkeypatch):
    calls = []
    real = whatif.compare_texts
    monkeypatch.setattr(whatif, "compare_texts", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    at = _long_text_page("whatif")
    assert not at.exception and not at.error and not calls
    assert any("Comparing texts of up to 152 tokens" in w.value for w in at.warning) and not at.metric
    at.button(key="whatif_anyway").click().run()
    assert not at.exception and calls == [1] and len(at.metric) == 2


def test_leave_one_out_reads_only_the_reachable_start_of_a_long_text(monkeypatch, tiny):
    """Past the model's window only as many tokens as the longest word can come in when a word is cut:
    the rest is never tokenized per word, and the numbers are those of the whole text."""
    ck = tiny["roberta"]  # 128 tokens
    head = build_head(ck)
    text = " ".join(f"w{k} unbelievably" for k in range(200))
    a = analyze(ck, head, text)
    assert a.truncated_tokens > 300
    assert len(whatif._reach(ck, text)) < len(text) // 3
    names, cut = whatif.leave_one_out(ck, head, a=a)
    monkeypatch.setattr(whatif, "_reach", lambda ck, text: text)
    names2, whole = whatif.leave_one_out(ck, head, a=a)
    assert names2 == names and len(names) > 30
    np.testing.assert_allclose(cut, whole, atol=1e-6, rtol=0)


# ---- per session: HEAD_EXPLORER_SESSION_MB, and what Streamlit keeps of gone widgets -------------------

def test_trim_evicts_a_sessions_oldest_results_first_and_keeps_its_newest(monkeypatch):
    monkeypatch.setenv(budget.ANALYSES_ENV, "1000")
    cache = budget.ByteCache(lambda: 1000)
    mb = np.zeros(2**20, np.uint8)
    for i in range(4):
        cache.put(("me", "page", i), mb.copy())
        cache.put(("you", "page", i), mb.copy())
    mine = lambda key: key[0] == "me"  # noqa: E731
    assert cache.trim(mine, 3 * 2**20, extra=2**20) == 2 * 2**20  # state 1 MB + results 2 MB fit
    assert [k[2] for k in cache._entries if k[0] == "me"] == [2, 3] and len(cache) == 6  # theirs untouched
    assert cache.trim(mine, 0, extra=10 * 2**20) == 2**20 and ("me", "page", 3) in cache  # newest stays


def test_fit_session_counts_the_session_state_with_nbytes(monkeypatch):
    from types import SimpleNamespace

    from explorer.ui import cache as ui_cache

    state = {"text": "x" * 2**20, "upload": SimpleNamespace(), "data": np.zeros(2**20, np.uint8)}
    monkeypatch.setattr(ui_cache.st, "session_state", state)
    assert ui_cache.session_bytes() == 2 * 2**20 + len("textuploaddata")  # strings by length (keys too), the array
    monkeypatch.setenv(budget.SESSION_ENV, "3")
    monkeypatch.setenv(budget.ANALYSES_ENV, "1000")
    monkeypatch.setattr(ui_cache, "ANALYSES", budget.ByteCache(lambda: 1000))
    for i in range(3):
        ui_cache.ANALYSES.put(("me", "attr", i), np.zeros(2**20, np.uint8))
    assert ui_cache.fit_session("me") == 2 * 2**20  # 2 MB of state + 1 MB of results fit 3 MB
    assert [k for k in ui_cache.ANALYSES._entries] == [("me", "attr", 2)]


def test_registrations_of_gone_widgets_are_dropped_with_what_their_callbacks_hold(monkeypatch):
    """Streamlit 1.67 keeps a gone widget's registration for the session's life; a chart with on_select
    gets a new id per figure, and its callback's globals held that page run's analysis."""
    import gc
    import weakref
    from types import SimpleNamespace

    import streamlit.runtime.scriptrunner as scriptrunner
    from streamlit.runtime.state.common import WidgetMetadata
    from streamlit.runtime.state.safe_session_state import SafeSessionState
    from streamlit.runtime.state.session_state import SessionState, Value

    from explorer.ui.session import drop_stale_widget_metadata

    class Held:  # what a page run's globals hold (an analysis, figures)
        pass

    state, held = SessionState(), Held()
    gone = weakref.ref(held)
    widgets = state._new_widget_state

    def register(wid: str, callback=None) -> None:
        widgets.widget_metadata[wid] = WidgetMetadata(wid, lambda v: v, lambda v: v, "string_value",
                                                      callback=callback)

    register("$$ID-old-model_view_chart", callback=lambda run=held: run)  # an earlier figure's chart
    register("$$ID-shown-text")
    widgets.states["$$ID-shown-text"] = Value("kept")  # the browser still shows it
    register("$$ID-last-model_view_chart")
    state._old_state["$$ID-last-model_view_chart"] = None  # the last run's chart
    del held
    ctx = SimpleNamespace(session_state=SafeSessionState(state, lambda: None))
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda: ctx)
    drop_stale_widget_metadata()
    assert set(widgets.widget_metadata) == {"$$ID-shown-text", "$$ID-last-model_view_chart"}
    gc.collect()
    assert gone() is None
