"""The lesson's charts, step by step: the one source the lesson page and the handout both draw from, so the
handout shows each step's chart as the lesson does (same result, same title, same colour scale)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from explorer.model.problem import prediction_text
from explorer.model.tokens import pair_boundary
from explorer.plots import encoder as encoder_plots
from explorer.plots import lesson as lesson_plots
from explorer.plots.attribution import sorted_bars
from explorer.plots.common import label_bars
from explorer.teach import lesson

P = "lesson.panel."


def parameter_figure(counts: dict[str, int], t: Callable[..., str]) -> go.Figure:
    """Step "finetuning": what each option trains, from lesson.parameter_counts' {"head", "encoder"}."""
    shown = {"feature_extraction": counts["head"], "fine_tuning": counts["head"] + counts["encoder"]}
    return lesson_plots.parameter_bars(shown, {k: t(P + k) for k in shown}, title=t(P + "params_title"),
                                       x_title=t(P + "option_axis"), y_title=t(P + "params_axis"))


def new_head_table(rows: list[dict], t: Callable[..., str]) -> list[dict[str, object]]:
    """Step "new_head"'s table, as the lesson and the handout show it: each layer of the head (Head.parameters_table's
    rows), its shape and parameter count, and whether the checkpoint brought its weights, under translated names."""
    return [{t(P + "name_col"): r["name"], t(P + "shape_col"): r["shape"], t(P + "params_col"): r["params"],
             t(P + "pretrained_col"): t(P + "yes") if r["pretrained"] else t(P + "no")} for r in rows]


def step_figures(step: str, a, t: Callable[..., str], *, seed: int = 0, counts: dict[str, int] | None = None,
                 drops: tuple[tuple[str, ...], np.ndarray] | None = None) -> list[tuple[str, go.Figure]]:
    """Step `step`'s charts for analysis `a`, each with a short name (the lesson's chart key is lesson_<name>):
    [] for a step without one. `t(key, **fmt)` translates; `seed` is the new token head's (the sidebar's);
    `counts` (step "finetuning") the parameter counts; `drops` (step "ablation") leave-one-out's
    (words, support) for the predicted label."""
    if step == "encoder":
        return [("enc", lesson_plots.cls_by_layer(a, t))]
    if step == "cls":
        sims = lesson.cls_similarity(a.hidden_states, a.special)
        return [("cls", lesson_plots.similarity_lines(sims, {k: t(P + k) for k in sims}, title=t(P + "cls_title"),
                                                      x_title=t(P + "layer"), y_title=t(P + "cosine")))]
    if step == "probabilities":
        return [("logits", label_bars(a.labels, a.logits, title=t("home.logits_title"), x_title=t("home.label_axis"),
                                      y_title=t("home.logit_axis"))),
                ("probs", label_bars(a.labels, a.softmax, title=t("home.probs_title"), x_title=t("home.label_axis"),
                                     y_title=t("home.prob_axis"), y_range=(0, 1)))]
    if step == "finetuning" and counts is not None:
        return [("params", parameter_figure(counts, t))]
    if step == "token_heads":
        scores = lesson.token_head_logits(a.hidden_states[-1], len(a.labels), seed)
        return [("tokens", lesson_plots.token_label_heatmap(
            scores, a.shown, labels=a.labels, title=t(P + "token_title"), x_title=t(P + "token"),
            y_title=t(P + "label"), value_name=t(P + "score"),
            pair_at=pair_boundary(a.segments), pair_label=t("arch.boundary")))]
    if step == "layers":
        return [("layers", encoder_plots.readout(a, t))]
    if step == "ablation" and drops is not None:
        words, support = drops
        label = prediction_text(a.predicted, none=t("pipeline.none"))
        return [("ablation",
                 sorted_bars(words, support, title=t(P + "drop_title", label=label), x_title=t(P + "drop_axis"),
                                         y_title=t(P + "word")))]
    return []
