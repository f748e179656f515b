"""Ui.figures: a Frozen figure reaches the browser exactly as Plotly would send it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import plotly.utils

from ui.kit import figures as F
from ui.kit import finish
from ui.kit.i18n import Text


def _sample(log_y: bool = False) -> go.Figure:
    fig = F.figure("x", "y", "title", log_y=log_y)
    x = np.linspace(0.1, 3.0, 50)
    F.exact_line(fig, x, np.exp(x), "exact")
    F.sim_markers(fig, x[::5], np.exp(x[::5]) * 1.01, "sim")
    fig.frames = [go.Frame(data=[go.Scatter(x=x, y=k * x)], name=str(k)) for k in range(3)]
    return fig


def test_frozen_serialises_like_plotly():
    for log_y in (False, True):
        ref = F.fit_log_ticks(_sample(log_y))
        finish.fit_legend(ref)
        frozen = F.Frozen(_sample(log_y))
        # what st.plotly_chart does with a figure: to_dict via return_figure_from_figure_or_data, then to_json
        sent = pio.to_json(plotly.tools.return_figure_from_figure_or_data(frozen, validate_figure=True), validate=False)
        assert json.loads(sent) == json.loads(pio.to_json(ref, validate=False))
        assert len(frozen.spec["frames"]) == 3 and len(frozen.spec["data"]) == 2


def test_frozen_applies_log_ticks_once():
    frozen = F.Frozen(_sample(log_y=True))
    # exp(0.1..3) spans 1.26 decades: short axis -> 1-2-5 labels instead of decades only, in full
    y = frozen.spec["layout"]["yaxis"]
    assert list(y["tickvals"]) == [2, 5, 10, 20] and list(y["ticktext"]) == ["2", "5", "10", "20"]
    assert F.freeze(frozen) is frozen


def test_cached_figure_keys_on_language_and_arguments(monkeypatch):
    calls = []

    def builder(t, a):
        calls.append((t.lang, a))
        fig = F.figure(t("fig.x_depth"), "y")
        F.exact_line(fig, [0, 1], [a, a], "c")
        return fig

    builder.__qualname__ = "test_cached_figure_builder"
    cached = F.cached_figure(builder)
    cached.clear()
    en, zh = Text("two_point", "en"), Text("two_point", "zh")
    f1 = cached(en, 1.0)
    assert cached(en, 1.0) is f1  # shared object, built once
    f2 = cached(zh, 1.0)
    f3 = cached(en, 2.0)
    assert calls == [("en", 1.0), ("zh", 1.0), ("en", 2.0)]
    assert f1.spec["layout"]["xaxis"]["title"]["text"] != f2.spec["layout"]["xaxis"]["title"]["text"]
    from tests.conftest import decode

    assert decode(f3.spec["data"][0]["y"]).tolist() == [2.0, 2.0]
    cached.clear()


def test_raw_frames_match_validated_frames():
    """Frames given as plain dicts reach the browser like go.Frame objects (same numbers)."""
    x = np.linspace(0.0, 1.0, 30)
    raw = [dict(data=[dict(type="scatter", x=x, y=k * x)], traces=[0], name=f"{k}") for k in range(4)]
    ref = F.figure("x", "y")
    F.exact_line(ref, x, x, "line")
    fast = go.Figure(ref)
    ref.frames = [go.Frame(**f) for f in raw]
    a = json.loads(pio.to_json(F.Frozen(ref).spec, validate=False))
    b = json.loads(pio.to_json(F.Frozen(fast, frames=raw).spec, validate=False))
    assert a["data"] == b["data"] and a["layout"] == b["layout"]
    from tests.conftest import decode

    assert len(a["frames"]) == len(b["frames"]) == 4
    for fa, fb in zip(a["frames"], b["frames"]):
        assert fa["name"] == fb["name"] and fa["traces"] == fb["traces"]
        np.testing.assert_array_equal(decode(fa["data"][0]["y"]), decode(fb["data"][0]["y"]))
        np.testing.assert_array_equal(decode(fb["data"][0]["x"]), x)


def test_typed_round_trips_like_plotly():
    from _plotly_utils.utils import to_typed_array_spec

    from tests.conftest import decode

    cases = [
        np.linspace(0, 1, 7),
        np.arange(5, dtype=np.int64) * 100_000,
        np.arange(4, dtype=np.uint64),
        np.arange(6.0).reshape(2, 3),
    ]
    for a in cases:
        mine, ref = F.typed(a), to_typed_array_spec(a)
        np.testing.assert_array_equal(decode(mine), decode(ref))
        assert decode(mine).shape == a.shape
    assert F.typed(np.linspace(0, 1, 5), np.float32)["dtype"] == "f4"
    assert F.typed(np.array([2**40], dtype=np.int64)) == [2**40]  # too wide for plotly.js: a list
    assert F.typed(np.array([])) == []


def _json(fig) -> dict:
    return json.loads(pio.to_json(F.Frozen(fig).spec, validate=False))


def _every_helper(t: str) -> go.Figure:
    """One figure that uses every trace, shape and layout helper of ui.kit.figures."""
    x = np.linspace(0.1, 3.0, 30)
    fig = F.figure(
        "x",
        "y",
        t,
        [
            F.line(x, np.exp(x), "exact"),
            F.line(x, x, "ref", color=F.COLORS["ref"], width=1.5, dash="dot", line={"shape": "hv"}, hoverinfo="skip"),
            F.markers(x[::3], x[::3], "mc", error=0.1 * x[::3], error_y={"thickness": 1}),
            F.markers(x[::3], x[::3], "ci", symbol="square", size=8, error=(0.1 * x[::3], 0.2 * x[::3])),
            F.point([1.0], [2.0], "peak", error_y={"type": "data", "array": [0.1]}),
            F.point([1.0], [2.0], "mark", symbol="diamond-open", marker={"line": {"width": 2}}),
            F.histogram(np.linspace(0, 1, 6), np.arange(5.0), "hist"),
        ],
        log_x=True,
        shapes=[F.hline(1.0, dash="dot"), F.vline(2.0, width=1.2)],
        annotations=[{"text": "e", "x": 1}],
        xaxis={"range": [-1, 1]},
        margin={"l": 70},
        barmode="group",
        **F.animation(
            ["0", "1"],
            ["0.0", "0.5"],
            "play",
            "pause",
            "τ = ",
            duration=90,
            redraw=True,
            y=0.0,
            slider_x=0.3,
            ticklen=3,
        ),
    )
    F.exact_line(fig, x, x, "added")
    F.sim_markers(fig, x, x, "added sim")
    F.sim_line(fig, x, x, "added dashed", line={"shape": "hv"})
    fig.add_trace(go.Scatter(x=x, y=x, name="a go trace", mode="lines", line={"width": 1}))
    fig.add_traces([{"type": "scatter", "x": x, "y": 2 * x, "name": "a dict trace"}])
    return fig


def test_helpers_build_valid_figures_identically_without_validation(monkeypatch):
    """Figures are built without Plotly's validation (ui.kit.figures.VALIDATE); with it (which rejects
    unknown or ill-typed properties) the same calls give the same figure, in 2-D and 3-D."""
    for title in ("t", None):
        monkeypatch.setattr(F, "VALIDATE", True)
        checked = _json(_every_helper(title))
        scene = _json(
            F.figure3d(
                [dict(type="scatter3d", mode="lines", **F.sphere_wire())], height=400, scene={"aspectmode": "cube"}
            )
        )
        monkeypatch.setattr(F, "VALIDATE", False)
        assert _json(_every_helper(title)) == checked
        assert (
            _json(
                F.figure3d(
                    [dict(type="scatter3d", mode="lines", **F.sphere_wire())], height=400, scene={"aspectmode": "cube"}
                )
            )
            == scene
        )


def test_sphere_wire_lies_on_the_unit_sphere():
    from tests.conftest import decode

    for kw in ({}, dict(parallels=(-60, -30, 0, 30, 60), meridians=12, pole_gap=0.0, step=5.0)):
        w = F.sphere_wire(**kw)
        P = np.stack([decode(w[c]).astype(float) for c in "xyz"], 1)
        pts = P[np.isfinite(P).all(axis=1)]
        np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 1.0, rtol=1e-6)
        lines = len(kw.get("parallels", (-60, -30, 30, 60))) + kw.get("meridians", 8)
        assert np.isnan(P[:, 0]).sum() == lines
        assert np.abs(pts[:, 2]).max() == pytest.approx(np.sin(np.radians(90 - kw.get("pole_gap", 15.0))), abs=1e-6)


def test_sub_seed_is_deterministic_and_distinct():
    from ui.kit.compute import sub_seed

    assert sub_seed(3, 1, 2) == sub_seed(3, 1, 2)
    seeds = {sub_seed(s, *tags) for s in (0, 1) for tags in ((1,), (2,), (1, 5), (2, 1, 4))}
    assert len(seeds) == 8 and all(0 <= s < 2**63 for s in seeds)


def _legend_and_field() -> go.Figure:
    g = np.linspace(-1.0, 1.0, 5)
    fig = F.figure(
        "x",
        "y",
        "t",
        [
            F.heatmap(
                g,
                g,
                np.outer(g, g),
                "curl",
                "RdBu_r",
                zmin=-1.0,
                zmax=1.0,
                bar="curl",
                hover="%{z:.3g}",
                colorbar={"len": 0.8},
            ),
            F.heatmap(g, g, np.outer(g, g), "density", [[0, "#FFFFFF"], [1, "#7FA7CF"]], zmin=0.0),
            F.line(g, g, "a"),
            F.markers(g, g, "b"),
            F.line(g, g, "hidden", showlegend=False),
        ],
        height=400,
        **F.equal_axes(1.5),
    )
    return F.tall_legend(fig)


def test_tall_legend_and_heatmap_build_valid_figures_identically(monkeypatch):
    monkeypatch.setattr(F, "VALIDATE", True)
    checked = _json(_legend_and_field())
    monkeypatch.setattr(F, "VALIDATE", False)
    spec = _json(_legend_and_field())
    assert spec == checked
    bar, plain = spec["data"][0], spec["data"][1]
    assert bar["showscale"] and bar["colorbar"]["title"]["text"] == "curl" and bar["colorbar"]["len"] == 0.8
    assert bar["hovertemplate"] == "%{z:.3g}<extra></extra>" and not bar["showlegend"]
    assert bar["colorbar"]["exponentformat"] == "power"
    assert not plain["showscale"] and "colorbar" not in plain and "zmax" not in plain
    x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert x["range"] == y["range"] == [-1.5, 1.5] and y["scaleanchor"] == "x" and y["scaleratio"] == 1
    assert x["constrain"] == y["constrain"] == "domain" and x["title"]["text"] == "x"  # house axis kept


@pytest.mark.parametrize(
    "names, columns, cols, rows",
    [
        (["a", "b", "c"], None, 2, 2),  # short: two columns
        (["a", "b", "c", "d"], None, 2, 2),
        (["x" * 16, "b"], None, 2, 1),  # fits half a phone's plot width
        (["x" * 17, "b"], None, 1, 2),  # one long entry: one column
        (["中" * 9, "b", "c"], None, 1, 3),  # 9 CJK characters count as 18
        (["中" * 8, "b", "c"], None, 2, 2),  # ... 8 as 16: still two columns
        (["a", "b", "c", "d", "e"], 3, 3, 2),
        (["a<sub>" + "x" * 6 + "</sub>" + "y" * 9], None, 2, 1),  # markup does not count, hidden traces neither
    ],
)
def test_tall_legend_reserves_one_row_per_line_of_entries(names, columns, cols, rows):
    fig = F.figure("x", "y", "t", [F.line([0, 1], [0, 1], n) for n in names], height=400)
    fig.add_trace(F.line([0, 1], [0, 1], "x" * 60, showlegend=False))
    assert F.tall_legend(fig, columns) is fig
    assert fig.layout.legend.entrywidth == pytest.approx(1.0 / cols - 0.01)
    assert fig.layout.legend.entrywidthmode == "fraction"
    assert fig.layout.margin.t == 62 + 21 * rows and fig.layout.height == 400 + 21 * rows
    assert F.tall_legend(F.figure("x", "y", data=[F.line([0, 1], [0, 1], "a")]), height=420).layout.height == 441


def test_log_ticks_label_exactly_the_values_without_minor_grid(monkeypatch):
    monkeypatch.setattr(F, "VALIDATE", True)
    fig = F.figure(
        "k",
        "h",
        "t",
        [F.line([1, 64], [1, 0.1], "a")],
        log_x=True,
        log_y=True,
        xaxis=F.log_ticks([1, 2, 4, 64]),
        yaxis=F.log_ticks(np.array([0.05, 0.1, 1.0])),
    )
    spec = F.Frozen(fig).spec["layout"]
    assert spec["xaxis"]["tickvals"] == [1, 2, 4, 64] and spec["xaxis"]["ticktext"] == ["1", "2", "4", "64"]
    assert spec["yaxis"]["ticktext"] == ["0.05", "0.1", "1"]
    for ax in (spec["xaxis"], spec["yaxis"]):
        assert ax["type"] == "log" and ax["minor"]["ticks"] == "" and ax["minor"]["showgrid"] is False
        assert ax["dtick"] == 1  # explicit labels: fit_log_ticks leaves the axis alone


def test_markers_keep_explicit_error_bars():
    """``markers(..., error_y=dict(...))`` without ``error=`` keeps the bars (they were dropped)."""
    from ui.kit.figures import markers

    tr = markers([1, 2], [3, 4], "m", error_y={"type": "data", "array": [0.1, 0.2]})
    assert tr["error_y"]["array"] == [0.1, 0.2]
    tr = markers([1, 2], [3, 4], "m", error=np.array([0.1, 0.2]), error_y={"thickness": 2})
    assert tr["error_y"]["thickness"] == 2 and np.allclose(tr["error_y"]["array"], [0.1, 0.2])


def _label_value(s: str) -> float:
    """The number a tick label states: '0.5', '10⁻⁵', '2×10⁻⁵'."""
    s = s.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
    mant, _, exp = (
        s.partition("×10") if "×" in s else (("1", "", s[2:]) if s.startswith("10") and len(s) > 2 else (s, "", "0"))
    )
    return float(mant) * 10.0 ** int(exp)


@pytest.mark.parametrize(
    "lo,hi,want",
    [
        (0.15, 1.05, ["0.2", "0.5", "1"]),  # depth_sum "stretch": used to read "1, 5, 2"
        (3e-6, 2e-5, ["5×10⁻⁶", "10⁻⁵", "2×10⁻⁵"]),
        (0.93, 1.02, ["0.95", "1"]),  # very short: round linear steps
        (8.0, 12.0, ["8", "9", "10"]),  # every digit when 1-2-5 leaves < 3
    ],
)
def test_short_log_axis_is_labelled_in_full(lo, hi, want):
    """A short log axis never shows Plotly's bare minor digits (dtick "D1"/"D2")."""
    fig = F.figure("x", "y", log_y=True)
    F.exact_line(fig, [1, 2], [lo, hi], "c")
    ax = F.Frozen(fig).spec["layout"]["yaxis"]
    assert "dtick" not in ax or ax["dtick"] is None
    assert list(ax["ticktext"]) == want
    np.testing.assert_allclose(ax["tickvals"], [_label_value(s) for s in want], rtol=1e-12)
    # a page's own dtick="D2" (two_point did that) is replaced as well
    fig = F.figure("x", "y", log_x=True)
    F.exact_line(fig, [0.2, 1.0], [1, 2], "c")
    fig.update_xaxes(dtick="D2")
    ax = F.Frozen(fig).spec["layout"]["xaxis"]
    assert ax.get("dtick") != "D2" and list(ax["ticktext"]) == ["0.2", "0.5", "1"]


