"""The sidebar's classifier, whichever kind it is: a sentence classifier's Analysis (one vector per text) or a
token classifier's TokenAnalysis (a tag per token), so that a page asks once and its view draws either; and a
token classifier's picked token, for the pages built for one vector per text (Compare heads, Dropout)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from explorer.model.analysis import Analysis
from explorer.model.checkpoints import TOKEN_CLASSIFICATION
from explorer.model.problem import ProblemType
from explorer.model.token_analysis import AGGREGATIONS, TokenAnalysis, TokenEncoder, analyze_tokens, token_encoder
from explorer.text.errors import ExplorerError
from explorer.ui.cache import ANALYSES, checkpoint, current_analysis, head, selection_key
from explorer.ui.render import show_error
from explorer.ui.session import other_is_empty, selection, sticky, t


ONE_TEXT = ("name", "head_name", "text", "seed")  # the picks a token classifier reads: one text, no text B


def is_token_model() -> bool:
    """The sidebar's checkpoint is a token classifier (False where it cannot load: the page says why)."""
    if other_is_empty():  # current_analysis prompts for the path
        return False
    sel = selection()
    try:  # a session model (a token fine-tune) too, not only the shared ones
        return checkpoint(sel.name, sel.seed).task == TOKEN_CLASSIFICATION
    except ExplorerError:
        return False


def current_token_analysis() -> TokenAnalysis | None:
    """The token analysis of the sidebar's picks, every strategy grouped (the page switches between them),
    cached with the other analyses; None after a one-line st.error."""
    sel = selection()
    try:
        return ANALYSES.get_or_compute(selection_key("tokens", sel, *ONE_TEXT), lambda: analyze_tokens(
            checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed), sel.text, strategies=AGGREGATIONS))
    except ExplorerError as err:
        show_error(err)
        return None


def current_classifier_analysis() -> Analysis | TokenAnalysis | None:
    """The sidebar's analysis, whichever kind of classifier it is; None after a one-line message."""
    return current_token_analysis() if is_token_model() else current_analysis()


def current_token_encoder() -> TokenEncoder | None:
    """A token classifier's encoder pass over the sidebar's text (hidden states and attentions), cached."""
    sel = selection()
    try:
        return ANALYSES.get_or_compute(selection_key("token-encoder", sel, "name", "text", "seed"),  # no head read
                                       lambda: token_encoder(checkpoint(sel.name, sel.seed), sel.text))
    except ExplorerError as err:
        show_error(err)
        return None


@dataclass(frozen=True, eq=False)
class PickedToken:
    """One token of a token classifier's text, as the pages built for one vector per text read an analysis:
    its last-layer vector is the head's whole input for that token's tag."""
    hidden_states: np.ndarray  # (1, 1, hidden): [-1] is the (1, hidden) vector the head reads at this token
    labels: tuple[str, ...]
    position: int
    token: str
    problem_type: str = ProblemType.SINGLE.value  # a tag per token: softmax, as pipeline() scores it
    token_ids: None = None


def draw_token_picker(a: TokenAnalysis, key: str) -> int:
    """A token picker (the text's tokens, special ones last to be picked by default); its position."""
    words = [i for i, sp in enumerate(a.special) if not sp] or list(range(len(a.special)))
    ss = st.session_state
    if ss.get(key) not in range(len(a.special)):
        ss[key] = words[0]
    return st.selectbox(t("tokenpages.token"), range(len(a.special)), format_func=lambda i: f"{i}: {a.shown[i]}",
                        help=t("tokenpages.token_help"), **sticky(key))


def current_vector_analysis(key: str) -> Analysis | PickedToken | None:
    """What a page built for one vector per text reads: a sentence classifier's analysis, or for a token
    classifier the token picked under `key` (the picker drawn here); None after a one-line message."""
    if not is_token_model():
        return current_analysis()
    e, a = current_token_encoder(), current_token_analysis()
    if e is None or a is None:
        return None
    k = draw_token_picker(a, key)
    st.caption(t("tokenpages.picked", token=a.shown[k], tag=a.tags[k]))
    return PickedToken(hidden_states=e.hidden_states[-1][None, k:k + 1], labels=a.labels, position=k, token=a.shown[k])
