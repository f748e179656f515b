"""What a student's screen does with a figure: phone legends, projector variant, text alternative."""

from __future__ import annotations

import numpy as np
import pytest

from ui.kit import access, finish, style
from ui.kit import figures as F


def _fig(names=("exact", "simulation"), height=440):
    fig = F.figure("depth τ", "norm", "A title", height=height)
    x = np.linspace(0.0, 2.0, 21)
    for k, n in enumerate(names):
        F.exact_line(fig, x, (k + 1) * x**2 - 0.5, n)
    return fig, x


@pytest.mark.parametrize("height", [300, 440, 600])
def test_house_legend_hangs_under_the_title_and_is_whole(height):
    """Eleven entries wrap onto six rows on a phone: the figure grows by the rows beyond the two the
    house margin holds, and the legend is not capped (a capped legend scrolls and hides entries)."""
    names = [f"curve number {k}" for k in range(11)]
    fig, _ = _fig(names=names, height=height)
    finish.fit_legend(fig)
    lg = fig.layout.legend
    rows = finish.phone_rows(names)
    assert rows == 6
    assert fig.layout.height == height + (rows - finish.HOUSE_ROWS) * finish.ROW_PX
    assert lg.yref == "container" and lg.yanchor == "top"
    assert lg.y == pytest.approx(1.0 - finish.TITLE_PX / fig.layout.height)
    assert lg.maxheight == finish.LEGEND_MAX == 1.0
    F.VALIDATE, old = True, F.VALIDATE
    try:
        frozen = F.Frozen(_fig(names=names, height=height)[0])  # Plotly accepts the entries (validated)
    finally:
        F.VALIDATE = old
    # the serialised figure gets the same
    assert frozen.spec["layout"]["height"] == fig.layout.height
    assert frozen.spec["layout"]["legend"]["y"] == pytest.approx(lg.y)


def test_a_short_legend_keeps_the_height():
    fig, _ = _fig(names=("exact", "simulation"))
    finish.fit_legend(fig)
    assert fig.layout.height == 440 and fig.layout.legend.maxheight == finish.LEGEND_MAX


def test_phone_rows_count_chinese_wider():
    assert finish.phone_rows(["a"]) == 1 and finish.phone_rows([]) == 0
    assert finish.phone_rows(["精确解（实线）"] * 6) > finish.phone_rows(["exact"] * 6)
    assert finish.phone_rows(["x" * 200]) == 1  # one entry wider than the screen: one row


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
    y_all = np.concatenate([(k + 1) * x**2 - 0.5 for k in range(2)])
    assert d["text"].startswith("A title.")
    assert f"depth τ: from {x.min():.3g} to {x.max():.3g}" in d["text"]
    assert f"norm: from {y_all.min():.3g} to {y_all.max():.3g}" in d["text"]
    assert "curves: exact; simulation." in d["text"]
    np.testing.assert_array_equal(d["columns"]["simulation [y]"], 2 * x**2 - 0.5)
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
