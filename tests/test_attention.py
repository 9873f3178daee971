"""Attention summaries: rollout by definition, flow against the networkx reference, row sums."""
import numpy as np
import pytest

from explorer.model import attention
from explorer.model.analysis import analyze
from explorer.model.heads import build_head

TEXT = "The plot was thin but the music carried every scene."


def _random_attention(seed: int, layers: int = 3, heads: int = 2, n: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.random((layers, heads, n, n)) ** 3  # skewed, so rows differ a lot
    return a / a.sum(-1, keepdims=True)


def test_rollout_follows_definition():
    att = _random_attention(0, layers=4, heads=3, n=5)
    expected = []
    for layer in range(att.shape[0]):
        a = att[layer].mean(0) + np.eye(5)
        a = a / a.sum(1, keepdims=True)
        expected.append(a if layer == 0 else a @ expected[-1])
    np.testing.assert_allclose(attention.attention_rollout(att), np.stack(expected), atol=1e-12)


def test_rollout_order_matters():
    # Jl = Al @ J(l-1), not J(l-1) @ Al: with asymmetric matrices the two differ
    att = _random_attention(1, layers=2, heads=1, n=4)
    a = attention.residual_matrices(att)
    np.testing.assert_allclose(attention.attention_rollout(att)[1], a[1] @ a[0])
    assert not np.allclose(a[1] @ a[0], a[0] @ a[1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flow_matches_networkx_reference_on_random_attention(seed):
    att = _random_attention(seed, layers=3, heads=2, n=6)
    fl = attention.flow(att)
    assert fl.shape == (3, 6)
    np.testing.assert_allclose(fl[-1], attention.flow_reference_last_layer(att), atol=1e-5)
    np.testing.assert_allclose(fl.sum(1), 1.0, atol=1e-9)


def test_flow_from_another_source_matches_reference():
    att = _random_attention(5, layers=2, heads=2, n=5)
    np.testing.assert_allclose(attention.flow(att, source=3)[-1],
                               attention.flow_reference_last_layer(att, source=3), atol=1e-5)


def test_flow_of_first_layer_is_the_source_row():
    att = _random_attention(3, layers=3, heads=2, n=6)
    a = attention.residual_matrices(att)
    fl = attention.flow(att, source=2)
    np.testing.assert_allclose(fl[0], a[0, 2], atol=1e-6)


def test_flow_is_not_rollout():
    # max-flow caps paths by their narrowest edge, so it generally differs from the product
    att = _random_attention(4, layers=3, heads=1, n=6)
    assert not np.allclose(attention.flow(att)[-1], attention.attention_rollout(att)[-1, 0], atol=1e-3)


def test_real_model_rows_sum_to_one_and_flow_matches_reference(sentiment):
    a = analyze(sentiment, build_head(sentiment, "own"), TEXT, flow=True)
    n = len(a.tokens)
    layers, heads = sentiment.model.config.num_hidden_layers, sentiment.model.config.num_attention_heads
    assert a.attentions.shape == (layers, heads, n, n)
    np.testing.assert_allclose(a.attentions.sum(-1), 1.0, atol=1e-5)
    assert a.rollout.shape == (layers, n, n)
    np.testing.assert_allclose(a.rollout.sum(-1), 1.0, atol=1e-6)
    assert a.flow.shape == (layers, n)
    np.testing.assert_allclose(a.flow.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(a.flow[-1], attention.flow_reference_last_layer(a.attentions), atol=1e-5)
    np.testing.assert_allclose(a.cls_rollout, a.rollout[:, 0])
    assert a.cls_attention.shape == (layers, heads, n)


def test_flow_is_none_unless_asked(tiny):
    a = analyze(tiny["bert"], build_head(tiny["bert"], "own"), TEXT)
    assert a.flow is None


def test_analysis_computes_rollout_only_when_read(tiny, monkeypatch):
    """analyze costs one forward: rollout (a sixth of a 256-token analysis when computed with it) waits for
    its first reader, is kept after it, and [CLS]'s rows come without the full products."""
    calls = []
    for name in ("attention_rollout", "cls_rollout"):
        real = getattr(attention, name)
        monkeypatch.setattr(attention, name, lambda att, real=real, name=name: calls.append(name) or real(att))
    a = analyze(tiny["bert"], build_head(tiny["bert"], "own"), TEXT)
    assert calls == []
    cls_rows = a.cls_rollout
    assert calls == ["cls_rollout"] and a.cls_rollout is cls_rows
    # float64 products in another order (vector × matrix against matrix × matrix): rounding of at most about
    # layers × seq × eps per entry (entries are ≤ 1), ~1e-14 here; BLAS builds differ in order and FMA use.
    np.testing.assert_allclose(cls_rows, a.rollout[:, 0], rtol=0, atol=1e-12)
    assert calls == ["cls_rollout", "attention_rollout"] and a.rollout is a.rollout
