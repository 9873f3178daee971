"""Tokens and [CLS] attention: what the first token reads from the rest of the text."""
import dataclasses

import streamlit as st

from explorer import plots, ui
from explorer.model import attention
from explorer.model.tokens import token_rows
from explorer.ui import current_analysis, selection, t, tn
from explorer.ui.token_view import token_table

st.title(t("tokens.title"))
st.caption(t("tokens.intro"))

ss = st.session_state
ss.setdefault("tokens_flow", False)
ss.setdefault("tokens_hide_special", True)  # [CLS] reading itself would fill the colour scale
token_model = token_table()  # a token classifier: its tokens with their tags (no [CLS] attention views)
c1, c2, c3, c4 = st.columns(4)
flow = not token_model and c3.toggle(t("tokens.flow_toggle"), **ui.sticky("tokens_flow"), help=t("tokens.flow_help"))
hide = not token_model and c4.toggle(t("tokens.hide_special"), **ui.sticky("tokens_hide_special"))
a = None if token_model else current_analysis()
if token_model:
    ui.token_pages.attention()
if a is not None and flow:
    # Flow on a long text takes minutes: ask first, then run it as a job (progress, Stop, the page stays live).
    sel = selection()
    if not attention.flow_is_costly(len(a.tokens)):
        a = current_analysis(flow=True)
    else:  # kept for this session, or another session's on the shared model, or asked for now
        got = ui.memo("flow", sel.key())
        got = ui.cached_flow(sel) if got is None else got
        got = ui.costly_job("tokens_flow", sel, t("safety.flow_costly", n=len(a.tokens), limit=attention.FLOW_WARN_TOKENS),
                            ui.flow_work(sel, a), t("tokens.computing_flow"),
                            size=("tokens", len(a.tokens) ** 3)) if got is None else got
        if got is not None:
            a = dataclasses.replace(a, flow=ui.memo("flow", sel.key(), lambda: got))
if a is not None:
    n_layers, n_heads = a.attentions.shape[:2]
    if ss.get("tokens_layer", 0) > n_layers:
        ss["tokens_layer"] = n_layers
    ss.setdefault("tokens_layer", n_layers)
    if ss.get("tokens_head", "all") != "all" and ss["tokens_head"] >= n_heads:
        ss["tokens_head"] = "all"
    layer = c1.selectbox(t("tokens.layer"), range(1, n_layers + 1), **ui.sticky("tokens_layer"))
    head = c2.selectbox(t("tokens.head"), ["all", *range(n_heads)], **ui.sticky("tokens_head"),
                        format_func=lambda h: t("tokens.all_heads") if h == "all" else str(h))
    if a.truncated_tokens:
        st.warning(tn("tokens.truncated", a.truncated_tokens, max=a.max_length))
    figs = plots.attention.tokens_page(a, layer, None if head == "all" else head, hide, t)
    st.caption(plots.attention.scale_caption(hide, t))
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
        ui.panels.token_table(token_rows(a))
