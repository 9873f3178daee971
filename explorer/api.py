"""The public API (re-exported by `explorer`): load, analyze, attribute, attribute_many, inspect, audit, explain_data,
counterfactual, scan (also `explorer.scan(df, ck)`, the callable package, which checks its arguments through the same
function).

Each function is a thin layer over the core the app and the CLI use (explorer/model, explain, data),
so a notebook sees the same numbers as they do. Every result is a frozen dataclass with `to_dict()`
(JSON-safe), `to_json()` and a notebook display (`_repr_html_`). Bad input raises an
`explorer.text.errors.ExplorerError` (a ValueError) whose message is one line.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import pandas as pd

from explorer.data import audit as audit_core
from explorer.data.dataset import frame_table, prepare
from explorer.data.labels import LabelReport, label_report
from explorer.explain import attribution as attribution_core
from explorer.explain import batched
from explorer.explain.attribution import Attribution
from explorer.model import analysis as analysis_core
from explorer.model.analysis import Analysis
from explorer.model.checkpoints import DEFAULT_SEED, Checkpoint, load_checkpoint
from explorer.model.heads import Head, build_head
from explorer.results import JsonResult, html_table
from explorer.runtime.arguments import COUNTS, FOLDS, LENGTHS, SEEDS, STEPS, columns, flag, items, real, require, whole
from explorer.runtime.arguments import text as text_arg
from explorer.text.errors import ExplorerError

log = logging.getLogger("explorer")

# Every argument is checked before any work (explorer/runtime/arguments.py): one ExplorerError line for a wrong
# type, a NaN, a sign or a range.


def _head_arg(function: str, head) -> None:
    require(isinstance(head, (str, Head)), function, "head", head, "a head kind's name or a Head")


def _target(function: str, ck: Checkpoint, target) -> int | None:
    return whole(function, "target", target, (0, max(len(ck.labels) - 1, 0)), optional=True)


# The options attribute and attribute_many pass on to the core, each with its check.
_OPTIONS = {
    "quantity": lambda f, v: text_arg(f, "quantity", v),
    "baseline": lambda f, v: text_arg(f, "baseline", v),
    "n_steps": lambda f, v: whole(f, "n_steps", v, STEPS, optional=True),
    "window": lambda f, v: whole(f, "window", v, COUNTS),
    "tolerance": lambda f, v: real(f, "tolerance", v, 0.0, 1.0),
    "n_samples": lambda f, v: whole(f, "n_samples", v, COUNTS, optional=True),
    "seed": lambda f, v: whole(f, "seed", v, SEEDS),
    "target_token": lambda f, v: whole(f, "target_token", v, (0, COUNTS[1]), optional=True),
    "dtype": lambda f, v: text_arg(f, "dtype", v, optional=True),
    "batch_size": lambda f, v: whole(f, "batch_size", v, COUNTS, optional=True),
    "progress": lambda f, v: require(v is None or callable(v), f, "progress", v, "a function or None"),
}
_MANY_OPTIONS = ("quantity", "baseline", "n_steps", "window", "tolerance", "batch_size", "dtype", "progress")
_ONE_OPTIONS = tuple(k for k in _OPTIONS if k != "batch_size")


def _options(function: str, options: dict, allowed: tuple[str, ...]) -> None:
    for name, value in options.items():
        require(name in allowed, function, "option", name, "one of " + ", ".join(allowed))
        _OPTIONS[name](function, value)

__all__ = ["AuditResult", "DataReport", "analyze", "analyze_tokens", "attribute", "attribute_many", "audit",
           "counterfactual", "explain_data", "inspect", "load", "scan"]


def load(name: str, *, device: str | None = "auto", seed: int = DEFAULT_SEED) -> Checkpoint:
    """A checkpoint by registry name, local folder or hub id, on a device.

    Weights it had to draw are named in one logged warning (transformers' own LOAD REPORT is left out: it
    also lists the weights minilm-sentiment then loads from its assets).

    Args:
        name: a registry name ("minilm", "minilm-sentiment"), a local folder (under the allowed roots,
            HEAD_EXPLORER_ROOTS) or a hub id (when online).
        device: "auto" (cuda, then mps, then cpu), or "cpu", "cuda", "cuda:N", "mps".
        seed: draws any weights the checkpoint lacks, reproducibly.

    Returns:
        The loaded Checkpoint (model, tokenizer, labels, task).
    """
    require(isinstance(name, (str, os.PathLike)), "load", "name", name, "a name or a folder")
    name = os.fspath(name)
    text_arg("load", "device", device, optional=True)
    whole("load", "seed", seed, SEEDS)
    ck = load_checkpoint(name, seed=seed, device=device)
    if ck.new_weights:
        log.warning("%s: new, random weights (%s) drawn from seed %s: its predictions mean nothing until it is "
                    "fine-tuned", ck.name, ", ".join(ck.new_weights), seed)
    return ck


def _checked(ck) -> Checkpoint:
    if not isinstance(ck, Checkpoint):
        raise ExplorerError("api_not_a_checkpoint", kind=type(ck).__name__)
    return ck


def _head(ck: Checkpoint, head: str | Head, seed: int) -> Head:
    return head if isinstance(head, Head) else build_head(ck, head, seed=seed)


def analyze(ck: Checkpoint, text: str, *, head: str | Head = "own", text_pair: str | None = None,
            flow: bool = False, seed: int = DEFAULT_SEED, dtype: str | None = None) -> Analysis:
    """Run `text` through the encoder once and the head step by step.

    Args:
        ck: a checkpoint from `load`.
        text: the text (the first one of a sentence pair).
        head: "own" (the checkpoint's classifier, read step by step), another kind from
            explorer.model.heads.KINDS, or a built Head.
        text_pair: the second text, for sentence-pair models.
        flow: add attention max-flow (slow on long texts).
        seed: draws the weights of a head kind the checkpoint lacks.
        dtype: "float32" (the model's own when None), "bfloat16" or "float16" (explorer/runtime/precision.py;
            the README's "Precision").

    Returns:
        The Analysis: tokens, hidden states, attentions, rollout, logits and probabilities.
    """
    ck = _checked(ck)
    text_arg("analyze", "text", text)
    _head_arg("analyze", head)
    text_arg("analyze", "text_pair", text_pair, optional=True)
    flag("analyze", "flow", flow)
    whole("analyze", "seed", seed, SEEDS)
    text_arg("analyze", "dtype", dtype, optional=True)
    return analysis_core.analyze(ck, _head(ck, head, seed), text, flow=flow, text_pair=text_pair, dtype=dtype)


def analyze_tokens(ck: Checkpoint, text: str, *, head: str | Head = "own", aggregation: str = "simple",
                   seed: int = DEFAULT_SEED):
    """A token classifier (`ck.task == "token-classification"`) on `text`, token by token.

    Per-token logits, softmax and tags, each token's word and character offsets, entities exactly as
    pipeline("token-classification", aggregation_strategy=…) groups them (every strategy in `.entities`,
    `aggregation`'s in `.grouped()`), and the head on every layer for every token.

    Args:
        ck: a token-classification checkpoint from `load`.
        text: the text.
        head: "own" (the checkpoint's classifier), another kind from explorer.model.heads.KINDS, or a built Head.
        aggregation: the aggregation strategy of `.grouped()`: "none", "simple", "first", "average" or "max".
        seed: draws the weights of a head kind the checkpoint lacks.

    Returns:
        explorer.model.token_analysis.TokenAnalysis.
    """
    from explorer.model.token_analysis import analyze_tokens as core

    ck = _checked(ck)
    text_arg("analyze_tokens", "text", text)
    _head_arg("analyze_tokens", head)
    text_arg("analyze_tokens", "aggregation", aggregation)
    whole("analyze_tokens", "seed", seed, SEEDS)
    return core(ck, _head(ck, head, seed), text, aggregation)


def attribute(ck: Checkpoint, text: str, *, method: str = "lig", target: int | None = None, head: str | Head = "own",
              text_pair: str | None = None, seed: int = DEFAULT_SEED, **options) -> Attribution:
    """Token attributions for the `target` label's logit, by `method`.

    Args:
        ck: a checkpoint from `load`.
        text: the text (the first one of a sentence pair).
        method: "lig" (layer integrated gradients, refined until complete within 1%; "ig" is the same),
            "saliency", "input_x_gradient", "occlusion", or the sampled "kernel_shap", "lime", "gradient_shap"
            (seeded, with a second seed's agreement).
        target: the label's index; None: the predicted label.
        head: "own", another kind from explorer.model.heads.KINDS, or a built Head.
        text_pair: the second text, for sentence-pair models.
        seed: draws the weights of a head kind the checkpoint lacks.
        **options: go to explorer.explain.attribution.attribute (quantity, baseline, n_steps, window, tolerance,
            n_samples, seed, dtype; target_token, required for a token classifier).

    Returns:
        The Attribution: a score per token, its completeness error and whether it converged.
    """
    ck = _checked(ck)
    text_arg("attribute", "text", text)
    text_arg("attribute", "method", method)
    _target("attribute", ck, target)
    _head_arg("attribute", head)
    text_arg("attribute", "text_pair", text_pair, optional=True)
    whole("attribute", "seed", seed, SEEDS)
    _options("attribute", options, _ONE_OPTIONS)
    return attribution_core.attribute(ck, _head(ck, head, seed), text=text, method=method, target=target,
                                      text_pair=text_pair, **options)


def attribute_many(ck: Checkpoint, texts: list[str], *, method: str = "lig",
                   target: int | list[int | None] | None = None, head: str | Head = "own",
                   text_pairs: list[str | None] | None = None, seed: int = DEFAULT_SEED,
                   **options) -> list[Attribution]:
    """`attribute` for each of `texts`, in order, lig's integration points in shared batches.

    Each text is still refined to its own 1% (or flagged not converged).

    Args:
        ck: a checkpoint from `load`.
        texts: the texts.
        method: as for `attribute`.
        target: one label for all, or one per text (None: the predicted one).
        head: "own", another kind from explorer.model.heads.KINDS, or a built Head.
        text_pairs: one second text (or None) per text, for sentence-pair models.
        seed: draws the weights of a head kind the checkpoint lacks.
        **options: go to explorer.explain.batched.attribute_many (quantity, baseline, n_steps, tolerance,
            batch_size, dtype).

    Returns:
        One Attribution per text, in order.
    """
    ck = _checked(ck)
    f = "attribute_many"
    listed = items(texts)
    require(listed is not None and all(isinstance(t, str) for t in listed), f, "texts", texts, "a list of strings")
    text_arg(f, "method", method)
    targets = items(target)
    if targets is None:
        _target(f, ck, target)
    else:
        require(len(targets) == len(listed), f, "target", target, "one label per text")
        target = [_target(f, ck, one) for one in targets]
    _head_arg(f, head)
    pairs = items(text_pairs)
    require(text_pairs is None or (pairs is not None and len(pairs) == len(listed)
                                  and all(p is None or isinstance(p, str) for p in pairs)),
           f, "text_pairs", text_pairs, "None or one string (or None) per text")
    whole(f, "seed", seed, SEEDS)
    _options(f, options, _MANY_OPTIONS)
    return batched.attribute_many(ck, _head(ck, head, seed), texts=listed, method=method, target=target,
                                  text_pairs=pairs, **options)


@dataclass(frozen=True, eq=False)
class DataReport(JsonResult):
    """What is wrong with a DataFrame's labels (`report`, the app's data page) as a result."""
    report: LabelReport

    def to_dict(self) -> dict:
        return self.report.to_dict()

    @property
    def issues(self) -> pd.DataFrame:
        """One row per issue found: kind and message."""
        return pd.DataFrame([{"kind": i.kind, "message": str(i.message)} for i in self.report.issues],
                            columns=["kind", "message"])

    def _repr_html_(self) -> str:
        r = self.report
        caption = f"{r.rows} rows; text: {r.text_column}; labels: {', '.join(r.label_columns)}; {r.problem_type}"
        labels = html_table([{"label": n, "count": c} for n, c in r.labels], caption)
        issues = html_table([{"kind": i.kind, "message": str(i.message)} for i in r.issues]) if r.issues else ""
        return labels + issues


def inspect(df: pd.DataFrame, ck: Checkpoint | None = None, *, text: str | None = None,
            label: str | None = None, text_pair: str | None = None) -> DataReport:
    """Check a DataFrame's labels, and with a checkpoint its label names.

    Counts, imbalance, near-duplicate names, 1-based ids, and with a checkpoint its label names and whether its
    id2label looks permuted against the data.

    Args:
        df: the rows.
        ck: a checkpoint from `load`, or None for the data alone.
        text: the text column (guessed when None).
        label: the label column (guessed when None; several 0/1 label columns as "a,b").
        text_pair: the second text of sentence pairs (guessed from premise/hypothesis-like headers when None,
            "" for one text).

    Returns:
        A DataReport; its `issues` is a DataFrame.
    """
    columns("inspect", text=text, label=label, text_pair=text_pair)
    return DataReport(label_report(frame_table(df), text, label, None if ck is None else _checked(ck),
                                   text_pair_column=text_pair))


@dataclass(frozen=True, eq=False)
class AuditResult(JsonResult):
    """Rows whose label is probably wrong (`audit`, the app's audit) as a result."""
    audit: audit_core.LabelAudit

    def to_dict(self) -> dict:
        return self.audit.to_dict()

    @property
    def issues(self) -> pd.DataFrame:
        """The flagged rows, most suspicious first: row, text, given, suggested, score, p_given."""
        return pd.DataFrame(self.audit.issues(), columns=["row", "text", "given", "suggested", "score", "p_given"])

    def _repr_html_(self) -> str:
        s = self.audit.summary()
        caption = (f"{s['flagged']} flagged; estimated noise {s['estimated_noise_rate']:.1%}; "
                   f"{s['folds']} folds; features: {s['features']}")
        return html_table(self.audit.issues()[:50], caption)


def audit(df: pd.DataFrame, ck: Checkpoint, *, text: str | None = None, label: str | None = None,
          folds: int = audit_core.FOLDS, seed: int = 0, max_length: int = 128,
          text_pair: str | None = None) -> AuditResult:
    """Find mislabelled rows with confident learning (cleanlab).

    Out-of-fold predictions of linear heads on the checkpoint's frozen features, then cleanlab's label issues.

    Args:
        df: the rows.
        ck: a checkpoint from `load`.
        text: the text column, as for `inspect`.
        label: the label column, as for `inspect`.
        folds: K, the number of cross-validation folds (2 to 100).
        seed: seeds the folds and the heads.
        max_length: tokens per row.
        text_pair: the second text column, as for `inspect`.

    Returns:
        An AuditResult; `issues` holds the flagged rows.
    """
    ck = _checked(ck)
    columns("audit", text=text, label=label, text_pair=text_pair)
    whole("audit", "folds", folds, FOLDS)
    whole("audit", "seed", seed, SEEDS)
    whole("audit", "max_length", max_length, LENGTHS)
    data = prepare(frame_table(df), text, label, text_pair_column=text_pair)
    return AuditResult(audit_core.audit(ck, data, folds=folds, seed=seed, max_length=max_length))


def explain_data(df: pd.DataFrame, ck: Checkpoint, *, text: str | None = None, label: str | None = None,
                 text_pair: str | None = None, rationale: str | None = None, methods=("lig",),
                 max_rows: int | None = None, head: str | Head = "own", seed: int = DEFAULT_SEED,
                 flagged=()):
    """Explain a DataFrame's rows at once (explorer.explain.dataset).

    The words that drive each predicted label, possible shortcuts, and per method ERASER faithfulness against a
    random ranking, Kendall τ between methods and, with a `rationale` column, token F1, IOU F1 and AUPRC.

    Args:
        df: the rows.
        ck: a checkpoint from `load`.
        text: the text column, as for `inspect`.
        label: the label column, as for `inspect`.
        text_pair: the second text column, as for `inspect`.
        rationale: a column of marked words (the rows' human rationales).
        methods: the attribution methods, as `attribute` names them.
        max_rows: keeps the first rows.
        head: "own", another kind from explorer.model.heads.KINDS, or a built Head.
        seed: seeds the sampled methods and the random ranking.
        flagged: row ids to slice as audit-flagged (e.g. `audit(df, ck).audit.flagged`).

    Returns:
        A DatasetExplanation (its to_dict is what the CLI prints).
    """
    from explorer.explain.dataset import explain_table

    ck = _checked(ck)
    f = "explain_data"
    columns(f, text=text, label=label, text_pair=text_pair, rationale=rationale)
    names = [methods] if isinstance(methods, str) else items(methods)
    require(bool(names) and all(isinstance(m, str) for m in names), f, "methods", methods,
           "a method's name or a list of them")
    whole(f, "max_rows", max_rows, COUNTS, optional=True)
    _head_arg(f, head)
    whole(f, "seed", seed, SEEDS)
    rows = items(flagged)
    require(rows is not None, f, "flagged", flagged, "a list of row numbers")
    flagged = [whole(f, "flagged", row, (0, COUNTS[1])) for row in rows]
    methods = tuple(names)
    return explain_table(ck, _head(ck, head, seed), table=frame_table(df), text_column=text, label_column=label,
                         text_pair_column=text_pair, rationale_column=rationale, methods=methods,
                         flagged=flagged, seed=seed, max_rows=max_rows)


def counterfactual(ck: Checkpoint, text: str, *, text_pair: str | None = None, target: int | str | None = None,
                   max_edits: int = 3, seed: int = 0):
    """The smallest set of word deletions and substitutions found that flips `text`'s prediction.

    On either side of a sentence pair, with the checkpoint's own head: its edits as spans of the original text,
    whether no strict subset of them flips (`minimal`), the probabilities before and after, and the head's view of
    the change (explorer.explain.counterfactual). Where nothing within `max_edits` flips it, `flipped` is False and
    the closest set tried is returned.

    Args:
        ck: a sequence-classification checkpoint from `load`.
        text: the text (the first one of a sentence pair).
        text_pair: the second text, for sentence-pair models.
        target: the label to flip to, its index or name; None: any other label.
        max_edits: the most edits tried in one set.
        seed: breaks ties between equally good sets.

    Returns:
        A Counterfactual.
    """
    from explorer.explain import counterfactual as core

    ck = _checked(ck)
    f = "counterfactual"
    text_arg(f, "text", text)
    text_arg(f, "text_pair", text_pair, optional=True)
    if isinstance(target, str):
        require(target in ck.labels, f, "target", target, "a label of the checkpoint: " + ", ".join(ck.labels)[:200])
        target = ck.labels.index(target)
    _target(f, ck, target)
    whole(f, "max_edits", max_edits, (1, core.MAX_EDITS))
    whole(f, "seed", seed, SEEDS)
    return core.counterfactual(ck, build_head(ck, "own"), text=text, text_pair=text_pair or "",
                               target=None if target is None else int(target), max_edits=max_edits, seed=seed)


def scan(df: pd.DataFrame, ck: Checkpoint, *, text: str | None = None, label: str | None = None,
         text_pair: str | None = None, seed: int = 0, batch_size: int = 64, max_length: int = 128, progress=None,
         checks=None, baseline=None):
    """Every check of the scan that applies to `ck` on a DataFrame's rows, as one ScanReport.

    The same function as `explorer.scan(df, ck)`.

    Args:
        df: the rows.
        ck: a checkpoint from `load`.
        text: the text column, as for `inspect`.
        label: the label column, as for `inspect`; without one, only the checks that need none run.
        text_pair: the second text column, as for `inspect`.
        seed: seeds the typos, splits and samples.
        batch_size: rows per forward pass.
        max_length: tokens per row.
        progress: `progress(fraction, message)`; it may raise to stop.
        checks: only the checks whose id is or starts with one of these (an unknown one is an error that lists
            the known).
        baseline: a checkpoint A to compare `ck` with on the same rows: both are scanned, and the report's
            `baseline` says what changed (explorer.scan.baseline).

    Returns:
        A ScanReport.
    """
    from explorer.scan.arguments import scan as checked_scan

    return checked_scan(df, ck, text=text, label=label, text_pair=text_pair, seed=seed, batch_size=batch_size,
                        max_length=max_length, progress=progress, checks=checks, baseline=baseline)
