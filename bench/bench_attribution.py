"""Attribution speed on the embedded sentiment model, 32-token text.

- Time to a completeness error ≤ 1% with our adaptive lig, against Captum's LayerIntegratedGradients
  at its defaults (n_steps=50, one batch, with its convergence delta): target ≥ 2× faster.
- Saliency and input × gradient against one forward + backward pass: target ≤ 2×.
"""
from __future__ import annotations

import torch
from captum.attr import LayerIntegratedGradients

from bench.timing import interleaved, row
from explorer.explain.attribution import attribute, baseline_ids
from explorer.model.checkpoints import load_checkpoint
from explorer.model.heads import build_head

TEXT = ("The battery lasts all day and the screen is bright, but the speakers sound thin "
        "and the charger gets far too hot after an hour of use.")
TOKENS = 32


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    head = build_head(ck, "own")
    enc = ck.tokenizer(TEXT, return_tensors="pt")
    ids = enc["input_ids"]
    assert ids.shape[1] == TOKENS, ids.shape
    special = [i in set(ck.tokenizer.all_special_ids) for i in ids[0].tolist()]
    base = torch.tensor([baseline_ids(ck, ids[0].tolist(), special, "pad")])
    ours = attribute(ck, head, TEXT, "lig")
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
    t_ours, t_captum = interleaved([lambda: attribute(ck, head, TEXT, "lig"), captum_default], rounds=5)

    def forward_backward():
        x = ck.model.get_input_embeddings()(ids).detach().requires_grad_(True)
        ck.model(inputs_embeds=x).logits[0, target].backward()

    t_fb, t_sal, t_ixg = interleaved([
        forward_backward,
        lambda: attribute(ck, head, TEXT, "saliency", target=target),
        lambda: attribute(ck, head, TEXT, "input_x_gradient", target=target),
    ], rounds=15)
    ratio = t_captum / t_ours
    return [
        row(f"lig to error≤1% (ours: {ours.n_steps} steps, error {ours.error:.2%}; Captum n=50 error "
            f"{captum_error:.2%})", t_ours, t_captum, "≤0.5× Captum", ratio >= 2 and ours.error <= 0.01),
        row("saliency vs one forward+backward", t_sal, t_fb, "≤2×", t_sal <= 2 * t_fb),
        row("input×gradient vs one forward+backward", t_ixg, t_fb, "≤2×", t_ixg <= 2 * t_fb),
    ]
