"""The coordinates page plots exactly what sim.coordinates computes, for several parameter sets."""

import math

import numpy as np
import pytest

from sim import coordinates as co
from tests.conftest import app_test, chart_specs, decode
from ui.kit.i18n import Text
from pages.coordinates.views import PAIRS, Y0

SETS = [
    dict(a0=0.3, b0=0.3, y=2.0, horizon=3.0, dt=0.05, n=8, pair="rotation_shear", lang="en"),
    dict(a0=1.5, b0=-0.2, y=1.0, horizon=2.0, dt=0.02, n=5, pair="nilpotent", lang="zh"),
    dict(a0=-0.4, b0=0.9, y=-1.5, horizon=5.0, dt=0.1, n=40, pair="commuting", lang="en"),
]


def _traces(spec):
    return {tr["name"]: (decode(tr.get("x")), decode(tr.get("y"))) for tr in spec["data"]}


def _open(p):
    at = app_test("coordinates", {k: str(v) for k, v in p.items()})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.fixture(scope="module", params=range(len(SETS)))
def page(request):
    p = SETS[request.param]
    return p, _open(p)


def test_theta_curves_and_iterates_are_the_sim_functions(page):
    p, at = page
    t = Text("coordinates", p["lang"])
    fig = _traces(chart_specs(at)[0])
    a0, b0, y, dt = p["a0"], p["b0"], p["y"], p["dt"]
    steps = int(round(p["horizon"] / dt))
    for m in co.METRICS:
        x, th = fig[t(f"fig.{m}_exact")]
        assert x[-1] == pytest.approx(steps * dt)
        np.testing.assert_allclose(th, co.theta_flow(a0, b0, y, x, m), rtol=1e-12, atol=1e-14)
        xs, ths = fig[t(f"fig.{m}_steps")]
        k = np.rint(xs / dt).astype(int)
        np.testing.assert_allclose(xs, k * dt, rtol=1e-12)
        np.testing.assert_allclose(ths, co.gradient_steps(a0, b0, y, dt, steps, m)[k, 2], rtol=1e-12, atol=1e-14)
    # metrics: θ at t_max, as shown
    shown = {mt.label: mt.value for mt in at.metric}
    assert shown[t("metrics.theta_euclidean")] == f"{co.theta_flow(a0, b0, y, [steps * dt])[0]:.4g}"
    assert shown[t("metrics.theta_pullback")] == f"{co.theta_flow(a0, b0, y, [steps * dt], 'pullback')[0]:.4g}"


def test_ab_path_is_the_closed_form_on_its_hyperbola(page):
    p, at = page
    t = Text("coordinates", p["lang"])
    fig = _traces(chart_specs(at)[1])
    a0, b0, y, dt = p["a0"], p["b0"], p["y"], p["dt"]
    steps = int(round(p["horizon"] / dt))
    a, b = fig[t("fig.euclidean_exact")]
    tt = np.linspace(0.0, steps * dt, a.size)
    np.testing.assert_allclose(np.column_stack([a, b]), co.ab_flow(a0, b0, y, tt), rtol=1e-12, atol=1e-14)
    ha, hb = fig[t("fig.hyperbola")]
    np.testing.assert_allclose(ha**2 - hb**2, a0**2 - b0**2, atol=1e-9)
    ia, ib = fig[t("fig.euclidean_steps")]
    it = co.gradient_steps(a0, b0, y, dt, steps)
    assert np.all(np.isin(ia, it[:, 0])) and ia[0] == a0 and ib[0] == b0


def test_loops_areas_and_endpoints_are_the_sim_functions(page):
    p, at = page
    t = Text("coordinates", p["lang"])
    specs = chart_specs(at)
    n, (A, B) = p["n"], PAIRS[p["pair"]]
    loops = _traces(specs[2])
    x1, x2 = loops[t("fig.loop_n", n=n, area=f"{co.levy_area(n):.4f}")]
    np.testing.assert_allclose(np.hypot(x1, x2), 1 / math.sqrt(n), rtol=1e-12)
    area = _traces(specs[3])
    ns, ar = area[t("fig.area_numeric")]
    np.testing.assert_allclose(ar, [co.levy_area(int(k)) for k in ns], rtol=1e-13)
    np.testing.assert_allclose(ar, math.pi, rtol=1e-5)
    np.testing.assert_allclose(area[t("fig.area_pi")][1], math.pi)
    end = _traces(specs[4])
    ns, err = end[t("fig.err_limit")]
    assert n in ns
    limit = co.area_limit(A, B, Y0)
    want = [max(np.linalg.norm(co.driven_endpoint(int(k), A, B, Y0) - limit), 1e-16 * np.linalg.norm(Y0)) for k in ns]
    np.testing.assert_allclose(err, want, rtol=1e-10)
    ns0, err0 = end[t("fig.err_y0")]
    if p["pair"] == "commuting":
        assert np.all(err0 < 1e-10) and np.all(err < 1e-10)  # solver accuracy, n up to 4096
        assert t("fig.slope_half") not in end
    else:
        gap = np.linalg.norm(limit - Y0)
        np.testing.assert_allclose(end[t("fig.gap_limit_y0")][1], gap, rtol=1e-13)
        assert err0[-1] == pytest.approx(gap, rel=0.1) and err[-1] < 0.05 * gap


