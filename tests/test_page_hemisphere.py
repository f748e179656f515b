"""What the hemisphere page draws is what sim/ computes: solid curves are the closed forms,
simulation markers are the sim functions (several parameter values)."""

import numpy as np
import pytest

from tests.conftest import app_test, chart_specs, decode


@pytest.mark.parametrize("query", [{}, {"beta": "4", "cap": "80", "dt": "0.3", "A": "random", "seed": "3"}])
def test_hemisphere_min_height_is_the_layer_map(query):
    """The plotted minᵢ⟨w, zᵢ⟩ is recomputed from the NumPy reference map; it never decreases."""
    import math

    from pages.hemisphere.views import _layers
    from sim import hemisphere as hs
    from sim.attention import simulate_reference

    at = app_test("hemisphere", query)
    assert not at.exception
    v = {
        p: at.slider(key=p).value
        for p in ("n", "d", "beta", "horizon", "dt", "cap", "A_seed", "seed")
        if _has_slider(at, p)
    }
    A_kind = at.selectbox(key="A").value
    figs = chart_specs(at)
    rmin = next(f for f in figs if "rᵢ" in str(f["layout"].get("yaxis", {}).get("title", {}).get("text")))["data"][0]
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
    """The z₂ axis title was not visible in the 3-D scene (Plotly placed it outside the
    drawn area), nor z₃'s on a phone; every axis is now named inside the scene. And the
    text says w is drawn as a segment: the w trace is a plain line from the centre."""
    from ui.kit.i18n import Text
    from ui.kit.sphere import LABEL_BG

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
            # the vertical axis too (its Plotly title was missing at 390 px, on its side at 1400 px)
            assert names.get(t("fig3d.z")) == (0.0, 0.0, -1.12)
            assert not any(sc[c + "axis"]["title"]["text"] for c in "xyz")
            for a in sc["annotations"]:  # inside the drawn range of every axis, readable over tokens
                assert all(abs(a[c]) <= sc[c + "axis"]["range"][1] for c in "xyz")
                assert a["bgcolor"] == LABEL_BG
        w = next(tr for tr in scenes[0]["data"] if tr.get("name") == t("fig3d.w"))
        assert w["mode"] == "lines+text" and list(w["x"]) == [0.0, 0.0] and list(w["z"]) == [0.0, 1.12]
        # its label at the top end, inside the scene's cube (outside, plotly clips the text away)
        assert w["text"][-1] == "w" and w["z"][-1] <= scenes[0]["layout"]["scene"]["zaxis"]["range"][1]
    assert "drawn as a segment" in Text("hemisphere", "en")("statement.body")
    assert "线段" in Text("hemisphere", "zh")("statement.body")


def _heatmaps(at):
    return [f["data"][0] for f in chart_specs(at) if f["data"] and f["data"][0].get("type") == "heatmap"]


def test_paper_size_is_offered_and_one_shared_float32_job(monkeypatch):
    """The "paper" size (the authors' 2048 x 90, float32) is an option; pressing the button in
    two sessions runs one shared job through the heavy-job pool; the heatmaps are the float32 phase
    diagram and agree with float64. The size is monkeypatched small here (same protocol otherwise)."""
    from sim import hemisphere as hs
    from tests.test_security_jobs import _fresh_pools
    from ui.server import jobs
    from ui.kit.i18n import Text
    import pages.hemisphere.views as vh

    assert vh.PHASE_SIZES["paper"] == dict(B=2048, n_betas=90, precision="float32", max_work=1.2e11)
    small = dict(B=32, n_betas=5, precision="float32", max_work=1.2e11)
    monkeypatch.setitem(vh.PHASE_SIZES, "paper", small)
    real, runs = hs.phase_diagram, []

    def counted(**kw):
        runs.append({k: v for k, v in kw.items() if k != "progress"})
        return real(**kw)

    monkeypatch.setattr(hs, "phase_diagram", counted)
    _fresh_pools(monkeypatch)
    t = Text("hemisphere", "en")
    shown = []
    for _ in range(2):
        at = app_test("hemisphere", {"lang": "en", "phase_size": "paper"})
        assert not at.exception
        sel = at.selectbox(key="phase_size")
        assert sel.value == "paper" and t("params.phase_size.options.paper") in sel.options
        assert t("phase.paper_note") in [c.value for c in at.caption]
        assert not _heatmaps(at)  # nothing runs before the click
        assert at.button(key="_hemi_phase_btn").label == t("phase.button_paper", B=32, nb=5)
        at.button(key="_hemi_phase_btn").click().run()
        assert not at.exception, [e.message for e in at.exception]
        shown.append(_heatmaps(at))
    assert runs == [small]  # one run, float32, for both sessions
    assert jobs.pool("panel").status()["runs"] == 1
    p32 = real(**small)
    p64 = real(B=32, n_betas=5)
    for maps in shown:
        one, med = (decode(h["z"]).reshape(5, 31) for h in maps)
        np.testing.assert_array_equal(one, p32.one_cluster)
        np.testing.assert_array_equal(med, p32.median_clusters)
        np.testing.assert_allclose(decode(maps[0]["y"]), p64.betas)
        assert np.abs(one - p64.one_cluster).max() <= 1 / 32 + 1e-12  # at most one system of 32
        assert np.abs(med - p64.median_clusters).max() <= 0.5


def test_paper_size_texts_say_the_time_in_both_languages():
    from ui.kit.i18n import Text

    en, zh = Text("hemisphere", "en"), Text("hemisphere", "zh")
    assert "2048" in en("params.phase_size.options.paper") and "minute" in en("params.phase_size.options.paper")
    assert "2048" in zh("params.phase_size.options.paper") and "分钟" in zh("params.phase_size.options.paper")
    for t, word in ((en, "float32"), (zh, "float32")):
        assert word in t("phase.paper_note") and "99" in t("phase.paper_note")


def test_values_at_the_end_are_at_the_last_layer_and_the_title_follows_the_cap():
    """With 3999 layers recorded every 10th, "min rᵢ at the end" and the cluster count
    were read at layer 3990 (the last record); the last layer is now always a record. A cap of
    90° or more gets a title that does not claim monotonicity."""
    import math

    from pages.hemisphere.figures_depth import rmin_figure
    from pages.hemisphere.views import contrast_data, hemi_data
    from sim import hemisphere as hs
    from sim.attention import simulate_reference
    from ui.kit.i18n import Text

    n, d, beta, horizon, dt = 6, 3, 2.0, 39.99, 0.01  # 3999 layers, one record every 10
    h = hemi_data(n, d, beta, horizon, dt, 80, "identity", 0, 1)
    assert h["steps"] == 3999 and h["tau"][-1] == pytest.approx(39.99)
    ref = simulate_reference(hs.cap_uniform(n, d, math.radians(80), seed=1), beta, dt, 3999)
    assert h["rmin"][-1] == pytest.approx(ref[-1, :, -1].min(), abs=1e-12)
    c = contrast_data(n, d, beta, horizon, dt, "identity", 0, 1)
    assert c["tau"][-1] == pytest.approx(39.99) and c["clusters"].size == c["tau"].size
    t = Text("hemisphere", "en")
    for cap, key in ((80, "fig.rmin_title"), (90, "fig.rmin_title_wide"), (150, "fig.rmin_title_wide")):
        fig = rmin_figure(t, n, d, beta, 5.0, 0.1, cap, "identity", 0, 1)
        assert t(key) in str(fig.to_dict()["layout"]["title"])
