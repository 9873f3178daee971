"""Checks of the head itself: weights the checkpoint lacks, a head saved at its initial values, placeholder names,
and what `pipeline()` applies against what the loss trains."""
from __future__ import annotations

import numpy as np

from explorer.data.mapping import checkpoint_issues
from explorer.model.heads import derive
from explorer.model.problem import ProblemType, confusion_counts, pipeline_rule, problem_type
from explorer.scan.base import Found, Finding, ScanData, anything, check, sentence_classifier
from explorer.text.errors import Message


@check("head.new_weights", anything, cost=0.0, deeper="pages/compare.py", cause="fold")
def find_new_weights(data: ScanData, found: Found, progress) -> list[Finding]:
    """Weights the checkpoint's files lack were initialised at load: a head made of them is random."""
    new = tuple(data.ck.new_weights)
    if not new:
        return []
    head = tuple(s.slot + "." for s in derive(data.ck).steps if s.slot)  # the head's own parameter paths
    # A random head makes every prediction noise; a new weight elsewhere (say an unused pooler) is worth a note.
    severity = "major" if any(n.startswith(head) for n in new) or not head else "minor"
    return [Finding("head.new_weights", severity,
                    Message("scan_new_weights", n=len(new), names=", ".join(new[:4]), name=data.ck.name),
                    {"weights": list(new)})]


@check("head.generic_names", anything, cost=0.0, deeper="pages/data.py")
def find_generic_names(data: ScanData, found: Found, progress) -> list[Finding]:
    """Placeholder names (LABEL_k) or an id2label that disagrees with num_labels or label2id."""
    cfg = data.ck.model.config
    out = []
    if len(cfg.id2label) != cfg.num_labels:
        out.append(Finding("head.generic_names", "minor",
                           Message("scan_label_count", labels=len(cfg.id2label), num_labels=cfg.num_labels)))
    for issue in checkpoint_issues(data.ck):  # the Data page's own checkpoint checks, one home
        out.append(Finding("head.generic_names", "minor", issue.message, {"kind": issue.kind}))
    return out


@check("head.output_function", anything, cost=0.0, deeper="pages/logits.py")
def find_output_function(data: ScanData, found: Found, progress) -> list[Finding]:
    """What pipeline() turns logits into, against what the training loss reads them as."""
    cfg = data.ck.model.config
    trained = problem_type(cfg)
    applied = pipeline_rule(cfg)
    fields = {"num_labels": int(cfg.num_labels), "problem_type": str(trained), "loss": trained.loss_name,
              "pipeline_function": applied}
    if trained == ProblemType.REGRESSION and applied == "sigmoid":
        # num_labels = 1 trains as regression (MSE on the raw value), yet pipeline() squashes it with a sigmoid
        return [Finding("head.output_function", "minor", Message("scan_output_regression_sigmoid", **fields), fields)]
    return [Finding("head.output_function", "info", Message("scan_output_function", **fields), fields)]


INIT_STD_TOLERANCE = 0.15  # a weight's std within 15% of initializer_range reads as N(0, range²) as drawn
INFORMATIVE_P = 1e-3  # predictions tied to the given labels beyond this chi-squared p carry information


def initial_values(ck) -> dict | None:
    """The output layer's statistics when they are its initial values (HF's `_init_weights` for a classifier:
    weight ~ N(0, initializer_range²), bias exactly zero), else None. Training moves a bias off zero at its first
    step, so a zero bias beside a weight of exactly the initial spread is a head saved before training."""
    from explorer.model.heads import output_layer
    layer = dict(ck.model.named_modules()).get(output_layer(ck))
    weight, bias = getattr(layer, "weight", None), getattr(layer, "bias", None)
    if weight is None or bias is None or weight.numel() < 32:
        return None
    w = weight.detach().float()
    init = float(getattr(ck.model.config, "initializer_range", 0.02) or 0.02)
    std, mean = float(w.std()), float(w.mean())
    zero_bias = bool((bias.detach() == 0).all())
    if not zero_bias or abs(std - init) > INIT_STD_TOLERANCE * init or abs(mean) > 4 * init / w.numel() ** 0.5:
        return None
    return {"layer": output_layer(ck), "weight_std": round(std, 5), "weight_mean": round(mean, 6),
            "initializer_range": init, "bias_zero": True}


def prediction_information(data: ScanData) -> dict:
    """How much the predictions say about the rows: the mean top probability against uniform (1/labels) and, with
    given labels, a chi-squared test of independence between given and predicted labels (scipy)."""
    from scipy.stats import chi2_contingency
    k = data.logits.shape[1]
    out = {"mean_top_probability": round(float(data.probabilities.max(-1).mean()), 4), "uniform": round(1 / k, 4),
           "distinct_predictions": int(len(np.unique(data.predicted)))}
    if data.given is not None and data.problem == ProblemType.SINGLE:
        names = sorted(set(data.given))
        table = confusion_counts([names.index(g) for g in data.given], data.predicted, len(names), k)
        table = table[:, table.sum(0) > 0]
        if table.shape[0] > 1 and table.shape[1] > 1:
            p = float(chi2_contingency(table).pvalue)
            out["labels_independence_p"] = round(p, 6)
            out["carries_label_information"] = p < INFORMATIVE_P
        else:  # one predicted label for every row: nothing about the labels
            out["labels_independence_p"] = 1.0
            out["carries_label_information"] = False
    return out


@check("head.untrained", sentence_classifier, cost=0.0, deeper="pages/compare.py", cause="fold")
def find_untrained_head(data: ScanData, found: Found, progress) -> list[Finding]:
    """A head present in the checkpoint's files but still at its initial values (saved before training): as
    random as a missing one, though nothing at load says so. One major finding; everything downstream that a
    random head explains is reported under it."""
    if data.ck.new_weights:
        return []  # head.new_weights already says the head is random
    stats = initial_values(data.ck)
    if stats is None:
        return []
    info = prediction_information(data)
    found.results["head.untrained"] = stats | info
    return [Finding("head.untrained", "major",
                    Message("scan_untrained_head", layer=stats["layer"], std=f"{stats['weight_std']:.4f}",
                            init=f"{stats['initializer_range']:.3g}", top=f"{info['mean_top_probability']:.2f}",
                            uniform=f"{info['uniform']:.2f}"),
                    stats | info)]
