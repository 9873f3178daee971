"""Landing page: the live pipeline for the typed text."""
import pandas as pd
import streamlit as st

from explorer import plots, ui
from explorer.model import heads, problem
from explorer.model.tokens import reads_line
from explorer.text.plain import csv_bytes, markdown_code as code
from explorer.ui import current_analysis, plain, prediction, selection, step_label, t, tn
from explorer.ui.token_view import token_pipeline

st.title(t("home.title"))
# The chain's narrow boxes break between words, and inside a word only when it alone is too wide.
st.html("<style>.st-key-home_chain p, .st-key-home_chain code {white-space: pre-wrap; word-break: normal !important;"
        " overflow-wrap: anywhere !important;} .st-key-home_chain pre {padding: 0.6rem !important;}</style>")

a = None if token_pipeline() else current_analysis()  # a token classifier: its own view, per token
if a is not None:
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
        (t(f"home.pooled_{pooled}", token=plain(a.shown[a.reads]) if a.reads is not None else ""),
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
    # each box as wide as its longest word (a module path, "attention"), so no word has to break;
    # presenter view's larger type: two rows
    per_row, box = 4 if st.session_state.get("presenter") else len(chain), st.container(key="home_chain")
    for row in (chain[i:i + per_row] for i in range(0, len(chain), per_row)):
        widths = [max(7, *(len(w) + 3 for w in f"{title} {value}".split())) for title, value in row]
        for col, (title, value) in zip(box.columns(widths, gap="small"), row):
            col.markdown(f"**{title}**")
            col.code(value, language=None, wrap_lines=True)
    st.caption(reads_line(a, t, plain))
    st.caption(" ".join(code(tok) for tok in a.shown))
    st.caption(f"{t('home.step_head')}: {head_desc}")
    st.metric(t("home.prediction"), plain(prediction(a.predicted)))  # metric values render Markdown
    names = [a.labels[i] for i in shown]
    left, right = st.columns(2)
    ui.chart(plots.label_bars(names, a.logits[shown], t("home.logits_title"), t("home.label_axis"),
                              t("home.logit_axis")), "home_logits", left)
    y_range = None if own == "none" else (0, 1)
    if a.pipeline_differs:
        ui.chart(plots.logits.grouped(
            names, {t(f"pipeline.fn_{own}"): a.scores[shown], t("pipeline.step"): a.pipeline_scores[shown]},
            t("home.probs_title"), t("home.label_axis"), t("home.prob_axis")), "home_probs", right)
        ui.panels.pipeline_readings(a)
    else:
        ui.chart(plots.label_bars(names, a.scores[shown], t("home.probs_title"), t("home.label_axis"),
                                  t("home.prob_axis"), y_range=y_range), "home_probs", right)
    if hidden:
        st.caption(t("home.labels_hidden", shown=len(shown), hidden=hidden, n=len(a.labels)))
        rows = problem.label_rows(a.labels, a.logits, a.softmax, a.sigmoid)
        st.download_button(t("home.labels_csv"), csv_bytes(pd.DataFrame(rows)), file_name="labels.csv",
                           mime="text/csv", key="home_labels_csv", help=t("plain.csv_guard"), on_click="ignore")
