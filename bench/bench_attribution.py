"""Attribution speed on the embedded sentiment model, 32-token text, and lig's steps across architectures.

- Time to a completeness error ≤ 1% with our adaptive lig, against Captum's LayerIntegratedGradients
  at its defaults (n_steps=50, one batch, with its convergence delta): target ≥ 2× faster.
- Saliency and input × gradient against one forward + backward pass: target ≤ 2×.
- Saliency at 256 tokens against Captum's Saliency on the same model and text, each from the text with
  the same target, Captum's forward at transformers' default kernel (sdpa): target ≤ 1.0×.
- Steps (gradients) to 1% on a tiny Llama whose pad embedding is zeros (RMSNorm bends fastest at the
  path's start) against a tiny BERT, over every label of two texts: every run converged.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from captum.attr import LayerIntegratedGradients, Saliency

from bench.timing import interleaved, row, text_of_tokens
from explorer.explain.attribution import attribute, baseline_ids
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head
from explorer.model.kernel import attention_kernel

TEXT = ("The battery lasts all day and the screen is bright, but the speakers sound thin "
        "and the charger gets far too hot after an hour of use.")
TOKENS = 32
STEP_TEXTS = ("The quick brown fox jumps over the lazy dog, unbelievably.",
              "I love this movie, the acting is wonderful but the ending was far too long.")


def _steps(model_type: str, root: Path) -> tuple[float, bool]:
    """Mean lig steps to 1% over every label of STEP_TEXTS on a tiny model whose pad row is zeros."""
    from explorer.model.checkpoints import load_checkpoint
    from tests.tiny_archs import save

    ck = load_checkpoint(str(save(model_type, root)))
    with torch.no_grad():
        ck.model.get_input_embeddings().weight[ck.tokenizer.pad_token_id].zero_()
    head = build_head(ck, "own")
    runs = [attribute(ck, head, text=t, method="lig", target=k) for t in STEP_TEXTS for k in range(len(ck.labels))]
    return float(np.mean([r.n_steps for r in runs])), all(r.converged for r in runs)


def steps_rows() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HEAD_EXPLORER_ROOTS"] = os.pathsep.join(
            [str(root), *os.environ.get("HEAD_EXPLORER_ROOTS", "").split(os.pathsep)]).rstrip(os.pathsep)
        (llama, ok_l), (bert, ok_b) = _steps("llama", root), _steps("bert", root)
    return [row("lig steps to error≤1%: tiny Llama, zero pad embedding / tiny BERT (mean, 3 labels × 2 texts)",
                llama, bert, "all converged", ok_l and ok_b, unit="steps")]


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    enc = ck.tokenizer(TEXT, return_tensors="pt")
    ids = enc["input_ids"]
    assert ids.shape[1] == TOKENS, ids.shape
    special = [i in set(ck.tokenizer.all_special_ids) for i in ids[0].tolist()]
    base = torch.tensor([baseline_ids(ck, ids[0].tolist(), special=special, kind="pad")])
    ours = attribute(ck, head, text=TEXT, method="lig")
    target = ours.target

    def forward(input_ids):
        return ck.model(input_ids=input_ids).logits

    captum_lig = LayerIntegratedGradients(forward, ck.model.base_model.embeddings)

    def captum_default():
        return captum_lig.attribute(ids, baselines=base, target=target, return_convergence_delta=True)

    attr, delta = captum_default()
    diff = ours.f_x - ours.f_baseline
    captum_error = abs(float(delta)) / abs(diff)
    # Interleaved rounds, so load from other processes hits both sides alike.
    t_ours, t_captum = interleaved([lambda: attribute(ck, head, text=TEXT, method="lig"), captum_default], rounds=5)

    def forward_backward():
        x = ck.model.get_input_embeddings()(ids).detach().requires_grad_(True)
        ck.model(inputs_embeds=x).logits[0, target].backward()

    t_fb, t_sal, t_ixg = interleaved([
        forward_backward,
        lambda: attribute(ck, head, text=TEXT, method="saliency", target=target),
        lambda: attribute(ck, head, text=TEXT, method="input_x_gradient", target=target),
    ], rounds=15)
    ratio = t_captum / t_ours
    return [
        row(f"lig to error≤1% (ours: {ours.n_steps} steps, error {ours.error:.2%}; Captum n=50 error "
            f"{captum_error:.2%})", t_ours, t_captum, "≤0.5× Captum", ratio >= 2 and ours.error <= 0.01),
        row("saliency vs one forward+backward", t_sal, t_fb, "≤2×", t_sal <= 2 * t_fb),
        row("input×gradient vs one forward+backward", t_ixg, t_fb, "≤2×", t_ixg <= 2 * t_fb),
        *steps_rows(),
        *saliency_rows(),
    ]


def captum_saliency(ck, text: str, target: int) -> np.ndarray:
    """Captum's Saliency on the model's own forward at HF's default kernel (sdpa), from the text, on the model's
    device: (seq,) scores, summed over the hidden dimensions as ours are."""
    enc = {k: v.to(ck.model.device) for k, v in ck.tokenizer(text, return_tensors="pt").items()}
    x = ck.model.get_input_embeddings()(enc.pop("input_ids")).detach().requires_grad_(True)
    with attention_kernel(ck, "sdpa"):
        attr = Saliency(lambda e: ck.model(inputs_embeds=e, **enc).logits).attribute(x, target=target, abs=True)
    return attr[0].sum(-1).detach().double().cpu().numpy()


def saliency_rows(tokens: int = 256) -> list[dict]:
    """Ours (the analysis's own head, attention switched to sdpa) against Captum's Saliency on the model's own
    forward at HF's default kernel, both from the text to one score per token; the scores must agree."""
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    text = text_of_tokens(ck.tokenizer, tokens, TEXT)
    target = attribute(ck, head, text=text, method="saliency").target

    def captum():
        return captum_saliency(ck, text, target)

    agree = bool(np.allclose(attribute(ck, head, text=text, method="saliency", target=target).scores, captum(),
                             rtol=1e-4, atol=1e-6))
    fns = [lambda: attribute(ck, head, text=text, method="saliency", target=target), captum]
    # CPU time of this thread (one torch thread: all the work, backward included), then wall time, as in
    # bench_explore.analyze_rows.
    (t_ours, t_captum), (w_ours, w_captum) = (interleaved(fns, rounds=25, clock=clock)
                                              for clock in (time.thread_time, time.perf_counter))
    return [row(f"saliency at {tokens} tokens vs Captum Saliency (sdpa), same scores: {agree} (CPU time; wall "
                f"clock {w_ours / w_captum:.2f}×)", t_ours, t_captum, "≤1.0× Captum", agree and t_ours <= t_captum)]
