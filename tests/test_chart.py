"""Charts drawn through ui/kit/chart.py: what the browser receives equals what st.plotly_chart sends,
and a chart keeps its element (its identity is its key) when its figure changes, which is what
lets the browser update it with Plotly.react instead of drawing a new chart."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from tests.conftest import app_test, charts
from ui.kit import chart
from ui.kit import figures as F


def _fig(k: float) -> go.Figure:
    x = np.linspace(0, 1, 30)
    fig = go.Figure(go.Scatter(x=x, y=np.sin(k * x), name="sin"))
    fig.add_trace(go.Scatter3d(x=x, y=x, z=k * x, mode="markers"))
    fig.update_layout(title="t", height=300)
    fig.frames = [go.Frame(data=[go.Scatter(x=x, y=j * x)], name=str(j)) for j in range(3)]
    return fig


def test_the_payload_is_st_plotly_chart_s_json_with_the_config():
    for k in (1.0, 2.5):
        live = _fig(k)
        frozen = F.Frozen(_fig(k))
        for fig in (live, frozen):
            msg = json.loads(chart.payload(fig, F.CONFIG).decode())
            # the toolbar reduced to the app's buttons; the bundle with every trace type (3-D here)
            assert msg["config"] == chart.toolbar(F.CONFIG, scene=True) and msg["url"] == chart.plotly_url("3d")
            assert msg["fig"] == json.loads(pio.to_json(fig, validate=False))
            assert len(msg["fig"]["frames"]) == 3


def test_a_chart_keeps_its_element_when_its_figure_changes():
    at = app_test("two_point", {"lang": "en"})
    assert not at.exception
    before = {el.proto.id: chart.sent_figure(el.proto) for el in charts(at)}
    assert len(before) >= 3
    at.slider(key="beta").set_value(at.slider(key="beta").value + 1.0).run()
    assert not at.exception
    after = {el.proto.id: chart.sent_figure(el.proto) for el in charts(at)}
    assert set(after) == set(before), "a chart got a new element id: the browser would draw it anew"
    changed = [i for i in before if before[i] != after[i]]
    assert changed, "moving beta changed no figure"


def test_other_components_are_not_charts():
    class Proto:
        component_name = "something_else"

        def WhichOneof(self, _):
            return "bytes"

        bytes = b'{"fig": {}}'

    assert chart.sent_figure(Proto()) is None
