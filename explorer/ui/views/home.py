"""The Pipeline page (pages/home.py): the live chain from text to label for a sentence classifier; for a token
classifier its entity view or token view."""
from __future__ import annotations

import pandas as pd
import numpy as np
import streamlit as st

from explorer import plots
from explorer.model import heads, problem
from explorer.model.analysis import MAX_TEXT_CHARS, Analysis
from explorer.model.problem import PIPELINE_FUNCTIONS, ProblemType
from explorer.model.token_analysis import AGGREGATIONS, WORD_AGGREGATIONS, TokenAnalysis, tag_rows
from explorer.model.tokens import reads_line
from explorer.plots.chain import chain_html
from explorer.plots.token_labels import entity_html, label_heatmap
from explorer.text import i18n
from explorer.text.plain import csv_bytes, markdown_code as code
from explorer.ui import draw_chart, draw_table, headers, lang, plain, prediction, selection, step_label, sticky, t, tn


# The three ways in, each a page: (page file, message key, icon).
ENTRY_POINTS = (("pages/lesson.py", "start.lesson", ":material/school:"),
                ("pages/data.py", "start.check", ":material/fact_check:"),
                ("pages/tokens.py", "start.explore", ":material/manage_search:"))


def draw_start() -> None:
    """Where a newcomer starts: the three ways in, then the text box itself (the sidebar's text, which sits
    below the page list there)."""
    st.markdown(t("start.where"))
    for col, (page, key, icon) in zip(st.columns(len(ENTRY_POINTS)), ENTRY_POINTS):
        with col.container(border=True, key=f"start_{key.split('.')[1]}"):
            st.page_link(page, label=t(key), icon=icon)
            st.caption(t(f"{key}_help"))
    ss = st.session_state
    ss["home_text"] = ss.get("text", "")  # whichever box was typed in last
    st.text_area(t("start.text"), key="home_text", height=80, max_chars=MAX_TEXT_CHARS, on_change=_take_text,
                 help=t("start.text_help"))


def _take_text() -> None:
    st.session_state["text"] = st.session_state["home_text"]


def draw_pipeline(a: Analysis | TokenAnalysis) -> None:
    """The Pipeline page's picture of the sidebar's analysis, whichever kind of classifier it is."""
    if isinstance(a, TokenAnalysis):
        _draw_token_pipeline(a)
    else:
        _draw_chain(a)


def _draw_chain(a: Analysis) -> None:
    """A sentence classifier's chain of boxes (text, tokens, encoder, pooled vector, head, logits, probabilities,
    label) with the text's own numbers, the logits and probabilities as bars, and pipeline()'s reading."""
    st.caption(t("home.intro"))  # "each box below": the chain's boxes, which a token classifier's view has not
    if a.truncated_tokens:
        st.warning(tn("home.truncated", a.truncated_tokens, max=a.max_length))
    if a.new_weights:
        st.warning(t("home.untrained", names=plain(", ".join(a.new_weights)), seed=selection().seed), icon="⚠️")
    if a.unused_weights:
        st.warning(tn("arch.unused_weights", len(a.unused_weights), names=plain(", ".join(a.unused_weights))), icon="⚠️")
    n_layers, n_heads = a.attentions.shape[:2]
    step_names = [name for name, _ in a.steps]
    head_desc = " → ".join(step_label(name) for name in step_names)
    pooled = heads.pooling_op(step_names)  # the chain names the selected head's own pooling and modules
    own = problem.ProblemType(a.problem_type).output
    shown = problem.top_labels(a.logits)  # many labels: the largest only (the download has all)
    hidden = len(a.labels) - len(shown)
    more = ", …" if hidden else ""
    chain = [
        (t("home.step_text"), t("home.n_chars_pair", a=len(a.text), b=len(a.text_pair)) if a.text_pair
         else tn("home.n_chars", len(a.text))),
        (t("home.step_tokens"), tn("home.n_tokens", len(a.tokens))),
        (t("home.step_encoder"), t("home.encoder_desc", layers=n_layers, heads=n_heads)),
        (t(f"home.pooled_{pooled}", token=a.shown[a.reads] if a.reads is not None else ""),  # chain_html escapes
         t("home.vector", n=a.steps[0][1].shape[-1])),
        (t("home.step_head"), " → ".join(step_label(name) for name in step_names[1:])),
        (t("home.step_logits"), ", ".join(f"{v:.2f}" for v in a.logits[shown]) + more),
        # The model's own reading (softmax, sigmoid, or a regression's value), then pipeline()'s where it differs.
        (t("home.step_probs") if own == "softmax" else t(f"pipeline.fn_{own}"),
         ", ".join(f"{v:.2f}" for v in (problem.rounded_to_sum(a.scores) if own == "softmax" else a.scores)[shown])
         + more),
        *([(t("pipeline.step"), ", ".join(f"{v:.2f}" for v in a.pipeline_scores[shown]) + more)]
          if a.pipeline_differs else []),
        (t("home.step_label"), prediction(a.predicted)),
    ]
    st.container(key="home_chain").html(chain_html(chain))  # the key: browser tests find the diagram by it
    st.caption(reads_line(a, t, plain))
    st.caption(" ".join(code(tok) for tok in a.shown))
    st.caption(f"{t('home.step_head')}: {head_desc}")
    st.metric(t("home.prediction"), plain(prediction(a.predicted)))  # metric values render Markdown
    names = [a.labels[i] for i in shown]
    left, right = st.columns(2)
    draw_chart(plots.label_bars(names, a.logits[shown], title=t("home.logits_title"), x_title=t("home.label_axis"),
                              y_title=t("home.logit_axis")), "home_logits", left)
    y_range = None if own == "none" else (0, 1)
    if a.pipeline_differs:
        draw_chart(plots.logits.grouped(
            names, {t(f"pipeline.fn_{own}"): a.scores[shown], t("pipeline.step"): a.pipeline_scores[shown]},
            title=t("home.probs_title"), x_title=t("home.label_axis"), y_title=t("home.prob_axis")), "home_probs",
            right)
        draw_pipeline_readings(a)
    else:
        draw_chart(plots.label_bars(names, a.scores[shown], title=t("home.probs_title"), x_title=t("home.label_axis"),
                                  y_title=t("home.prob_axis"), y_range=y_range), "home_probs", right)
    if hidden:
        st.caption(t("home.labels_hidden", shown=len(shown), hidden=hidden, n=len(a.labels)))
        rows = problem.label_rows(a.labels, a.logits, a.softmax, a.sigmoid)
        st.download_button(t("home.labels_csv"), csv_bytes(pd.DataFrame(rows)), file_name="labels.csv",
                           mime="text/csv", key="home_labels_csv", help=t("plain.csv_guard"), on_click="ignore")