def test_diverging_iteration_gives_a_note_not_an_error():
    p = dict(a0=2.0, b0=-1.9, y=3.0, horizon=10.0, dt=0.3, n=8, pair="rotation_shear", lang="en")
    at = _open(p)
    t = Text("coordinates", "en")
    assert any(t("notes.no_steps_euclidean", dt=0.3) == i.value for i in at.info)
    names = {tr["name"] for tr in chart_specs(at)[0]["data"]}
    assert t("fig.euclidean_steps") not in names and t("fig.pullback_steps") in names


@pytest.mark.parametrize("a0,b0,y", [(0.3, -0.3, 2.0), (0.5, 0.5, -1.0), (0.0, 0.0, 2.0)])
def test_a_diagonal_start_meets_the_saddle(a0, b0, y):
    """On a diagonal a = ±b with ab of the other sign than y, both flows stay on the diagonal: the
    Euclidean flow stops at the saddle (θ → 0, not y) and the pulled-back flow is drawn only up to
    the time it reaches the saddle, with no step markers; its predict step says it is undefined."""
    from pages.coordinates import views as vc
    from pages.coordinates.predict import pullback_end

    d = vc.metric_data(a0, b0, y, 10.0, 0.05)
    ts = d["saddle"]
    assert ts is not None and ts == pytest.approx(math.log((y - a0 * b0) / y))
    assert abs(d["theta"]["euclidean"][-1]) < 0.05 * abs(y)  # stopped at the saddle, far from y
    assert d["iter"]["pullback"] is None
    assert np.all(np.isnan(d["theta"]["pullback"][d["t"] > ts]))
    with pytest.raises(ValueError, match="saddle"):
        pullback_end(dict(a0=a0, b0=b0, y=y, horizon=10.0, dt=0.05))
    assert vc.saddle_crossing(0.3, 0.3, 2.0) is None and vc.saddle_crossing(0.31, -0.3, 2.0) is None


def test_both_non_commuting_pairs_fall_with_slope_minus_half():
    """The notice and the nilpotent preset: slope −½ for both pairs (fitted over n >= 8), the
    nilpotent error about 4.5 times the rotation/shear one; commuting: nothing to fit."""
    from pages.coordinates import views as vc

    rs, nil = vc.loop_data(8, "rotation_shear"), vc.loop_data(8, "nilpotent")
    assert rs["slope"] == pytest.approx(-0.5, abs=0.02) and nil["slope"] == pytest.approx(-0.5, abs=0.02)
    ratio = nil["err_limit"][nil["ns"] >= 8] / rs["err_limit"][rs["ns"] >= 8]
    assert np.all((4.2 < ratio) & (ratio < 4.8)), ratio
    assert vc.loop_data(8, "commuting")["slope"] is None


@pytest.mark.parametrize(
    "q", [{"a0": "0", "b0": "0", "y": "2"}, {"a0": "1", "b0": "-1", "y": "1.5"}, {"a0": "0.8", "b0": "0.8", "y": "-1"}]
)
def test_a_start_that_meets_the_saddle_asks_a_question_with_an_answer(q):
    """At a₀ = b₀ = 0 or on a diagonal with ab of the other sign than y the pulled-back θ(t_end) does
    not exist: the step "pullback_end" is replaced by "saddle_end" (θ of the Euclidean flow), which
    the page checks against sim/ and accepts; no "cannot be computed" anywhere."""
    from sim import coordinates as co
    from ui.kit.i18n import Text
    from pages.coordinates import predict as pc

    values = {"a0": float(q["a0"]), "b0": float(q["b0"]), "y": float(q["y"]), "horizon": 5.0, "dt": 0.1}
    ids = [s.id for s in pc.steps_for(values)]
    assert ids[:2] == ["saddle_end", "saddle_a_end"] and len(ids) == len(pc.STEPS)
    want = float(co.theta_flow(values["a0"], values["b0"], values["y"], [pc.t_end(values)], "euclidean")[0])
    assert math.isfinite(want) and abs(want) < 0.05  # it slides into the saddle, θ → 0
    assert [s.id for s in pc.steps_for({**values, "a0": 0.3, "b0": 0.3, "y": 2.0})] == [s.id for s in pc.STEPS]

    at = app_test("coordinates", {"lang": "zh", **q})
    at.session_state["_predict_open_coordinates"] = True
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    t = Text("coordinates", "zh")
    key = "_predict_coordinates_saddle_end_in"
    assert at.number_input(key=key).label.startswith(t("predict.saddle_end.question", t_end="5").split("5")[0])
    at.number_input(key=key).set_value(want)
    btn = next(
        b for b in at.button if b.key and b.key.startswith("FormSubmitter:_predict_form_coordinates_saddle_end-")
    )
    btn.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.success, "the answer is accepted"
