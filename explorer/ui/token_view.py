"""The Pipeline page for a token classifier (Checkpoint.task == "token-classification"): a toggle between the
token view (token × label heatmap, each token's tag, the subword that carries its word's label) and the entity
view (the text with entity spans highlighted, as pipeline() groups them, with a legend)."""
from __future__ import annotations

import streamlit as st

from explorer.model.checkpoints import TOKEN_CLASSIFICATION
from explorer.model.token_analysis import AGGREGATIONS, WORD_AGGREGATIONS, TokenAnalysis, analyze_tokens
from explorer.plots.token_labels import entity_html, label_heatmap
from explorer.text.errors import ExplorerError
from explorer.text import i18n
from explorer.ui.cache import ANALYSES, _shared_checkpoint, _shared_head
from explorer.ui.render import chart, error, headers, table
from explorer.ui.session import lang, other_is_empty, selection, sticky, t


def is_token_model() -> bool:
    """The sidebar's checkpoint is a token classifier (False where it cannot load: the page says why)."""
    if other_is_empty():  # current_analysis prompts for the path
        return False
    sel = selection()
    try:
        return _shared_checkpoint(sel.name, sel.seed).task == TOKEN_CLASSIFICATION
    except ExplorerError:
        return False


def current_token_analysis() -> TokenAnalysis | None:
    """The token analysis of the sidebar's picks, every strategy grouped (the page switches between them),
    cached with the other analyses; None after a one-line st.error."""
    sel = selection()
    try:
        return ANALYSES.get_or_compute(("tokens", sel.name, sel.head, sel.text, sel.seed), lambda: analyze_tokens(
            _shared_checkpoint(sel.name, sel.seed), _shared_head(sel.name, sel.head, sel.seed), sel.text,
            strategies=AGGREGATIONS))
    except ExplorerError as err:
        error(err)
        return None


def token_pipeline() -> bool:
    """Draw the token view or the entity view when the checkpoint is a token classifier; False otherwise
    (the page then draws the sentence classifier's pipeline)."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    st.caption(t("tokenhead.intro"))
    if a.truncated_tokens:
        st.warning(t("tokenhead.truncated", n=a.truncated_tokens, limit=a.max_length))
    left, right = st.columns(2)
    view = left.radio(t("tokenhead.view"), ("entities", "tokens"), horizontal=True,
                      format_func=lambda v, lg=lang(): i18n.t(f"tokenhead.view_{v}", lg), **sticky("tokenhead_view", "entities"))
    strategy = right.selectbox(t("tokenhead.aggregation"), AGGREGATIONS, help=t("tokenhead.aggregation_help"),
                               **sticky("tokenhead_aggregation", a.aggregation))
    found = a.entities[strategy]
    if view == "entities":
        st.html(entity_html(a.text, found, a.labels, t("tokenhead.legend"), t("tokenhead.no_entities")))
        table(headers([{"word": e.word, "entity": e.label, "score": round(e.score, 4), "start": e.start,
                        "end": e.end} for e in found], "tokenhead.col_"))
        return True
    chart(label_heatmap(a.shown, a.labels, a.softmax, t("tokenhead.heatmap_title"), t("tokenhead.token_axis"),
                        t("tokenhead.label_axis"), t("tokenhead.prob_axis")), "tokenhead_heatmap")
    if strategy in WORD_AGGREGATIONS:
        st.caption(t(f"tokenhead.carrier_{strategy}"))
    table(headers(_token_rows(a, strategy), "tokenhead.col_"))
    return True


def _token_rows(a: TokenAnalysis, strategy: str) -> list[dict]:
    """One row per token, special tokens as the model sees them: its tag and score, its word (pipeline()'s),
    and whether it carries that word's label under `strategy` (first/average/max; never for none/simple)."""
    rows = []
    for i, (tok, tag) in enumerate(zip(a.shown, a.tags)):
        w = a.token_word[i]
        carries = w is not None and strategy in WORD_AGGREGATIONS and i in a.words[w].carriers(strategy)
        rows.append({"position": i, "token": tok, "special": a.special[i], "tag": tag,
                     "score": round(float(a.softmax[i].max()), 4),
                     "word": a.words[w].text if w is not None else "", "carries": carries})
    return rows


def token_table() -> bool:
    """The Tokens page on a token classifier: every token with its id, offsets, tag and word, special tokens
    included (the page's [CLS] attention views read a sentence head); False for a sentence classifier."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    st.info(t("tokenhead.tokens_page"))
    rows = [{**row, "id": tid, "offsets": "" if o is None else f"{o[0]}–{o[1]}"}
            for row, tid, o in zip(_token_rows(a, "first"), a.token_ids, a.offsets)]
    table(headers(rows, "tokenhead.col_"))
    return True


def token_lesson() -> bool:
    """The lesson on a token classifier: step 8 (sequence vs token heads) with the checkpoint's real token
    head, live: one vector for the text against one vector per token. The other steps need a sentence head,
    which the page says; False where the checkpoint is a sentence classifier (the page draws every step)."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    from explorer.plots import lesson as lesson_plots

    st.info(t("tokenhead.lesson_only"))
    st.subheader(t("lesson.token_heads.title"))
    st.write(t("tokenhead.lesson_body"))
    seq = len(a.tokens)
    table(headers([
        {"head": t("tokenhead.lesson_sequence"), "vectors": 1, "predictions": 1},
        {"head": t("tokenhead.lesson_token"), "vectors": seq, "predictions": seq},
    ], "tokenhead.col_"))
    chart(lesson_plots.token_label_heatmap(a.logits, a.shown, a.labels, t("tokenhead.lesson_heatmap_title"),
                                           t("lesson.panel.token"), t("tokenhead.label_axis"),
                                           t("tokenhead.logit_axis")), "lesson_real_tokens")
    st.caption(t("tokenhead.lesson_tags", tags=" ".join(
        f"{tok}/{tag}" for tok, tag, sp in zip(a.shown, a.tags, a.special) if not sp)))
    return True


def token_logits() -> bool:
    """The Logits page on a token classifier: every token's logits (token × label) and the head read out at
    every layer for every token; False for a sentence classifier."""
    if not is_token_model():
        return False
    a = current_token_analysis()
    if a is None:
        return True
    from explorer.plots import lesson as lesson_plots
    from explorer.plots.token_labels import layer_readout

    chart(lesson_plots.token_label_heatmap(a.logits, a.shown, a.labels, t("tokenhead.logits_title"),
                                           t("tokenhead.token_axis"), t("tokenhead.label_axis"),
                                           t("tokenhead.logit_axis")), "tokenhead_logits")
    chart(layer_readout(a.shown, a.labels, a.layer_logits, t("tokenhead.layers_title"), t("tokenhead.token_axis"),
                        t("tokenhead.layer_axis"), t("tokenhead.prob_axis")), "tokenhead_layers")
    st.caption(t("tokenhead.layers_help"))
    return True
