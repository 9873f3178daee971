"""The theme's primary colour (buttons, sliders, toggles, links) is neither of the colours that mean "down" and
"up" on signed charts, and stays readable in both themes: at least 3:1 against the white text on a primary
button and against each theme's background."""
import tomllib

from explorer import resources
from explorer.cli.app import streamlit_command

BACKGROUND = {"light": "#FFFFFF", "dark": "#0E1117"}  # Streamlit's own backgrounds


def _luminance(hex_colour: str) -> float:
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_primary_colour_is_neither_red_nor_blue_and_readable_in_both_themes():
    theme = tomllib.loads(resources.STREAMLIT_CONFIG.read_text())["theme"]
    assert set(theme) == {"light", "dark"}  # each theme its own primary colour, both themes kept
    for name, background in BACKGROUND.items():
        colour = theme[name]["primaryColor"]
        r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
        assert not (r > g + 60 and r > b + 60) and not (b > r + 60 and b > g + 60), (name, colour)
        assert _contrast(colour, "#FFFFFF") >= 3 and _contrast(colour, background) >= 3, (name, colour)
        # `head-explorer app` passes nested tables as dotted flags, which streamlit reads
        assert f"--theme.{name}.primaryColor={colour}" in streamlit_command([])
