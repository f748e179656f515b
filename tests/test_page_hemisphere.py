"""What the hemisphere page draws is what sim/ computes: solid curves are the closed forms,
simulation markers are the sim functions (several parameter values)."""
import numpy as np
import pytest

from tests.conftest import app_test, chart_specs, decode


@pytest.mark.parametrize("query", [{}, {"beta": "4", "cap": "80", "dt": "0.3", "A": "random", "seed": "3"}])
def test_hemisphere_min_height_is_the_layer_map(query):
    """The plotted minᵢ⟨w, zᵢ⟩ is recomputed from the NumPy reference map; it never decreases."""
    import math

    from views.hemisphere import _layers
    from sim import hemisphere as hs
    from sim.attention import simulate_reference

    at = app_test("hemisphere", query)
    assert not at.exception
    v = {p: at.slider(key=p).value for p in ("n", "d", "beta", "horizon", "dt", "cap", "A_seed", "seed")
         if _has_slider(at, p)}
    A_kind = at.selectbox(key="A").value
    figs = chart_specs(at)
    rmin = next(f for f in figs
                if "rᵢ" in str(f["layout"].get("yaxis", {}).get("title", {}).get("text")))["data"][0]
    tau, y = decode(rmin["x"]), decode(rmin["y"])
    assert np.all(np.diff(y) >= -1e-12) and y[0] > 0
    d = v.get("d", 3)
    Z0 = hs.cap_uniform(v["n"], d, math.radians(v["cap"]), seed=v["seed"])
    A = hs.random_matrix(d, A_kind, v.get("A_seed", 0))
    steps, dt_used = _layers(v["horizon"], v["dt"], v["n"], d)
    ref = simulate_reference(Z0, v["beta"], dt_used, steps, A=A)
    layers = np.rint(tau / dt_used).astype(int)
    np.testing.assert_allclose(tau, layers * dt_used, atol=1e-9)
    np.testing.assert_allclose(y, (ref[layers] @ np.eye(d)[-1]).min(axis=1), atol=1e-10)


def _has_slider(at, key):
    try:
        at.slider(key=key)
        return True
    except KeyError:
        return False


def test_sphere_scene_names_every_axis_and_draws_w_as_a_segment():
    """Issue 12: the z₂ axis title was not visible in the 3-D scene (Plotly placed it outside the
    drawn area); the horizontal axes are now named inside the scene at their positive ends. And the
    text says w is drawn as a segment: the w trace is a plain line from the centre."""
    from ui.i18n import Text

    for lang in ("en", "zh"):
        t = Text("hemisphere", lang)
        at = app_test("hemisphere", {"lang": lang})
        assert not at.exception
        scenes = [f for f in chart_specs(at) if "scene" in f["layout"]]
        assert len(scenes) == 2
        for f in scenes:
            sc = f["layout"]["scene"]
            names = {a["text"]: (a["x"], a["y"], a["z"]) for a in sc.get("annotations", [])}
            assert names.get(t("fig3d.x")) == (1.12, 0.0, 0.0) and names.get(t("fig3d.y")) == (0.0, 1.12, 0.0)
            assert sc["zaxis"]["title"]["text"] == t("fig3d.z")
            for a in sc["annotations"]:  # inside the drawn range of every axis
                assert all(abs(a[c]) <= sc[c + "axis"]["range"][1] for c in "xyz")
        w = next(tr for tr in scenes[0]["data"] if tr.get("name") == t("fig3d.w"))
        assert w["mode"] == "lines+text" and list(w["x"]) == [0.0, 0.0] and list(w["z"]) == [0.0, 1.3]
    assert "drawn as a segment" in Text("hemisphere", "en")("statement.body")
    assert "线段" in Text("hemisphere", "zh")("statement.body")
