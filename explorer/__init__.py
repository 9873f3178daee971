"""Head Explorer as a library: open up the classification head of a transformer text classifier.

    import explorer
    ck = explorer.load("minilm-sentiment", device="auto")
    a = explorer.analyze(ck, "a wonderful film", head="own")
    explorer.figures.rollout(a)                    # a plotly Figure
    explorer.figures.head_view(a, layer=3).save("head.html")
    attr = explorer.attribute(ck, "a wonderful film", method="lig")
    attrs = explorer.attribute_many(ck, ["a wonderful film", "a dull one"])  # shared batches
    report = explorer.inspect(df, ck, text="text", label="label")
    issues = explorer.audit(df, ck, text="text", label="label")
    why = explorer.explain_data(df, ck, methods=["lig", "saliency"])  # words per label, shortcuts, faithfulness
    report = explorer.scan(df, ck)                 # everything wrong with the model on this data, one report
    cf = explorer.counterfactual(ck, "a wonderful film")  # the smallest edit that flips it

Importing `explorer` is light: torch, transformers and plotly load on first use of a name below.
"""
from __future__ import annotations

import importlib

__all__ = ["analyze", "analyze_tokens", "attribute", "attribute_many", "audit", "counterfactual", "explain_data",
           "figures", "inspect", "load", "scan"]
_API = {"analyze", "analyze_tokens", "attribute", "attribute_many", "audit", "counterfactual", "explain_data", "inspect",
        "load"}


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module("explorer.api"), name)
    if name in ("figures", "scan"):  # a module (scan's package is callable: explorer.scan(df, ck))
        return importlib.import_module(f"explorer.{name}")
    # Python's own wording (the attribute protocol, not a user-facing error: nothing to translate)
    missing = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(missing)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
