"""What a student's screen does with a figure: phone legends, projector variant, text alternative."""
from __future__ import annotations

import numpy as np
import pytest

from ui import access, finish, style
from ui import figures as F


def _fig(names=("exact", "simulation"), height=440):
    fig = F.figure("depth τ", "norm", "A title", height=height)
    x = np.linspace(0.0, 2.0, 21)
    for k, n in enumerate(names):
        F.exact_line(fig, x, (k + 1) * x ** 2 - 0.5, n)
    return fig, x


@pytest.mark.parametrize("height", [300, 440, 600])
def test_house_legend_hangs_under_the_title_and_scrolls(height):
    fig, _ = _fig(names=[f"curve number {k}" for k in range(11)], height=height)
    finish.fit_legend(fig)
    lg = fig.layout.legend
    assert lg.yref == "container" and lg.yanchor == "top"
    assert lg.y == pytest.approx(1.0 - finish.TITLE_PX / height)
    assert lg.maxheight == finish.LEGEND_MAX
    F.VALIDATE, old = True, F.VALIDATE
    try:
        F.Frozen(fig)  # Plotly accepts the entries (validated)
    finally:
        F.VALIDATE = old


def test_a_legend_placed_by_the_page_stays_and_gets_the_cap():
    fig, _ = _fig()
    fig.update_layout(legend=dict(y=-0.3, yanchor="top"))
    finish.fit_legend(fig)
    assert fig.layout.legend.y == -0.3 and fig.layout.legend.yref is None
    assert fig.layout.legend.maxheight == finish.LEGEND_MAX
    v, _ = _fig()
    v.update_layout(legend=dict(orientation="v"))
    finish.fit_legend(v)
    assert v.layout.legend.maxheight is None


def test_projector_variant_is_larger_and_keeps_colours():
    fig, _ = _fig()
    frozen = F.Frozen(fig)
    before = repr(frozen.spec)
    p = style.projector_spec(frozen.spec)
    assert repr(frozen.spec) == before  # the shared figure is not touched
    assert p["layout"]["font"]["size"] == round(13 * style.FONT_SCALE)
    assert p["layout"]["title"]["font"]["size"] == round(15 * style.FONT_SCALE)
    assert p["layout"]["height"] == round(440 * style.HEIGHT_SCALE)
    for a, b in zip(frozen.spec["data"], p["data"]):
        assert b["line"]["width"] == pytest.approx(a["line"]["width"] * style.LINE_SCALE, abs=0.01)
        assert b["line"]["color"] == a["line"]["color"]
        assert b["line"]["color"] in F.SEQUENCE


def test_text_alternative_gives_the_plotted_ranges_and_the_data():
    fig, x = _fig()
    frozen = F.Frozen(fig)
    words = {k: k for k in ("figure", "curves", "from", "to", "x", "y", "z", "trace")}
    d = access.summary(frozen.spec, words)
    y_all = np.concatenate([(k + 1) * x ** 2 - 0.5 for k in range(2)])
    assert d["text"].startswith("A title.")
    assert f"depth τ: from {x.min():.3g} to {x.max():.3g}" in d["text"]
    assert f"norm: from {y_all.min():.3g} to {y_all.max():.3g}" in d["text"]
    assert "curves: exact, simulation." in d["text"]
    np.testing.assert_array_equal(d["columns"]["simulation [y]"], 2 * x ** 2 - 0.5)
    np.testing.assert_array_equal(d["columns"]["exact [x]"], x)


def test_typed_arrays_decode_exactly():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    np.testing.assert_array_equal(access.values(F.typed(a)), a)
    assert access.values(["a", "b"]) is None


def test_css_has_the_phone_print_and_projector_rules():
    css = (style.ASSETS / "style.css").read_text()
    assert ".katex-display" in css and "overflow-x: auto" in css
    assert "@media print" in css and "stSidebar" in css and "details-content" in css
    assert "font-size" in (style.ASSETS / "projector.css").read_text()
