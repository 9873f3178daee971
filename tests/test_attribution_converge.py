"""lig's adaptive path rule: ≤ 1% completeness on RMSNorm decoders with a zero pad embedding, as on BERT;
reported steps are the gradients computed; a budget too small says so; "ig" is lig, run once."""
import contextlib

import numpy as np
import pytest
import torch

from explorer.explain import attribution, faithfulness
from explorer.explain.attribution import attribute
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from tests.tiny_archs import save

TEXT = "The quick brown fox jumps over the lazy dog, unbelievably."
DECODERS = ("llama", "qwen2", "mistral")


@pytest.fixture(scope="module")
def decoders(tiny_root):
    """Tiny RMSNorm decoders whose pad (baseline) embedding row is zeros: the path starts where
    x/||x|| bends fastest. Scaled embeddings (×30) make the bend 30× sharper."""
    out = {}
    for arch in DECODERS:
        ck = load_checkpoint(str(save(arch, tiny_root / "converge")))
        with torch.no_grad():
            ck.model.get_input_embeddings().weight[ck.tokenizer.pad_token_id].zero_()
        out[arch] = ck
    return out


@contextlib.contextmanager
def _gradient_rows(ck):
    """Counts the rows the encoder runs with gradients (the path's integration points)."""
    rows = [0]

    def hook(_mod, _args, kwargs):
        e = kwargs.get("inputs_embeds")
        if e is not None and e.requires_grad:
            rows[0] += e.shape[0]

    handle = ck.model.base_model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield rows
    finally:
        handle.remove()


@pytest.mark.parametrize("arch", DECODERS)
def test_rmsnorm_decoders_with_a_zero_pad_embedding_converge(decoders, arch):
    ck = decoders[arch]
    head = build_head(ck, "own")
    for target in range(len(ck.labels)):
        r = attribute(ck, head, text=TEXT, method="lig", target=target)
        assert r.error <= 0.01 and r.converged, (target, r.error, r.n_steps)
        base = [i if s else ck.tokenizer.pad_token_id for i, s in zip(r.token_ids, r.special)]
        with torch.no_grad():
            want = ck.model(input_ids=torch.tensor([base])).logits[0, target]
        assert r.f_baseline == pytest.approx(float(want), abs=1e-4)  # the zero row is the baseline


def test_a_sharp_bend_costs_few_gradients_and_each_is_counted(decoders):
    """×30 embeddings: the RMSNorm bend near alpha = 0 is 30× narrower. The old rule (composite
    8-node Gauss-Legendre, halving the worst interval) reported 56-72 steps here, and computed more
    gradients than it reported (the halved intervals' nodes were thrown away); steps are now every
    gradient computed."""
    ck = decoders["llama"]
    w = ck.model.get_input_embeddings().weight
    before = w.detach().clone()
    try:
        with torch.no_grad():
            w.mul_(30)
        with _gradient_rows(ck) as rows:
            for target in range(len(ck.labels)):
                rows[0] = 0
                r = attribute(ck, build_head(ck, "own"), text=TEXT, method="lig", target=target)
                assert r.converged and r.n_steps == rows[0] <= 50, (target, r.n_steps, rows[0])
    finally:
        with torch.no_grad():
            w.copy_(before)


def test_a_split_keeps_every_gradient_it_paid_for(decoders, monkeypatch):
    """No wasted gradients: every point evaluated is evaluated once and is a node of an interval of the
    final partition, so the final rule uses it (a rule whose nodes do not nest, e.g. Gauss-Kronrod or
    a fresh Gauss-Legendre per half, would leave the split interval's points out)."""
    evaluated, paths = [], []
    real_gradients, real_integrate = attribution.path_gradients, attribution.IntegralPath.integrate
    monkeypatch.setattr(attribution, "path_gradients",
                        lambda model, b, d, alphas: evaluated.extend(alphas)
                        or real_gradients(model, b, d=d, alphas=alphas))
    monkeypatch.setattr(attribution.IntegralPath, "integrate", lambda self, tol: paths.append(self) or real_integrate(self, tol))
    ck = decoders["llama"]
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="lig", target=0)
    path, = paths
    used = {a for iv in path.parts for a in path.nodes(iv)}
    assert len(path.parts) >= 4  # intervals were split, more than once
    assert len(evaluated) == len(set(evaluated)) == r.n_steps and set(evaluated) == used and r.converged