def test_band_fills_between_its_edges():
    x = np.linspace(0.0, 1.0, 11)
    lo, hi = x - 0.1, x**2 + 0.2
    traces = F.band(x, lo, hi, "range", color="#0072B2", alpha=0.25, legendgroup="g")
    assert len(traces) == 2
    lower, upper = traces
    np.testing.assert_array_equal(lower["y"], lo)
    np.testing.assert_array_equal(upper["y"], hi)
    assert "name" not in lower and upper["name"] == "range"
    assert upper["fill"] == "tonexty" and "fill" not in lower  # filled down to the lower edge
    assert upper["fillcolor"] == "rgba(0,114,178,0.25)"
    assert lower["showlegend"] is False and upper["showlegend"] is False
    assert lower["legendgroup"] == upper["legendgroup"] == "g"
    assert F.band(x, lo, hi, "r", showlegend=True)[1]["showlegend"] is True
    assert F.band(x, lo, hi, "r", showlegend=True)[0]["showlegend"] is False
    # valid Plotly traces, and the same figure built with and without validation
    a = go.Figure(data=traces, layout={"template": F.TEMPLATE})
    b = go.Figure(data=traces, layout={"template": F.TEMPLATE}, _validate=False)
    assert json.loads(pio.to_json(a, validate=False)) == json.loads(pio.to_json(b, validate=False))
    assert F.rgba("#D55E00", 0.5) == "rgba(213,94,0,0.5)"


