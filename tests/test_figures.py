"""ui.figures: a Frozen figure reaches the browser exactly as Plotly would send it."""
from __future__ import annotations

import json

import numpy as np
import pytest
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools

from ui import figures as F
from ui import style
from ui.i18n import Text


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
        style.fit_legend(ref)
        frozen = F.Frozen(_sample(log_y))
        # what st.plotly_chart does with a figure: to_dict via return_figure_from_figure_or_data, then to_json
        sent = pio.to_json(plotly.tools.return_figure_from_figure_or_data(frozen, validate_figure=True),
                           validate=False)
        assert json.loads(sent) == json.loads(pio.to_json(ref, validate=False))
        assert len(frozen.spec["frames"]) == 3 and len(frozen.spec["data"]) == 2


def test_frozen_applies_log_ticks_once():
    frozen = F.Frozen(_sample(log_y=True))
    # exp(0.1..3) spans 1.26 decades: short axis -> 1-2-5 labels instead of decades only
    assert frozen.spec["layout"]["yaxis"]["dtick"] == "D2"
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
    assert cached(en, 1.0) is f1                    # shared object, built once
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
    cases = [np.linspace(0, 1, 7), np.arange(5, dtype=np.int64) * 100_000, np.arange(4, dtype=np.uint64),
             np.arange(6.0).reshape(2, 3)]
    for a in cases:
        mine, ref = F.typed(a), to_typed_array_spec(a)
        np.testing.assert_array_equal(decode(mine), decode(ref))
        assert decode(mine).shape == a.shape
    assert F.typed(np.linspace(0, 1, 5), np.float32)["dtype"] == "f4"
    assert F.typed(np.array([2**40], dtype=np.int64)) == [2**40]      # too wide for plotly.js: a list
    assert F.typed(np.array([])) == []


def _json(fig) -> dict:
    return json.loads(pio.to_json(F.Frozen(fig).spec, validate=False))


def _every_helper(t: str) -> go.Figure:
    """One figure that uses every trace, shape and layout helper of ui.figures."""
    x = np.linspace(0.1, 3.0, 30)
    fig = F.figure("x", "y", t, [
        F.line(x, np.exp(x), "exact"),
        F.line(x, x, "ref", color=F.COLORS["ref"], width=1.5, dash="dot", line={"shape": "hv"}, hoverinfo="skip"),
        F.markers(x[::3], x[::3], "mc", error=0.1 * x[::3], error_y={"thickness": 1}),
        F.markers(x[::3], x[::3], "ci", symbol="square", size=8, error=(0.1 * x[::3], 0.2 * x[::3])),
        F.point([1.0], [2.0], "peak", error_y={"type": "data", "array": [0.1]}),
        F.point([1.0], [2.0], "mark", symbol="diamond-open", marker={"line": {"width": 2}}),
        F.histogram(np.linspace(0, 1, 6), np.arange(5.0), "hist"),
    ], log_x=True, shapes=[F.hline(1.0, dash="dot"), F.vline(2.0, width=1.2)], annotations=[{"text": "e", "x": 1}],
        xaxis={"range": [-1, 1]}, margin={"l": 70}, barmode="group",
        **F.animation(["0", "1"], ["0.0", "0.5"], "play", "pause", "τ = ", duration=90, redraw=True, y=0.0,
                      slider_x=0.3, ticklen=3))
    F.exact_line(fig, x, x, "added")
    F.sim_markers(fig, x, x, "added sim")
    F.sim_line(fig, x, x, "added dashed", line={"shape": "hv"})
    return fig


def test_helpers_build_valid_figures_identically_without_validation(monkeypatch):
    """Figures are built without Plotly's validation (ui.figures.VALIDATE); with it (which rejects
    unknown or ill-typed properties) the same calls give the same figure, in 2-D and 3-D."""
    for title in ("t", None):
        monkeypatch.setattr(F, "VALIDATE", True)
        checked = _json(_every_helper(title))
        scene = _json(F.figure3d([dict(type="scatter3d", mode="lines", **F.sphere_wire())], height=400,
                                 scene={"aspectmode": "cube"}))
        monkeypatch.setattr(F, "VALIDATE", False)
        assert _json(_every_helper(title)) == checked
        assert _json(F.figure3d([dict(type="scatter3d", mode="lines", **F.sphere_wire())], height=400,
                                scene={"aspectmode": "cube"})) == scene


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
    from ui.page import sub_seed

    assert sub_seed(3, 1, 2) == sub_seed(3, 1, 2)
    seeds = {sub_seed(s, *tags) for s in (0, 1) for tags in ((1,), (2,), (1, 5), (2, 1, 4))}
    assert len(seeds) == 8 and all(0 <= s < 2**63 for s in seeds)
