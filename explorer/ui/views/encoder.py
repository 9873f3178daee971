"""The Inside-the-encoder page (pages/encoder.py): the head read out at every layer, then the attention views,
the head view and the model view, of any text the encoder read (the Tokens page draws them too).

draw_attention_views reads an Analysis or a token classifier's TokenEncoder: both carry `attentions`, `shown`,
`special` and `segments`, which is all these views read."""
from __future__ import annotations

import streamlit as st

from explorer.explain import encoder
from explorer.model.analysis import Analysis
from explorer.model.token_analysis import TokenAnalysis, token_pipeline_scores
from explorer.plots import encoder as encoder_plots
from explorer.plots.attention import clips
from explorer.plots.vectors import ROBUST_PERCENTILE
from explorer.ui import draw_chart, plotly_js_src, sticky, t
from explorer.ui.classifier import current_token_encoder, draw_token_picker

MODEL_VIEW = "model_view_chart"  # a chart: its selection cannot be set, so it is not sticky


def draw_encoder(a: Analysis | TokenAnalysis) -> None:
    """The head read out at every layer (a token classifier's for one picked token, softmax as pipeline()
    scores a tag), then the attention views of the same text."""
    st.subheader(t("encoder.readout_title"))
    if isinstance(a, TokenAnalysis):
        e = current_token_encoder()
        if e is None:
            return
        k = draw_token_picker(a, "encoder_token")
        probs = token_pipeline_scores(a.layer_logits[:, k])  # (layers+1, labels)
        draw_chart(encoder_plots.readout_lines(probs, a.labels, title=t("tokenpages.readout_chart", token=a.shown[k]),
                                               x_title=t("encoder.layer_axis"), y_title=t("encoder.kind_softmax"),
                                               embeddings=t("encoder.embeddings")),
              "encoder_readout")
    else:
        e = a
        st.plotly_chart(encoder_plots.readout(a, t), key="encoder_readout")
    st.info(t("encoder.readout_caution"))
    draw_attention_views(e)


def _open_clicked_head() -> None:
    ss = st.session_state
    points = ss[MODEL_VIEW].selection.points
    if points:
        ss["encoder_layer"], ss["encoder_head"] = (int(v) for v in points[0]["customdata"])


def draw_attention_views(a) -> None:
    """The head view (one layer, one head or all, special tokens hidden by default) with its download, then
    the model view, whose click opens that head above."""
    ss = st.session_state
    st.subheader(t("encoder.headview_title"))
    n_layers, n_heads = a.attentions.shape[:2]
    ss.setdefault("encoder_hide_special", True)  # [CLS] and [SEP] would take most of every row
    c1, c2, c3 = st.columns(3)
    # A kept layer or head this model lacks (another model's) starts over.
    layers, head_choices = list(range(1, n_layers + 1)), ["all", *range(n_heads)]
    layer = c1.selectbox(t("encoder.layer"), layers, **sticky("encoder_layer", n_layers, options=layers))
    head = c2.selectbox(t("encoder.head"), head_choices, **sticky("encoder_head", "all", options=head_choices),
                        format_func=lambda h: t("encoder.all_heads") if h == "all" else str(h))
    hide = c3.toggle(t("encoder.hide_special"), **sticky("encoder_hide_special"))
    view = encoder.head_view(a, layer, head=None if head == "all" else head, hide_special=hide)
    starts = encoder.windows(len(view.tokens))
    if len(starts) > 1:  # a long text: one window of tokens at a time
        n, size = len(view.tokens), encoder.HEAD_VIEW_TOKENS
        if ss.get("encoder_window", 0) not in starts:
            ss["encoder_window"] = 0
        start = st.selectbox(t("encoder.window"), starts, **sticky("encoder_window"),
                             format_func=lambda s: f"{s + 1}–{min(s + size, n)}")
        st.caption(t("encoder.window_note", size=size, n=n))
        view = encoder.window(view, start)
    heads = t("encoder.all_heads") if head == "all" else f"{t('encoder.head_name')} {head}"
    title = t("encoder.headview_chart", layer=layer, heads=heads) + (t("encoder.renormalised") if hide else "")
    fig = encoder_plots.head_view_chart(view, title, head_name=t("encoder.head_name"), text_b=t("encoder.text_b"),
                                        words={k: t(f"encoder.hover_{k}") for k in encoder_plots.HOVER_WORDS})
    st.iframe(encoder_plots.head_view_html(fig, title, plotly_src=plotly_js_src()), height=int(fig.layout.height) + 16)
    st.caption(t("encoder.headview_help"))

    def standalone() -> str:  # built on click: the download inlines plotly.js (4.8 MB)
        return encoder_plots.head_view_html(fig, title)

    st.download_button(t("encoder.download"), standalone, file_name=f"head-view-layer{layer}-{head}.html",
                       mime="text/html", help=t("encoder.download_help"), key="dl_head_view", on_click="ignore")

    st.subheader(t("encoder.modelview_title"))
    clipped = clips(sum(not s for s in a.special))  # the word columns, as on the Tokens page
    st.plotly_chart(encoder_plots.model_view_chart(encoder.model_view(a, hide_special=hide), t("encoder.modelview_chart"),
                                                   x_title=t("encoder.head_axis"), y_title=t("encoder.layer"),
                                                   value_name=t("encoder.attention"),
                                                   hover=t("encoder.modelview_hover"), clipped=clipped),
                    key=MODEL_VIEW, on_select=_open_clicked_head, selection_mode="points")
    help_text = t("encoder.modelview_help", n=encoder.THUMB)
    st.caption(f"{help_text} {t('heatmap.clipped', p=f'{ROBUST_PERCENTILE:g}')}" if clipped else help_text)