def test_spec_dict_equals_plotly_to_dict():
    """Frozen serialises with ui.kit.figures.spec_dict (no deep copy): the same dict as fig.to_dict(),
    on traces with float, int64 (narrowed), uint, bool, 2-D, empty and list data, frames, ranges
    given as arrays, 3-D and heatmaps; and the figure itself is left unchanged."""
    x = np.linspace(0.0, 1.0, 7)
    fig = F.figure(
        "x",
        "y",
        "t",
        log_y=True,
        data=[
            F.line(x, np.exp(x), "f8"),
            F.markers(np.arange(7), np.arange(7) * 300, "i8 -> i2", error=np.full(7, 0.1)),
            {"type": "scatter", "x": np.arange(5, dtype=np.uint64), "y": [1, 2.5, None, 4, 5], "name": "u8 + list"},
            {"type": "scatter", "x": np.array([True, False]), "y": np.array([], dtype=float), "name": "bool, empty"},
            {
                "type": "scatter",
                "x": np.arange(3) * 10**12,
                "y": np.float32([1, 2, 3]),
                "name": "big ints, f4",
                "text": ["a", "b", "c"],
                "customdata": np.arange(6.0).reshape(3, 2),
            },
            F.heatmap(x, x[:3], np.outer(x[:3], x), "field", "RdBu_r", bar="z"),
        ],
        xaxis={"range": np.array([0.0, 1.0])},
    )
    fig.add_trace(go.Scatter3d(x=x, y=x, z=x, mode="lines"))
    fig.frames = [go.Frame(data=[go.Scatter(x=x, y=k * x)], name=str(k)) for k in range(2)]
    before = fig.to_dict()
    got = F.spec_dict(fig)
    assert json.dumps(got, cls=plotly.utils.PlotlyJSONEncoder, sort_keys=True) == json.dumps(
        before, cls=plotly.utils.PlotlyJSONEncoder, sort_keys=True
    )
    assert pio.to_json(got, validate=False) == pio.to_json(before, validate=False)
    got["data"][0]["name"] = "changed"
    got["layout"]["xaxis"]["title"]["text"] = "changed"
    assert pio.to_json(fig.to_dict(), validate=False) == pio.to_json(before, validate=False)  # a copy


