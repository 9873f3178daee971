"""Sampled explainers through Captum: KernelSHAP and LIME over words, and GradientShap over tokens.

They run on the same differentiable path as the other methods (attribution._Model: word embeddings ->
encoder -> head -> quantity) and from the same baseline (each text token's input embedding replaced).

- kernel_shap, lime: one interpretable feature per word (the tokenizer's word ids, grouped as
  attribution.merge_words groups them). A sample switches words on (input embeddings) or off (baseline
  embeddings); special tokens are not features and stay as in the input, which is as in the baseline.
  A word's weight is shared evenly by its tokens, so the word view shows the weight itself.
  Captum's KernelShap (the Shapley kernel, linear regression); Captum's Lime with a ridge model, as the
  lime package does (Captum's default lasso zeroes every word when the target moves by a few hundredths).
- gradient_shap: Captum's GradientShap with the one chosen baseline and no input noise: the expected
  gradient at uniformly random points of the straight path, i.e. integrated gradients by Monte Carlo,
  so its completeness error is reported as lig's is (within 1% only by chance at these sample counts).

Each is sampled, so each runs twice: with `seed` (the scores shown) and with seed + 1, and the result
states the two runs' Spearman correlation over words: how much of the ranking is the sampling's.
Seeds fork the process's torch and numpy generators (Captum draws from both) and leave them as they
were; two sessions sampling at the same moment in one process can still draw from each other's stream.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
import torch
from captum._utils.models.linear_model import SkLearnRidge
from captum.attr import GradientShap, KernelShap, Lime
from scipy.stats import spearmanr

from explorer.explain.request import AttributionError, MethodOutput
from explorer.model.readable import word_index
from explorer.results import JsonResult
from explorer.runtime import budget
from explorer.runtime.device import halving_on_oom

METHODS = ("kernel_shap", "lime", "gradient_shap")
DEFAULT_SAMPLES = {"kernel_shap": 200, "lime": 200, "gradient_shap": 64}
# Caps, per run, in samples × tokens (every sample is one forward at the text's length; gradient_shap's
# one forward and backward): each default fits 512 tokens. A longer text gets fewer samples by default.
SAMPLE_TOKENS_CAP = {"kernel_shap": 200 * 512, "lime": 200 * 512, "gradient_shap": 64 * 512}
MIN_SAMPLES = 8
AGREEMENT_WARN = 0.5  # Spearman between two seeds' runs below which a ranking is mostly the sampling's
SEED = 0


@dataclass(frozen=True)
class Sampling(JsonResult):
    """How a sampled attribution was drawn, and how much two draws agree."""
    n_samples: int  # per run
    seed: int  # the run whose scores are shown
    second_seed: int  # the run it is compared with
    perturbations_per_eval: int  # samples per forward batch (gradient_shap: per forward and backward)
    features: int  # words (kernel_shap, lime) or tokens (gradient_shap) the samples vary
    agreement: float | None  # Spearman over words of the two runs' scores (None: fewer than 2 words, or a tie)
    underdetermined: bool = False  # kernel_shap, lime: no more samples than words, so the regression is not pinned

    def to_dict(self) -> dict:
        return asdict(self)


def samples_for(method: str, n_tokens: int, *, n_samples: int | None = None) -> int:
    """The sample count a run uses: `n_samples`, or the default shrunk to the cap at this length.
    Raises AttributionError (one line) when it is outside [MIN_SAMPLES, cap / tokens]."""
    most = SAMPLE_TOKENS_CAP[method] // max(1, n_tokens)
    n = min(DEFAULT_SAMPLES[method], most) if n_samples is None else int(n_samples)
    if not MIN_SAMPLES <= n <= most:
        raise AttributionError("attribution_samples_cap", method=method, samples=n, tokens=n_tokens,
                               low=MIN_SAMPLES, most=most, cap=SAMPLE_TOKENS_CAP[method])
    return n


@contextmanager
def _seeded(seed: int):
    state = np.random.get_state()
    with torch.random.fork_rng(devices=[]):  # Captum samples on the CPU generators
        torch.manual_seed(seed)
        np.random.seed(seed)
        try:
            yield
        finally:
            np.random.set_state(state)


def attribute_sampled(model, x: torch.Tensor, *, b: torch.Tensor, special, word_ids, method: str,
                      n_samples: int | None = None, seed: int = SEED):
    """One sampled attribution of model (attribution.Forward, its target set) from b to x (1, seq, hidden),
    run twice (seed, seed + 1): the first run's scores (seq,), f(x), f(b), and the Sampling; gradient_shap, a
    path method, also its completeness gap (its Monte-Carlo error) and its gradients as n_steps."""
    seq = x.shape[1]
    n = samples_for(method, seq, n_samples=n_samples)
    f_x, f_b = (float(v) for v in model.value(torch.cat([x, b])))
    groups = np.asarray([w for w in word_index(word_ids, special) if w is not None],
                        dtype=np.int64)  # (text tokens,) word of each
    # Samples per batch within HEAD_EXPLORER_BATCH_MB (gradient_shap keeps activations for its backward).
    per_eval = budget.batch_rows(model.ck.model.config, seq, grad=method == "gradient_shap",
                                device=x.device)
    run = _gradient_shap if method == "gradient_shap" else _perturbation
    runs = []
    for k, s in enumerate((seed, seed + 1)):
        model.ticks.expect(math.ceil(n / per_eval), (k / 2, (k + 1) / 2), f"{method}: {n} samples, seed {s}")
        runs.append(halving_on_oom(lambda size, s=s: run(model, x, b, special, groups, method, n, s, size),
                                   per_eval, x.device))
    (scores, features, words), (_, _, other) = runs
    agreement = None
    if len(words) > 1 and np.ptp(words) > 0 and np.ptp(other) > 0:
        agreement = float(spearmanr(words, other).statistic)
    sampling = Sampling(n_samples=n, seed=seed, second_seed=seed + 1, perturbations_per_eval=per_eval,
                        features=features, agreement=agreement,
                        underdetermined=method != "gradient_shap" and features >= n)
    if method == "gradient_shap":  # a path method: its completeness gap is its Monte-Carlo error
        return MethodOutput(scores, f_x, f_b, float(scores.sum() - (f_x - f_b)), n, sampling)
    return MethodOutput(scores, f_x, f_b, sampling=sampling)


def _perturbation(model, x, b, special, groups: np.ndarray, method: str, n: int, seed: int, per_eval: int):
    """KernelSHAP or LIME over words: (scores (seq,), features, word weights (words,))."""
    text = [i for i, sp in enumerate(special) if not sp]
    n_words = int(groups.max()) + 1 if len(groups) else 0
    if n_words < 2:  # one word: every sample is all-on or all-off, and its weight is the whole difference
        weights = (model.value(x) - model.value(b)) if n_words else np.zeros(0)
    else:
        def forward(e: torch.Tensor) -> torch.Tensor:  # (k, text tokens, hidden) -> (k,)
            full = x.expand(e.shape[0], -1, -1).clone()
            full[:, text] = e
            return model(full)

        algo = KernelShap(forward) if method == "kernel_shap" else Lime(forward, SkLearnRidge(alpha=1.0))
        mask = torch.tensor(groups, device=x.device).view(1, -1, 1)  # (1, text tokens, 1): word per token
        with _seeded(seed), torch.no_grad():
            weights = algo.attribute(x[:, text], baselines=b[:, text], feature_mask=mask, n_samples=n,
                                     perturbations_per_eval=per_eval, return_input_shape=False)
        weights = weights.reshape(-1).detach().double().cpu().numpy()  # (words,)
    scores = np.zeros(x.shape[1])
    scores[text] = weights[groups] / np.bincount(groups)[groups]  # a word's weight shared by its tokens
    return scores, n_words, weights


def _gradient_shap(model, x, b, special, groups, method: str, n: int, seed: int, per_eval: int):
    """GradientShap in batches of per_eval samples: (scores (seq,), tokens, word scores)."""
    total = torch.zeros(x.shape[1], dtype=torch.float64, device=x.device)
    with _seeded(seed):
        for rows in budget.chunks(n, per_eval):
            attr = GradientShap(model).attribute(x, baselines=b, n_samples=len(rows), stdevs=0.0)
            total += attr[0].sum(-1).detach().double() * len(rows)
    scores = (total / n).cpu().numpy()
    text = [i for i, sp in enumerate(special) if not sp]
    return scores, len(text), np.bincount(groups, weights=scores[text])  # word scores: sums of their tokens
