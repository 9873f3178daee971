"""Checks of the head itself, before any data: weights the checkpoint lacks, placeholder names, and what
`pipeline()` applies against what the loss trains."""
from __future__ import annotations

from explorer.data.mapping import checkpoint_issues
from explorer.model.heads import derive
from explorer.model.problem import ProblemType, pipeline_rule, problem_type
from explorer.scan.base import Found, Finding, ScanData, anything, check
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
