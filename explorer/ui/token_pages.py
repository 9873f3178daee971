"""A token classifier on the pages built for one vector per text: what its head reads and what happens inside
its encoder, per token.

A token classifier's head reads every token's vector and gives each token a tag: the Pooled vector page shows
those vectors, Inside the encoder reads the head out at every layer for a picked token, then the same
attention views. Each function draws its page's view and returns True when the sidebar's checkpoint is a
token classifier; False otherwise (the page then draws the sentence classifier's)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from explorer import plots
from explorer.explain import vectors, whatif
from explorer.model.problem import ProblemType
from explorer.model.token_analysis import TokenEncoder, pipeline_scores, token_encoder
from explorer.plots import encoder as encoder_plots
from explorer.plots.token_labels import entity_html
from explorer.text.errors import ExplorerError
from explorer.ui.cache import ANALYSES, checkpoint, current_head, head, memo
from explorer.ui.encoder_view import attention_views
from explorer.ui.render import chart, error, headers, step_label, table
from explorer.ui.session import selection, sticky, t
from explorer.ui.token_view import current_token_analysis, is_token_model

MAX_STRIPS = 64  # tokens drawn as strips: a longer text shows its first ones (the caption says how many)


def _encoder() -> TokenEncoder | None:
    sel = selection()
    try:
        return ANALYSES.get_or_compute(("token-encoder", sel.name, sel.text, sel.seed),
                                       lambda: token_encoder(checkpoint(sel.name, sel.seed), sel.text))
    except ExplorerError as err:
        error(err)
        return None


def _names(shown) -> list[str]:
    return [f"{i}:{tok}" for i, tok in enumerate(shown)]  # the position keeps repeated tokens apart


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


def _pick(a, key: str) -> int:
    """A token picker (the text's tokens, special ones last to be picked by default); its position."""
    words = [i for i, sp in enumerate(a.special) if not sp] or list(range(len(a.special)))
    ss = st.session_state
    if ss.get(key) not in range(len(a.special)):
        ss[key] = words[0]
    return st.selectbox(t("tokenpages.token"), range(len(a.special)), format_func=lambda i: f"{i}: {a.shown[i]}",
                        help=t("tokenpages.token_help"), **sticky(key))


def picked_token(key: str) -> PickedToken | None:
    """A token classifier's picked token (a picker under `key`), or None after a one-line error."""
    e, a = _encoder(), current_token_analysis()
    if e is None or a is None:
        return None
    k = _pick(a, key)
    st.caption(t("tokenpages.picked", token=a.shown[k], tag=a.tags[k]))
    return PickedToken(hidden_states=e.hidden_states[-1][None, k:k + 1], labels=a.labels, position=k, token=a.shown[k])


def pooled() -> bool:
    """The vectors a token head reads: the last layer's vector of every token, as strips and how alike
    they are, then the head that turns each into that token's logits."""
    if not is_token_model():
        return False
    e, a = _encoder(), current_token_analysis()
    if e is None or a is None:
        return True
    st.info(t("tokenpages.pooled_intro", n=len(e.shown), labels=len(a.labels)))
    last = e.hidden_states[-1][:MAX_STRIPS]  # (tokens, hidden)
    vecs = dict(zip(_names(e.shown), last))
    chart(plots.vectors.strips(vecs, t("tokenpages.strips_title"), t("pooled.dim_axis"), t("tokenpages.token_axis"),
                               t("pooled.value_axis")), "pooled_token_strips")
    if len(e.shown) > MAX_STRIPS:
        st.caption(t("tokenpages.first_tokens", shown=MAX_STRIPS, total=len(e.shown)))
    chart(plots.vectors.cosine_heatmap(list(vecs), vectors.cosine_matrix(vecs), t("tokenpages.cos_title"),
                                       t("pooled.cosine")), "pooled_token_cos")
    hd = current_head()
    st.subheader(t("pooled.head_title", kind=hd.kind))
    st.caption(t("tokenpages.head_per_token") + " " + " → ".join(step_label(s.name) for s in hd.steps))
    yes_no = {True: t("pooled.yes"), False: t("pooled.no"), None: ""}
    table(headers([{"step": step_label(r["step"]), "shape": r["shape"], "params": r["params"],
                    "pretrained": yes_no[r["pretrained"]]} for r in vectors.head_rows(hd)], "pooled.col_"))
    return True


def encoder() -> bool:
    """Inside a token classifier's encoder: its head read out at every layer for one picked token (softmax,
    as pipeline() scores a tag), then the attention views of the same text."""
    if not is_token_model():
        return False
    e, a = _encoder(), current_token_analysis()
    if e is None or a is None:
        return True
    st.subheader(t("encoder.readout_title"))
    k = _pick(a, "encoder_token")
    probs = pipeline_scores(a.layer_logits[:, k])  # (layers+1, labels)
    chart(encoder_plots.layer_readout(probs, a.labels, t("tokenpages.readout_chart", token=a.shown[k]),
                                      t("encoder.layer_axis"), t("encoder.kind_softmax"), t("encoder.embeddings")),
          "encoder_readout")
    st.info(t("encoder.readout_caution"))
    attention_views(e)
    return True


def attention() -> None:
    """A token classifier's attention on the Tokens page: the head view and model view of its encoder (no
    [CLS] row to single out: its head reads every token's own vector)."""
    e = _encoder()
    if e is not None:
        st.caption(t("tokenpages.attention"))
        attention_views(e)


def whatif_tags(text_a: str, text_b: str) -> None:
    """What-if for a token classifier: the entities of both texts, then every word's tag in each, aligned,
    the words whose tag changed marked."""
    sel = selection()
    try:
        r = memo("whatif_tags", (sel.name, sel.head_name, sel.seed, text_a, text_b), lambda: whatif.compare_tags(
            checkpoint(sel.name, sel.seed), head(sel.name, sel.head_name, sel.seed), text_a, text_b))
    except ExplorerError as err:
        error(err)
        return
    st.subheader(t("tokenpages.whatif_title"))
    for name, a in ((t("whatif.a"), r.a), (t("whatif.b"), r.b)):
        st.caption(name)
        st.html(entity_html(a.text, a.grouped(), a.labels, t("tokenhead.legend"), t("tokenhead.no_entities")))
    table(headers([{"word_a": row.a.text if row.a else "", "tag_a": r.tags_a[row.a.word_id] if row.a else "",
                    "word_b": row.b.text if row.b else "", "tag_b": r.tags_b[row.b.word_id] if row.b else "",
                    "changed": r.changed(row)} for row in r.rows], "tokenpages.col_"))
    st.caption(t("tokenpages.whatif_changed", changed=sum(map(r.changed, r.rows)), words=len(r.rows)))
