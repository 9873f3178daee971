"""Inside the encoder: the head at every layer, head view and model view."""
import numpy as np
import pytest
import torch

from explorer import encoder
from explorer.analysis import analyze
from explorer.heads import build_head, run_head

TEXT = "Unbelievably good acting, terrible plot."


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta"])
def test_layer_logits_apply_the_head_to_every_layer_tiny(tiny, arch):
    ck = tiny[arch]
    for kind in ("own", "mean-linear"):
        head = build_head(ck, kind)
        a = analyze(ck, head, TEXT)
        layers = ck.model.config.num_hidden_layers if arch != "distilbert" else ck.model.config.n_layers
        assert a.layer_logits.shape == (layers + 1, 3)
        np.testing.assert_array_equal(a.layer_logits[-1], a.logits)
        for layer in (0, 1):  # each row on its own equals the batched read-out
            h = torch.as_tensor(a.hidden_states[layer])[None]
            alone = run_head(head, h, torch.ones(1, h.shape[1]))[-1][1][0].numpy()
            np.testing.assert_allclose(a.layer_logits[layer], alone, atol=1e-5)
        assert not np.allclose(a.layer_logits[0], a.layer_logits[-1])


def test_layer_logits_match_hf_modules_on_real_model(sentiment):
    a = analyze(sentiment, build_head(sentiment), TEXT)
    m = sentiment.model
    with torch.inference_mode():
        hs = torch.as_tensor(a.hidden_states)  # (7, seq, 384)
        want = m.classifier(m.bert.pooler(hs)).numpy()  # HF's own pooler and classifier on every layer
        final = m(input_ids=torch.tensor([a.token_ids])).logits[0].numpy()
    np.testing.assert_allclose(a.layer_logits, want, atol=1e-5)
    np.testing.assert_allclose(a.layer_logits[-1], final, atol=1e-5)
    p = encoder.layer_probabilities(a)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-9)
    np.testing.assert_allclose(p[-1], a.softmax)


def test_layer_probabilities_follow_the_problem_type(sentiment):
    import dataclasses

    a = analyze(sentiment, build_head(sentiment), TEXT)
    multi = dataclasses.replace(a, problem_type="multi_label_classification")
    np.testing.assert_allclose(encoder.layer_probabilities(multi), 1 / (1 + np.exp(-a.layer_logits)))
    reg = dataclasses.replace(a, problem_type="regression")
    np.testing.assert_array_equal(encoder.layer_probabilities(reg), a.layer_logits)