def test_long_lines_are_thinned_to_the_screen_and_keep_their_extremes():
    from tests.conftest import decode
    from ui.kit.finish import MAX_LINE_POINTS, fewer_points_spec

    x = np.linspace(0.0, 10.0, 50_001)
    y = np.sin(7 * x)
    y[31_337] = 5.0  # a one-sample spike, and a one-sample dip: both must survive
    y[7_001] = -4.0
    spec = {"data": [{"type": "scatter", "mode": "lines", "x": F.typed(x), "y": F.typed(y), "name": "a"}], "layout": {}}
    out = fewer_points_spec(spec)
    xs, ys = decode(out["data"][0]["x"]), decode(out["data"][0]["y"])
    assert len(ys) <= MAX_LINE_POINTS + 2 and len(ys) == len(xs)
    assert ys.max() == 5.0 and ys.min() == -4.0
    assert xs[0] == 0.0 and xs[-1] == 10.0 and np.all(np.diff(xs) > 0)
    # every kept point is a point of the line, at its own x
    idx = np.searchsorted(x, xs)
    assert np.array_equal(x[idx], xs) and np.array_equal(y[idx], ys)
    assert out["data"][0]["name"] == "a" and spec["data"][0]["y"] is not out["data"][0]["y"]  # input unchanged