def draw_pipeline_readings(a: Analysis) -> None:
    """What transformers' pipeline() returns beside the model's own reading of the same logits: two
    metrics for the top label when the two functions differ (a one-output head: MSE on the raw value,
    a sigmoid in pipeline()), and one sentence saying which tool returns which."""
    own = ProblemType(a.problem_type)
    fn = {f: t(f"pipeline.fn_{f}") for f in PIPELINE_FUNCTIONS}
    if not a.pipeline_differs:
        st.caption(t("pipeline.same", function=fn[a.pipeline_function], loss=own.loss_name))
        return
    k = int(np.argmax(a.pipeline_scores))
    c1, c2 = st.columns(2)
    c1.metric(t("pipeline.own_metric", label=plain(a.labels[k]), function=fn[own.output], loss=own.loss_name),
              f"{a.scores[k]:.4f}")
    c2.metric(t("pipeline.pipe_metric", label=plain(a.labels[k]), function=fn[a.pipeline_function]),
              f"{a.pipeline_scores[k]:.4f}")
    st.caption(t("pipeline.differs", loss=own.loss_name, own=fn[own.output], ptype=a.problem_type,
                 pipe=fn[a.pipeline_function]))


def _draw_token_pipeline(a: TokenAnalysis) -> None:
    """A token classifier's pipeline: the token view (token × label heatmap, each token's tag, the subword that
    carries its word's label) or the entity view (the text with entity spans highlighted, as pipeline() groups
    them, with a legend)."""
    st.caption(t("tokenhead.intro"))
    if a.truncated_tokens:
        st.warning(t("tokenhead.truncated", n=a.truncated_tokens, limit=a.max_length))
    left, right = st.columns(2)
    view = left.radio(t("tokenhead.view"), ("entities", "tokens"), horizontal=True,
                      format_func=lambda v, lg=lang(): i18n.t(f"tokenhead.view_{v}", lg), **sticky("tokenhead_view", "entities", options=("entities", "tokens")))
    strategy = right.selectbox(t("tokenhead.aggregation"), AGGREGATIONS, help=t("tokenhead.aggregation_help"),
                               **sticky("tokenhead_aggregation", a.aggregation, options=AGGREGATIONS))
    found = a.entities[strategy]
    if view == "entities":
        st.html(entity_html(a.text, found, labels=a.labels, legend_title=t("tokenhead.legend"),
                            none_text=t("tokenhead.no_entities")))
        draw_table(headers([{"word": e.word, "entity": e.label, "score": round(e.score, 4), "start": e.start,
                        "end": e.end} for e in found], "tokenhead.col_"))
        return
    draw_chart(label_heatmap(a.shown, a.labels, probs=a.softmax, title=t("tokenhead.heatmap_title"),
                             token_axis=t("tokenhead.token_axis"),
                        label_axis=t("tokenhead.label_axis"), bar_title=t("tokenhead.prob_axis")), "tokenhead_heatmap")
    if strategy in WORD_AGGREGATIONS:
        st.caption(t(f"tokenhead.carrier_{strategy}"))
    draw_table(headers(tag_rows(a, strategy), "tokenhead.col_"))
    return True

