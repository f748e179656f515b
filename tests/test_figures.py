"""ui.figures: a Frozen figure reaches the browser exactly as Plotly would send it."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools

from ui import figures as F
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
