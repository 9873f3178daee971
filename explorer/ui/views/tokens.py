"""The Tokens page (pages/tokens.py): a sentence classifier's tokens and what [CLS] reads from them (attention,
rollout, max-flow on request); a token classifier's tokens with their tags and its encoder's attention."""
from __future__ import annotations

import dataclasses

import streamlit as st

from explorer import plots, ui
from explorer.model import attention
from explorer.model.analysis import Analysis
from explorer.model.token_analysis import TokenAnalysis, tag_rows
from explorer.model.tokens import token_rows
from explorer.ui import current_analysis, draw_table, headers, selection, t, tn
from explorer.ui.classifier import current_token_encoder
from explorer.ui.views.encoder import draw_attention_views


def draw_tokens(a: Analysis | TokenAnalysis) -> None:
    """The Tokens page for the sidebar's analysis, whichever kind of classifier it is."""
    if isinstance(a, TokenAnalysis):
        _draw_tagged_tokens(a)
    else:
        _draw_cls_attention(a)


def _draw_tagged_tokens(a: TokenAnalysis) -> None:
    """Every token with its id, offsets, tag and word, special tokens included, then the head view and model
    view of its encoder (no [CLS] row to single out: its head reads every token's own vector)."""
    st.info(t("tokenhead.tokens_page"))
    rows = [{**row, "id": tid, "offsets": "" if o is None else f"{o[0]}–{o[1]}"}
            for row, tid, o in zip(tag_rows(a, "first"), a.token_ids, a.offsets)]
    draw_table(headers(rows, "tokenhead.col_"))
    e = current_token_encoder()
    if e is not None:
        st.caption(t("tokenpages.attention"))
        draw_attention_views(e)


def _draw_cls_attention(a: Analysis) -> None:
    """[CLS]'s attention, rollout and (on request) max-flow, the highlighted text and the mixing chart, then the
    token table."""
    ss = st.session_state
    ss.setdefault("tokens_flow", False)
    ss.setdefault("tokens_hide_special", True)  # [CLS] reading itself would fill the colour scale
    c1, c2, c3, c4 = st.columns(4)
    flow = c3.toggle(t("tokens.flow_toggle"), **ui.sticky("tokens_flow"), help=t("tokens.flow_help"))
    hide = c4.toggle(t("tokens.hide_special"), **ui.sticky("tokens_hide_special"))
    if flow:  # until the flow is there (asked first, in line, running) the page draws without it
        a = _with_flow(a) or a
    n_layers, n_heads = a.attentions.shape[:2]
    # A kept layer or head this model lacks (another model's, or a value sent past the widget) starts over.
    layers, heads = list(range(1, n_layers + 1)), ["all", *range(n_heads)]
    layer = c1.selectbox(t("tokens.layer"), layers, **ui.sticky("tokens_layer", n_layers, options=layers))
    head = c2.selectbox(t("tokens.head"), heads, **ui.sticky("tokens_head", "all", options=heads),
                        format_func=lambda h: t("tokens.all_heads") if h == "all" else str(h))
    if a.truncated_tokens:
        st.warning(tn("tokens.truncated", a.truncated_tokens, max=a.max_length))
    figs = plots.attention.tokens_page(a, layer, head=None if head == "all" else head, hide_special=hide, t=t)
    shown = sum(not s for s in a.special)  # the word columns, which set the scale (word_range)
    st.caption(plots.attention.scale_caption(hide, t, columns=shown))
    st.plotly_chart(figs["cls"], key="tokens_cls")
    st.plotly_chart(figs["rollout"], key="tokens_rollout")
    if "flow" in figs:
        st.plotly_chart(figs["flow"], key="tokens_flow_chart")
    else:
        st.info(t("tokens.flow_off"))
    st.plotly_chart(figs["highlight"], key="tokens_highlight")
    st.caption(t("tokens.mixing_help"))
    st.plotly_chart(figs["mixing"], key="tokens_mixing")
    with st.expander(tn("tokens.table_title", len(a.tokens))):  # the pictures first, the numbers on request
        st.caption(t("tokens.table_help"))
        draw_token_table(token_rows(a))


def _with_flow(a: Analysis) -> Analysis | None:
    """`a` with its max-flow: at once on a short text; on a long one (minutes) asked first, then run as a job
    (progress, Stop, the page stays live). None while there is none yet."""
    if not attention.flow_is_costly(len(a.tokens)):
        return current_analysis(flow=True)
    sel = selection()  # kept for this session, or another session's on the shared model, or asked for now
    got = ui.cached_flow(sel)
    if got is None:
        got = ui.run("tokens_flow", sel.key(), ui.flow_work(sel, a), running=t("tokens.computing_flow"),
                     ask=t("safety.flow_costly", n=len(a.tokens), limit=attention.FLOW_WARN_TOKENS),
                     size=("tokens", len(a.tokens) ** 3))
    return None if got is None else dataclasses.replace(a, flow=got)


_TOKEN_FLAGS = ("special", "continues_word", "unknown")


def draw_token_table(rows: list[dict]) -> None:
    """The Tokens page's table of model.tokens.token_rows: its three flags as one "kind" column (three
    checkbox columns, mostly empty, before), and a blank word for a special token, which has none ("None")."""
    shown = [{**{k: v for k, v in r.items() if k not in _TOKEN_FLAGS},
              "word": "" if r["word"] is None else str(r["word"]),
              "kind": ", ".join(t(f"tokens.col_{k}") for k in _TOKEN_FLAGS if r[k])} for r in rows]
    draw_table(headers(shown, "tokens.col_"))
