"""Read what plotly drew in the browser (`_fullData`, after plotly.js resolved every default)."""
from __future__ import annotations

import re

import numpy as np

from conftest import wait_idle

_READ = """(t) => {
  for (const el of document.querySelectorAll('.js-plotly-plot')) {
    if (!el._fullLayout || !((el._fullLayout.title || {}).text || '').includes(t)) continue;
    const rows = (a) => a ? Array.from(a, (r) => (r && r.length !== undefined && typeof r !== 'string') ? Array.from(r) : r) : null;
    return {title: el._fullLayout.title.text, shapes: (el._fullLayout.shapes || []).map((s) => [s.y0, s.y1]),
            data: el._fullData.map((d) => ({type: d.type, colorscale: d.colorscale, showscale: d.showscale,
              zmin: d.zmin, zmax: d.zmax, reversescale: d.reversescale, z: rows(d.z), customdata: rows(d.customdata),
              x: d.x ? Array.from(d.x) : null, y: d.y ? Array.from(d.y) : null, name: d.name, showlegend: d.showlegend,
              marker: d.marker ? {color: d.marker.color} : null}))};
  }
  return null;
}"""


def chart(page, title_part: str) -> dict:
    """The drawn chart whose title contains `title_part` (waits until it is there)."""
    page.wait_for_function(f"() => [...document.querySelectorAll('.js-plotly-plot')].some("
                           f"(e) => e._fullLayout && (e._fullLayout.title.text || '').includes({title_part!r}))")
    return page.evaluate(_READ, title_part)


def luminance(colour: str) -> float:
    r, g, b = (int(x) for x in re.findall(r"\d+", colour)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def colour_at(colorscale, frac: float) -> float:
    """Luminance of a colour scale at `frac` in [0, 1], interpolated between its stops."""
    stops = [(float(p), luminance(c)) for p, c in colorscale]
    xs, ys = zip(*stops)
    return float(np.interp(frac, xs, ys))


def pick(page, label: str, option: str) -> None:
    """Choose `option` in the main-area selectbox labelled `label`."""
    page.locator("[data-testid=stMain] [data-testid=stSelectbox]").filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)
