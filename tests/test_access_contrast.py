"""WCAG 2.2 AA contrast of what the app draws, computed with WCAG's own formula (relative luminance
of sRGB, ratio (L1 + 0.05) / (L2 + 0.05)):

- every line and marker colour of the figures (``ui.kit.figures.COLORS`` and ``SEQUENCE``) 3:1 against
  the figure background (1.4.11, non-text contrast);
- every text colour the app's CSS sets (assets/style.css) 4.5:1 against each background it is drawn
  on, every focus ring colour 3:1 (1.4.3, 2.4.13);
- the readable names of control labels (``ui.kit.access.readable``) hold no LaTeX source.

The formula itself is checked against the ratios WCAG's own examples give (black/white 21:1).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ui.kit import figures as F

ROOT = Path(__file__).resolve().parents[1]
WHITE = "#FFFFFF"
SIDEBAR = "#F8F8F7"  # Streamlit's light theme: the sidebar's background
SELECTED = "#F3E5E6"  # the selected language button: primary red at 10 % over the sidebar


def luminance(hex_: str) -> float:
    h = hex_.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    rgb = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def ratio(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_formula_matches_wcag_examples():
    assert ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert ratio("#FFFFFF", "#FFFFFF") == pytest.approx(1.0)
    assert ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)  # the classic just-fails grey
    assert ratio("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)  # ... and just-passes
    # the colours the accessibility audit measured, as it measured them
    assert ratio("#828180", WHITE) == pytest.approx(3.89, abs=0.01)
    assert ratio("#E69F00", WHITE) == pytest.approx(2.25, abs=0.01)
    assert ratio("#56B4E9", WHITE) == pytest.approx(2.31, abs=0.01)
    assert ratio("#F0E442", WHITE) == pytest.approx(1.32, abs=0.01)


def test_every_figure_colour_is_3_to_1_on_the_figure_background():
    bg = F.TEMPLATE["layout"]["plot_bgcolor"]
    assert bg in ("white", WHITE)
    colours = {
        **{f"COLORS[{k!r}]": v for k, v in F.COLORS.items()},
        **{f"SEQUENCE[{i}]": v for i, v in enumerate(F.SEQUENCE)},
    }
    low = {k: round(ratio(v, WHITE), 2) for k, v in colours.items() if ratio(v, WHITE) < 3.0}
    assert not low, f"under 3:1 on white: {low}"


def _lab(hex_: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour."""
    h = hex_.lstrip("#")
    rgb = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_palette_colours_stay_distinct():
    """Darkening must not merge two palette colours: every pair of the sequence is at least
    ΔE*ab = 20 apart (CIE76; 2.3 is a just-noticeable difference)."""

    def de(a, b):
        return sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5

    seq = F.SEQUENCE
    close = [(a, b, round(de(a, b), 1)) for i, a in enumerate(seq) for b in seq[i + 1 :] if de(a, b) < 20]
    assert not close, close


_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def _css_rules(text: str):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"@media[^{]*\{", "", text)  # the rules inside media queries, as rules
    for sel, body in _RULE.findall(text):
        yield " ".join(sel.split()), body


def _background_of(selector: str) -> list[str]:
    """The backgrounds a rule's text is drawn on: the sidebar's for sidebar rules (the selected
    language button: its own pale red too), white for the main area, both when it may be either."""
    if "segmented_control" in selector and "selected" in selector:
        return [SELECTED]
    if "stSidebar" in selector:
        return [SIDEBAR]
    if "stMain" in selector:
        return [WHITE]
    return [WHITE, SIDEBAR]


def test_every_text_colour_of_the_app_css_is_4_5_to_1():
    checked = 0
    for name in ("style.css", "projector.css"):
        for sel, body in _css_rules((ROOT / "assets" / name).read_text(encoding="utf-8")):
            for prop, value in re.findall(r"(?<![-\w])(color|outline)\s*:\s*([^;]+)", body):
                m = re.search(r"#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{3})\b", value)
                if not m:
                    continue
                need = 4.5 if prop == "color" else 3.0
                for bg in _background_of(sel):
                    r = ratio(m.group(0), bg)
                    assert r >= need, f"{name}: {sel} {{{prop}: {value.strip()}}} is {r:.2f}:1 on {bg}"
                    checked += 1
    assert checked >= 5  # the captions, the selected language, the focus rings at least


def test_captions_are_drawn_opaque():
    """Streamlit draws captions at 60 % opacity: the app's colour only counts with opacity 1."""
    css = (ROOT / "assets" / "style.css").read_text(encoding="utf-8")
    rule = next(body for sel, body in _css_rules(css) if sel == '[data-testid="stCaptionContainer"]')
    assert re.search(r"opacity\s*:\s*1\b", rule), rule


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("$\\tau_{\\max}$ — depth horizon", "τ_max — depth horizon"),
        ("α — branch exponent (scaled by $L^{-\\alpha}$)", "α — branch exponent (scaled by L^-α)"),
        ("$t_{\\max}$ — training time shown", "t_max — training time shown"),
        ("no formula, 50% and **bold**", "no formula, 50% and bold"),
        ("a price of \\$5", "a price of \\$5"),
    ],
)
def test_readable_names(raw, read):
    from ui.kit.access import readable

    assert readable(raw) == read


def test_every_control_label_reads_without_latex():
    """Every page's slider labels and help, in both languages, read without LaTeX source."""
    from ui.kit import files
    from ui.kit.access import readable
    from ui.kit.i18n import Text
    from ui.kit.nav import PAGES

    bad = []
    for e in PAGES:
        schema = files.page_module(e.stem).SCHEMA
        for lang in ("en", "zh"):
            t = Text(e.stem, lang)
            for p in schema.params:
                name = p.name if hasattr(p, "name") else p
                for k in ("label", "help"):
                    key = f"params.{name}.{k}"
                    if t.has(key):
                        r = readable(t(key))
                        if "$" in r or re.search(r"\\[A-Za-z]+", r):
                            bad.append((e.stem, lang, key, r))
    assert not bad, bad[:5]