def test_what_thinning_leaves_alone():
    from ui.kit.finish import fewer_points_spec

    n = 10_000
    x, y = np.arange(n, dtype=float), np.cos(np.arange(n) / 100)
    short = {"type": "scatter", "mode": "lines", "x": F.typed(x[:2000]), "y": F.typed(y[:2000])}
    kept = [
        {"type": "scatter", "mode": "markers", "x": F.typed(x), "y": F.typed(y)},  # every marker is data
        {"type": "scatter", "mode": "lines", "x": F.typed(np.cos(x)), "y": F.typed(y)},  # x turns back
        {"type": "scatter", "mode": "lines", "x": F.typed(x), "y": F.typed(np.where(x == 50, np.nan, y))},  # a gap
        {"type": "scatter", "mode": "lines", "x": F.typed(x), "y": F.typed(y), "customdata": F.typed(y)},
        {"type": "scattergl", "mode": "lines", "x": F.typed(x), "y": F.typed(y)},
    ]
    spec = {"data": [short, *kept], "layout": {}}
    assert fewer_points_spec(spec) is spec


def test_page_figures_at_their_defaults_are_sent_whole():
    """No chart of any page has a line long enough to be thinned at the defaults: what tests read
    from the charts is what the pages computed."""
    from harness.apptest import app_test
    from tests.conftest import chart_specs
    from ui.kit.finish import fewer_points_spec

    for stem in ("coordinates", "rotation", "depth_sum"):
        for spec in chart_specs(app_test(stem, {"lang": "en"})):
            assert fewer_points_spec(spec) is spec
