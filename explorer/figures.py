"""Figures of an analysis or attribution for notebooks and scripts: the app's charts, outside the app (the
app draws its pages through explorer/ui/views/).

Every figure is a plotly Figure (it displays itself in a notebook; `fig.write_html(path)` saves it),
except the head view and the highlighted text, which are pages: an `explorer.results.HTML` with
`.save(path)`, standalone and offline (plotly.js inlined). Layers are 1-based, heads 0-based, as in
the app; `lang` picks the language of titles and axes ("en" or "vi").

    a = explorer.analyze(ck, "a wonderful film")
    explorer.figures.rollout(a)
    explorer.figures.head_view(a, layer=3).save("head.html")
"""
from __future__ import annotations

import plotly.graph_objects as go

from explorer.explain import encoder
from explorer.explain.attribution import Attribution, pair_start
from explorer.model.analysis import Analysis
from explorer.plots import attention as attention_plots
from explorer.plots import attribution as attribution_plots
from explorer.text.highlight import highlight_html
from explorer.plots import encoder as encoder_plots
from explorer.results import HTML
from explorer.text import i18n
from explorer.text.errors import ExplorerError

__all__ = ["attribution", "cls_attention", "head_view", "highlight", "model_view", "readout", "rollout"]


def _t(lang: str):
    return lambda key, **fmt: i18n.t(key, lang, **fmt)


def _layer(a: Analysis, layer: int | None) -> int:
    n = a.attentions.shape[0]
    if layer is None:
        return n
    if not 1 <= int(layer) <= n:
        raise ExplorerError("api_layer", layer=layer, n=n)
    return int(layer)


def _head(a: Analysis, head: int | None) -> int | None:
    n = a.attentions.shape[1]
    if head is not None and not 0 <= int(head) < n:
        raise ExplorerError("api_head", head=head, last=n - 1)
    return None if head is None else int(head)


def _tokens_page(a: Analysis, layer, head, hide_special: bool, lang: str) -> dict[str, go.Figure]:
    return attention_plots.tokens_page(a, _layer(a, layer), head=_head(a, head), hide_special=hide_special, t=_t(lang))


def rollout(a: Analysis, *, layer: int | None = None, hide_special: bool = True, lang: str = "en") -> go.Figure:
    """Attention rollout from [CLS]: a (layers × tokens) heatmap, the picked layer outlined.

    Args:
        a: an Analysis from `explorer.analyze`.
        layer: the layer outlined (default the last).
        hide_special: leave out the special tokens ([CLS], [SEP], padding).
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        A plotly Figure.
    """
    return _tokens_page(a, layer, None, hide_special, lang)["rollout"]


def cls_attention(a: Analysis, *, layer: int | None = None, head: int | None = None, hide_special: bool = True,
                  lang: str = "en") -> go.Figure:
    """What [CLS] attends to: every head at one layer, or one head at every layer.

    Args:
        a: an Analysis from `explorer.analyze`.
        layer: the layer whose heads are shown (default the last).
        head: one head, shown at every layer instead.
        hide_special: leave out the special tokens ([CLS], [SEP], padding).
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        A plotly Figure.
    """
    return _tokens_page(a, layer, head, hide_special, lang)["cls"]


def readout(a: Analysis, lang: str = "en") -> go.Figure:
    """The head read out at every layer (0 = embeddings): one line per label.

    Args:
        a: an Analysis from `explorer.analyze`.
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        A plotly Figure.
    """
    return encoder_plots.readout(a, _t(lang))


def model_view(a: Analysis, *, hide_special: bool = True, lang: str = "en") -> go.Figure:
    """Thumbnails of every head's token-to-token attention, layers down, heads across.

    Args:
        a: an Analysis from `explorer.analyze`.
        hide_special: leave out the special tokens ([CLS], [SEP], padding).
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        A plotly Figure.
    """
    t = _t(lang)
    return encoder_plots.model_view_chart(encoder.model_view(a, hide_special=hide_special), t("encoder.modelview_chart"),
                                          x_title=t("encoder.head_axis"), y_title=t("encoder.layer"),
                                          value_name=t("encoder.attention"),
                                          hover=t("encoder.modelview_hover"))


def head_view(a: Analysis, *, layer: int | None = None, head: int | None = None, hide_special: bool = True,
              lang: str = "en") -> HTML:
    """Token-to-token attention at one layer, one head or all, as a standalone page.

    Lines from each token to the tokens it attends to; hovering a token keeps only its lines.

    Args:
        a: an Analysis from `explorer.analyze`.
        layer: the layer (default the last).
        head: one head; None: all of them.
        hide_special: leave out the special tokens ([CLS], [SEP], padding).
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        An HTML page (`.save(path)` writes it; plotly.js inlined, so it opens offline).
    """
    view = encoder.head_view(a, _layer(a, layer), head=_head(a, head), hide_special=hide_special)
    fig, title = encoder_plots.head_view_figure(view, _head(a, head), t=_t(lang))
    return HTML(encoder_plots.head_view_html(fig, title), title=title, height=int(fig.layout.height) + 16)


def _pieces(r: Attribution, level: str):
    if level not in ("token", "word"):
        raise ExplorerError("api_level", level=level)
    pieces, scores = r.words() if level == "word" else (r.shown, r.scores)
    return pieces, scores, pair_start(r, level)


def _legend(r: Attribution, t) -> str:
    signed = r.method != "saliency"  # saliency is a gradient's size: never below 0
    return t("attributions.legend" if signed else "attributions.legend_unsigned", label=r.target_label)


def attribution(r: Attribution, *, level: str = "token", top: int = 30, lang: str = "en") -> go.Figure:
    """Tokens (or words) ranked by |attribution|, coloured by sign.

    Args:
        r: an Attribution from `explorer.attribute`.
        level: "token" or "word" (a word's tokens summed).
        top: at most this many bars.
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        A plotly Figure.
    """
    t = _t(lang)
    pieces, scores, pair_at = _pieces(r, level)
    return attribution_plots.sorted_bars(pieces, scores, title=t("attributions.bars_title", label=r.target_label),
                                         x_title=t("attributions.score_axis"), y_title=t(f"attributions.level_{level}"),
                                         top=top,
                                         signed=r.method != "saliency", pair_at=pair_at)


def highlight(r: Attribution, *, level: str = "token", lang: str = "en") -> HTML:
    """The text with each token (or word) shaded by its attribution, as a standalone page.

    Args:
        r: an Attribution from `explorer.attribute`.
        level: "token" or "word" (a word's tokens summed).
        lang: the language of titles and axes, "en" or "vi".

    Returns:
        An HTML page.
    """
    t = _t(lang)
    pieces, scores, pair_at = _pieces(r, level)
    title = f"{r.method}: {r.target_label}"
    page = highlight_html(pieces, scores, title=title, legend=_legend(r, t), standalone=True,
                                            pair_at=pair_at, pair_label=t("arch.boundary"))
    return HTML(page, title=title, height=200)