def test_bert_stays_within_one_percent_in_no_more_steps(tiny, sentiment):
    """Before: tiny BERT 16 steps (16 gradients); the sentiment model on the bench text 24 steps
    (32 gradients) and on this review 24 (32)."""
    from bench.bench_attribution import TEXT as BENCH

    r = attribute(tiny["bert"], build_head(tiny["bert"], "own"), text=TEXT, method="lig")
    assert r.converged and r.n_steps <= 16
    head = build_head(sentiment, "own")
    with _gradient_rows(sentiment) as rows:
        for text in (BENCH, "I love this movie, the acting is wonderful but the ending was far too long."):
            rows[0] = 0
            r = attribute(sentiment, head, text=text, method="lig")
            assert r.converged and r.n_steps == rows[0] <= 32, (text, r.n_steps)


def test_adaptive_scores_match_captum_with_many_steps(tiny):
    """Per token, not only in sum: the pair's estimate keeps refining after completeness is met."""
    from captum.attr import LayerIntegratedGradients

    ck = tiny["bert"]
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="lig", target=2)
    ids = torch.tensor([r.token_ids])
    base = torch.tensor([[i if s else ck.tokenizer.pad_token_id for i, s in zip(r.token_ids, r.special)]])
    lig = LayerIntegratedGradients(lambda i: ck.model(input_ids=i).logits, ck.model.get_input_embeddings())
    want = lig.attribute(ids, baselines=base, target=2, n_steps=300)[0].sum(-1).detach().numpy()
    assert np.abs(r.scores - want).sum() <= 0.02 * np.abs(want).sum()


def test_a_budget_too_small_says_not_converged(decoders, monkeypatch):
    monkeypatch.setattr(attribution, "MAX_STEPS", 9)  # the first interval and one halving
    ck = decoders["qwen2"]
    r = attribute(ck, build_head(ck, "own"), text=TEXT, method="lig", target=0, tolerance=1e-5)
    assert r.n_steps == 9 and r.converged is False and r.error > 1e-5
    out = r.to_dict()
    assert out["converged"] is False and out["error"] == r.error and out["n_steps"] == 9


def test_ig_is_lig_and_not_offered_or_run_twice(tiny, monkeypatch):
    ck = tiny["bert"]
    head = build_head(ck, "own")
    a, b = attribute(ck, head, text=TEXT, method="ig", target=1), attribute(ck, head, text=TEXT, method="lig", target=1)
    assert a.method == b.method == "lig" and np.array_equal(a.scores, b.scores)
    assert "ig" not in attribution.METHODS
    calls = []
    real = faithfulness.attribute
    monkeypatch.setattr(faithfulness, "attribute", lambda *args, **kw: calls.append(kw["method"]) or real(*args, **kw))
    rows = faithfulness.compare_methods(ck, head, text=TEXT, methods=("lig", "ig", "saliency"))
    assert calls == ["lig", "saliency"] and [r.method for r in rows] == ["lig", "saliency"]


def test_cli_takes_ig_as_lig_without_offering_it(tiny_root, capsys):
    import json

    from explorer.cli import build_parser, main

    assert main(["analyze", "--checkpoint", str(tiny_root / "tiny-bert"), "--text", TEXT, "--json",
                 "--attributions", "ig"]) == 0
    assert json.loads(capsys.readouterr().out)["attributions"]["method"] == "lig"
    analyze = build_parser()._subparsers._group_actions[0].choices["analyze"]
    assert "ig" not in analyze._option_string_actions["--attributions"].choices


def test_path_points_go_in_batches_within_the_budget_and_halve_on_oom(tiny, monkeypatch):
    ck = tiny["bert"]
    head = build_head(ck, "own")
    want = attribute(ck, head, text=TEXT, method="lig", target=1)
    monkeypatch.setattr(attribution.budget, "batch_rows", lambda *a, **k: 3)
    sizes, real = [], attribution.IntegralPath._grads

    def flaky(self, alphas, d, size):
        sizes.append(size)
        if len(sizes) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(self, alphas, d, size)

    monkeypatch.setattr(attribution.IntegralPath, "_grads", flaky)
    batches = []
    handle = ck.model.base_model.register_forward_pre_hook(
        lambda _m, _a, kw: batches.append(kw["inputs_embeds"].shape[0]) if kw["inputs_embeds"].requires_grad else None,
        with_kwargs=True)
    try:
        got = attribute(ck, head, text=TEXT, method="lig", target=1)
    finally:
        handle.remove()
    assert sizes[:2] == [3, 1] and max(batches) <= 3 and sum(batches) == got.n_steps == want.n_steps
    np.testing.assert_allclose(got.scores, want.scores, atol=1e-6)
