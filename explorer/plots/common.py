"""Renderers shared by several pages, the colour scales every chart uses, and the figure builder.

Colour rule: on a sequential scale more is darker; a signed value sits on a diverging scale centred
on 0 (red below, blue above); every colour-coded chart carries a colour bar or a legend. The scales
are resolved to explicit stops here, once: a bare name such as "Blues" means the opposite direction
to plotly.js than to plotly.py, so no name ever reaches the browser.
"""
from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from explorer.text.plain import figure_spec

SEQUENTIAL = tuple(tuple(s) for s in get_colorscale("Blues"))  # white → dark blue
HIGHLIGHT = tuple(tuple(s) for s in get_colorscale("YlOrRd"))  # pale yellow → dark red
DIVERGING = tuple(tuple(s) for s in get_colorscale("RdBu"))  # dark red < 0 < dark blue

_MARGIN = dict(l=60, r=10, t=50, b=40)
# Presenter view's chart type, in px: the figure is laid out at these sizes (app.py's CSS uses the same
# numbers), so titles, tick labels and colour-bar titles get room for the text as it is drawn.
PRESENTER_FONT, PRESENTER_TITLE = 17, 23
PRESENTER_TITLE_CHARS = 45  # a wrapped title line: fits a half-width chart on a 1280 px projector
TITLE_LINE = 1.3  # plotly's line height, in ems of the title's type
TITLE_PAD, TITLE_GAP = 12, 24  # px above a presenter chart's title, and between its last line and the plot
# The tallest presenter chart, in px: what a 1280 × 720 window leaves under Streamlit's top bar and a lesson
# step's heading row (a 1920 × 1080 one leaves more, so the same chart fits there too).
PRESENTER_BOARD = 440


def figure(traces, title: str, *, x_title: str, y_title: str, **layout) -> go.Figure:
    """A validated figure; `layout` adds to the shared layout (e.g. height, yaxis=dict(...)).
    Every renderer builds its figure here, so every string in it (titles, tick labels, hover text,
    annotations, legend names) is plain text: figure_spec escapes what plotly.js would read as HTML.
    Templates (hovertemplate...) are the renderers' own; user text put into one goes through
    explorer.text.plain.plotly there.

    template "none": st.plotly_chart applies the streamlit theme in the browser anyway, and plotly's
    default template is most of the build and serialisation cost."""
    base = dict(template="none", margin=_MARGIN, title=dict(text=title),
                xaxis=dict(title=dict(text=x_title), **layout.pop("xaxis", {})),
                yaxis=dict(title=dict(text=y_title), **layout.pop("yaxis", {})))
    return go.Figure(figure_spec(dict(data=list(traces), layout={**base, **layout})))


def wrap_title(title: str, width: int) -> list[str]:
    """A chart title on lines of at most `width` characters (plotly never wraps a title: it runs off)."""
    return textwrap.wrap(title.replace("<br>", " "), width) or [title]


def presenter(fig: go.Figure, height: int | None = None, *, title_chars: int = PRESENTER_TITLE_CHARS) -> go.Figure:
    """A copy of `fig` for the back of the classroom: larger type, the title wrapped onto lines that fit
    (`title_chars` a line: less for a chart narrower than half a 1280 px window),
    axes and colour bars that make room for their labels (automargin), the height to match but no more
    than `height` px (default PRESENTER_BOARD), and a legend in rows under the plot, where a long name
    wraps to a row of its own instead of running past the chart's right edge."""
    out = go.Figure(fig)
    title = out.layout.title.text or ""
    lines = wrap_title(title, title_chars)
    scale = PRESENTER_FONT / 12  # plotly's default type is 12 px
    tall = int((out.layout.height or 450) * scale) + PRESENTER_TITLE * (len(lines) - 1)
    margin = out.layout.margin
    if sum(1 for tr in out.data if tr.showlegend is not False and tr.name) > 1:
        out.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=-0.25, yanchor="top"))
    high, block = min(tall, height or PRESENTER_BOARD), int(PRESENTER_TITLE * TITLE_LINE * len(lines))
    out.update_layout(
        font=dict(size=PRESENTER_FONT), height=high,
        # the first line's baseline a line's type below TITLE_PAD, the others under it: plotly anchors a wrapped title
        # by its first line (yanchor "bottom"), and its own place for one keeps the lines' middle a fixed height over
        # the plot, so a third line ran into the plot
        title=dict(text="<br>".join(lines), font=dict(size=PRESENTER_TITLE), yref="container", yanchor="bottom",
                   y=1 - (TITLE_PAD + PRESENTER_TITLE) / high),
        margin=dict(l=int((margin.l or 60) * scale), r=int((margin.r or 10) * scale) + 10,
                    t=TITLE_PAD + block + TITLE_GAP, b=int((margin.b or 40) * scale)))
    # the x title a line below the tick labels: close under a category's name it reads as part of it
    out.update_xaxes(automargin=True, title=dict(standoff=PRESENTER_FONT + 8))
    out.update_yaxes(automargin=True, title=dict(standoff=PRESENTER_FONT))
    return out


def colorbar(title: str) -> dict:
    return dict(title=dict(text=title, side="right"), thickness=14)


def label_bars(labels, values, *, title: str, x_title: str, y_title: str, fmt: str = ".4f",
               y_range: tuple[float, float] | None = None) -> go.Figure:
    """One bar per label, value printed on the bar and in the hover."""
    values = np.asarray(values, dtype=float)
    bar = go.Bar(x=list(labels), y=values, text=[format(v, fmt) for v in values], textposition="auto",
                 hovertemplate=f"%{{x}}: %{{y:{fmt}}}<extra></extra>")
    # Labels are names even when they read as numbers (0/1/2): a numeric axis would tick at -0.5, 0.5...
    return figure([bar], title, x_title=x_title, y_title=y_title, height=320,
                  yaxis=dict(range=list(y_range)) if y_range else {},
                  xaxis=dict(type="category"))


def boundary(at: int | None, label: str, *, shapes: list | None = None) -> dict:
    """Layout entries marking where text B of a sentence pair starts: a dashed line before x position
    `at` (a token's index on a token axis) with `label` above it; nothing for a single text."""
    shapes = list(shapes or [])
    if at is None:
        return dict(shapes=shapes)
    x = at - 0.5
    shapes.append(dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1,
                       line=dict(color="#2a9d8f", width=2, dash="dash")))
    return dict(shapes=shapes, annotations=[dict(x=x, xref="x", y=1, yref="paper", text=label, showarrow=False,
                                                 xanchor="left", yanchor="bottom", font=dict(color="#2a9d8f"))])
