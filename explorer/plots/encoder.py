"""Inside-the-encoder renderers: the head read out per layer, the head view (lines between two token
columns, hover highlights one token's lines) with its standalone HTML, and the model-view thumbnails."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from explorer.explain.encoder import HeadView
from explorer.model.problem import ProblemType
from explorer.text.plain import html as escape_html, plotly as esc
from .common import SEQUENTIAL, colorbar, figure, wrap_title
from .vectors import ROBUST_PERCENTILE

LEVELS = 10  # line opacity steps: a weight under 5% rounds to no line (near invisible, and it keeps the trace count low)
HEAD_COLOURS = qualitative.Dark24
_ROW = 22  # pixels per token row in the head view
_TITLE_CHARS = 55  # a head-view title line: fits the narrowest column it is drawn in (a 768 px window)


def readout_lines(values: np.ndarray, labels, *, title: str, x_title: str, y_title: str, embeddings: str,
                  y_range: tuple[float, float] | None = (0.0, 1.0)) -> go.Figure:
    """values: (layers+1, labels), row 0 the embeddings: one line per label."""
    x = [embeddings, *(str(i) for i in range(1, values.shape[0]))]
    lines = [go.Scatter(x=x, y=values[:, k], mode="lines+markers", name=label,
                        hovertemplate=f"{esc(label)}<br>{esc(x_title)} %{{x}}: %{{y:.4f}}<extra></extra>")
             for k, label in enumerate(labels)]
    return figure(lines, title, x_title=x_title, y_title=y_title, height=340, xaxis=dict(type="category"),
                  yaxis=dict(range=list(y_range)) if y_range else {})


def readout(a, t) -> go.Figure:
    """The layer read-out chart of Analysis `a`, its words translated by `t(key, **fmt)`."""
    from explorer.explain.encoder import layer_probabilities

    ptype = ProblemType(a.problem_type)
    kind = ptype if ptype is ProblemType.REGRESSION else ptype.output  # the i18n keys' suffix
    return readout_lines(layer_probabilities(a), a.labels,
                         title=t("encoder.readout_chart", kind=t(f"encoder.kind_{kind}")),
                         x_title=t("encoder.layer_axis"), y_title=t(f"encoder.kind_{kind}"),
                         embeddings=t("encoder.embeddings"),
                         y_range=None if ptype is ProblemType.REGRESSION else (0.0, 1.0))


def _segments(levels: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """x, y of every line whose rounded weight is `level`: (0, -i) -> (1, -j), NaN between lines.
    Arrays, not lists: plotly validates and sends them as typed arrays, without a per-point walk."""
    src, dst = np.nonzero(levels == level)
    xs = np.tile(np.array([0, 1, np.nan], dtype=np.float32), src.size)
    ys = np.full(3 * src.size, np.nan, dtype=np.float32)
    ys[0::3], ys[1::3] = -src, -dst
    return xs, ys


def _strongest(w: np.ndarray, tokens, k: int = 5) -> list[str]:
    """Per row of w (n, n): its k largest weights, exact, one 'token weight' per line."""
    order = np.argsort(-w, axis=1, kind="stable")[:, :k]
    return ["<br>".join(f"{esc(tokens[j])}  {w[i, j]:.3f}" for j in row) for i, row in enumerate(order)]


HOVER_WORDS = {"to": "attends to", "from": "is attended by", "mean": "mean over {n} heads"}


def head_view_chart(v: HeadView, title: str, *, head_name: str, text_b: str = "", words: dict | None = None) -> go.Figure:
    """Lines from each token (left) to each token it attends to (right), opacity = weight, one colour
    per head. Line traces carry meta "lines", token columns "left"/"right" (used by the hover script).
    A token's hover lists its five strongest weights, exact (the mean over heads when several are shown);
    `words` translates HOVER_WORDS."""
    words = {**HOVER_WORDS, **(words or {})}
    n = len(v.tokens)
    traces = []
    for k, h in enumerate(v.heads):
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        levels = np.rint(v.weights[k] * LEVELS)  # (n, n)
        for level in range(1, LEVELS + 1):
            xs, ys = _segments(levels, level)
            if xs.size:
                traces.append(go.Scatter(
                    x=xs, y=ys, mode="lines", line=dict(color=colour, width=2), opacity=level / LEVELS,
                    name=f"{head_name} {h}", legendgroup=str(h), showlegend=False, hoverinfo="skip", meta="lines"))
        if len(v.heads) > 1:  # a legend entry of its own: it stays when hovering empties the head's lines
            traces.append(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color=colour, width=3),
                                     name=f"{head_name} {h}", legendgroup=str(h), hoverinfo="skip"))
    y = [-i for i in range(n)]
    mean = v.weights.mean(axis=0)  # (n, n)
    note = f" ({words['mean'].format(n=len(v.heads))})" if len(v.heads) > 1 else ""
    for side, x, pos, w, verb in (("left", 0, "middle left", mean, "to"), ("right", 1, "middle right", mean.T, "from")):
        # one template per point (code: the tokens in it escaped here; `text` is escaped by figure())
        tips = [f"<b>{esc(tok)}</b> {esc(words[verb] + note)}:<br>{top}<extra></extra>"
                for tok, top in zip(v.tokens, _strongest(w, v.tokens))]
        traces.append(go.Scatter(
            x=[x] * n, y=y, mode="markers+text", text=list(v.tokens), textposition=pos, showlegend=False,
            marker=dict(size=9, color="#555"), meta=side, hovertemplate=tips))
    shapes, annotations = [], []
    if v.boundary is not None:
        cut = -v.boundary + 0.5
        shapes = [dict(type="line", x0=-0.9, x1=1.9, y0=cut, y1=cut, line=dict(dash="dash", color="gray"))]
        annotations = [dict(x=0.5, y=cut, text=text_b, showarrow=False, yshift=-9, font=dict(color="gray"))]
    # Left-aligned and wrapped: centred, a title wider than the chart ran off both edges.
    lines = wrap_title(title, _TITLE_CHARS)
    fig = figure(
        traces, "", x_title="", y_title="", height=max(240, _ROW * n + 90 + 20 * len(lines)), hovermode="closest",
        dragmode=False, shapes=shapes, font=dict(family="sans-serif"),
        annotations=annotations, margin=dict(l=10, r=10, t=30 + 20 * len(lines), b=10), plot_bgcolor="white",
        xaxis=dict(range=[-0.9, 1.9], visible=False, fixedrange=True),
        yaxis=dict(range=[-n + 0.5, 0.5], visible=False, fixedrange=True),
        legend=dict(orientation="v", x=1.0, y=1.0))
    fig.update_layout(title=dict(text="<br>".join(esc(line) for line in lines), x=0.01, xanchor="left"))  # past figure(): its escaping would show the <br>
    return fig


# On hover of a token, keep only that token's lines (outgoing from the left column, incoming to the
# right one); restore every line when the pointer leaves. The lines' own y values say which tokens they join.
_HOVER_JS = """
var gd = document.getElementById('{plot_id}');
var lines = [], orig = [];
// _fullData: the decoded arrays (gd.data keeps the typed-array specs as sent); t.index is the trace's place in gd.data
gd._fullData.forEach(function (t) { if (t.meta === 'lines') { lines.push(t.index); orig.push([Array.from(t.x), Array.from(t.y)]); } });
gd.on('plotly_hover', function (ev) {
  var p = ev.points[0], side = p.data.meta;
  if (side !== 'left' && side !== 'right') return;
  var at = side === 'left' ? 0 : 1, xs = [], ys = [];
  orig.forEach(function (o) {
    var x = [], y = [];
    for (var s = 0; s + 2 < o[1].length; s += 3) {
      if (o[1][s + at] === -p.pointIndex) { x.push(0, 1, null); y.push(o[1][s], o[1][s + 1], null); }
    }
    xs.push(x); ys.push(y);
  });
  gd.dataset.focus = side + ':' + p.pointIndex;
  if (lines.length) Plotly.restyle(gd, {x: xs, y: ys}, lines);
});
gd.on('plotly_unhover', function () {
  gd.dataset.focus = '';
  if (lines.length) Plotly.restyle(gd, {x: orig.map(function (o) { return o[0]; }),
                                          y: orig.map(function (o) { return o[1]; })}, lines);
});
"""


def head_view_html(fig: go.Figure, title: str, *, plotly_src: str | None = None) -> str:
    """The head view as one page with the hover highlight. Without `plotly_src`, plotly.js is inlined
    (standalone, works offline: the download); with it, the page loads plotly.js from that URL (the app)."""
    page = fig.to_html(full_html=True, include_plotlyjs=plotly_src or True, div_id="headview", post_script=_HOVER_JS,
                       config={"displayModeBar": False, "responsive": True})
    return page.replace("<head>", f"<head><title>{escape_html(title)}</title>", 1)


def model_view_chart(tiles: np.ndarray, title: str, *, x_title: str, y_title: str, value_name: str,
               hover: str, clipped: bool = False) -> go.Figure:
    """tiles: (layers, heads, m, m) on one heatmap, a blank cell between tiles; a clear marker on each
    tile carries customdata [layer (1-based), head] so a click (on_select) can open that head. `clipped` (a
    long text, see plots.attention.clips): the colour range stops at the ROBUST_PERCENTILE-th percentile,
    since a long text's block-averaged weights are small and a 0-1 range drew them near white."""
    n_layers, n_heads, m, _ = tiles.shape
    step = m + 1
    grid = np.full((n_layers * step - 1, n_heads * step - 1), np.nan, dtype=np.float32)  # float32 halves the JSON
    for layer in range(n_layers):
        for h in range(n_heads):
            grid[layer * step:layer * step + m, h * step:h * step + m] = tiles[layer, h]
    centre = m / (2 * step) - 0.5  # tile k spans [k - 0.5, k - 0.5 + m/step]
    heat = go.Heatmap(z=grid, x0=-0.5 + 0.5 / step, dx=1 / step, y0=0.5 + 0.5 / step, dy=1 / step,
                      colorscale=SEQUENTIAL, zmin=0, zmax=_top(tiles) if clipped else 1,
                      colorbar=colorbar(value_name),
                      hoverinfo="skip")
    layers, heads = np.meshgrid(np.arange(1, n_layers + 1), np.arange(n_heads), indexing="ij")
    pick = go.Scatter(
        x=(heads + centre).ravel(), y=(layers + centre).ravel(), mode="markers",
        marker=dict(symbol="square", size=max(12, min(40, 400 // max(n_heads, 1))), color="rgba(0,0,0,0)"),
        # a plain list: a typed array would reach the selection event as {"0": .., "1": ..}
        customdata=np.stack([layers.ravel(), heads.ravel()], axis=1).tolist(), showlegend=False,
        hovertemplate=hover + "<extra></extra>")
    return figure([heat, pick], title, x_title=x_title, y_title=y_title, height=max(260, 70 * n_layers + 110),
                  plot_bgcolor="white", dragmode=False,
                  xaxis=dict(tickmode="array", tickvals=list(range(n_heads)),
                             range=[-0.6, n_heads - 0.4], showgrid=False, zeroline=False),
                  yaxis=dict(tickmode="array", tickvals=list(range(1, n_layers + 1)),
                             range=[n_layers + 0.6, 0.4], showgrid=False, zeroline=False))


def _top(tiles: np.ndarray) -> float:
    top = float(np.percentile(tiles, ROBUST_PERCENTILE))
    return top if top > 0 else 1.0


def head_view_figure(v: HeadView, head: int | None, *, t) -> tuple[go.Figure, str]:
    """(figure, title) of head view `v` (`head` None: all heads), its words translated by `t(key, **fmt)`."""
    heads = t("encoder.all_heads") if head is None else f"{t('encoder.head_name')} {head}"
    title = t("encoder.headview_chart", layer=v.layer, heads=heads) + (t("encoder.renormalised") if v.renormalised else "")
    words = {k: t(f"encoder.hover_{k}") for k in HOVER_WORDS}
    return head_view_chart(v, title, head_name=t("encoder.head_name"), text_b=t("encoder.text_b"), words=words), title
