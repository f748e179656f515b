"""The two-point page: its figures are the exact solution, and the simplex panel is drawn only while open."""

import numpy as np
import pytest

from tests.conftest import app_test, chart_specs
from tests.test_pages import _clean


def test_two_point_figures_show_the_exact_solution():
    """The solid SA/USA curves on the page are sim.two_point.half_angle at the plotted depths."""
    from sim import two_point as tp
    from tests.conftest import decode

    at = app_test("two_point", {"beta": "1.7", "theta0": "0.8", "horizon": "6", "dt": "0.05"})
    _clean(at)
    fig = chart_specs(at)[0]
    lines = [tr for tr in fig["data"] if tr.get("mode") == "lines"]
    assert len(lines) == 2
    for tr, flow in zip(lines, ("SA", "USA")):
        x, y = decode(tr["x"]), decode(tr["y"])
        assert x[-1] == pytest.approx(6.0)
        np.testing.assert_allclose(y, tp.half_angle(1.7, 0.8, x, flow), atol=1e-9)
    from sim.attention import simulate_reference

    markers = [tr for tr in fig["data"] if tr.get("mode") == "markers"]
    assert len(markers) == 2
    for tr, flow in zip(markers, ("SA", "USA")):
        x, y = decode(tr["x"]), decode(tr["y"])
        ref = tp.half_angle_of(simulate_reference(tp.initial_pair(0.8), 1.7, 0.05, 120, flow=flow))
        layers = np.rint(x / 0.05).astype(int)
        np.testing.assert_allclose(x, layers * 0.05, atol=1e-12)
        np.testing.assert_allclose(y, ref[layers], atol=1e-12)  # the markers are the layer map


def test_two_point_simplex_panel_is_drawn_only_while_open():
    """The simplex panel (a closed expander) costs nothing until opened; open, its solid curve is
    sim.two_point.simplex_rho and its markers the simulated mean off-diagonal Gram entry."""
    from sim import two_point as tp
    from sim.attention import simulate_reference
    from tests.conftest import decode

    q = {"beta": "2.5", "n_simplex": "6", "rho0": "0.3", "horizon": "4", "dt": "0.1"}
    at = app_test("two_point", q)
    _clean(at)
    closed = chart_specs(at)
    assert len(closed) == 4 and not any("simplex" in str(f["layout"].get("title")) for f in closed)
    at.session_state["_two_point_simplex_open"] = True  # the student opens the panel
    at.run()
    _clean(at)
    specs = chart_specs(at)
    assert len(specs) == 5
    fig = specs[-1]
    (line,) = [tr for tr in fig["data"] if tr.get("mode") == "lines"]
    (marks,) = [tr for tr in fig["data"] if tr.get("mode") == "markers"]
    x, y = decode(line["x"]), decode(line["y"])
    np.testing.assert_allclose(y, tp.simplex_rho(2.5, 6, 0.3, x), atol=1e-12)
    assert x[-1] == pytest.approx(4.0)
    xs, ys = decode(marks["x"]), decode(marks["y"])
    traj = simulate_reference(tp.simplex_points(6, 0.3), 2.5, 0.1, 40)
    off = ~np.eye(6, dtype=bool)
    ref = np.array([(Z @ Z.T)[off].mean() for Z in traj])
    layers = np.rint(xs / 0.1).astype(int)
    np.testing.assert_allclose(ys, ref[layers], atol=1e-10)
    assert ys[0] == pytest.approx(0.3, abs=1e-12)


def test_the_simplex_sliders_are_in_the_simplex_section_open_or_closed():
    """n and ρ₀ drive only the simplex section: their sliders are inside it (closed too, so a link's
    values are kept), not in the sidebar, which says where they are; a link still sets them."""
    from ui.kit.i18n import Text

    at = app_test("two_point", {"lang": "zh", "n_simplex": "11", "rho0": "0.45"})
    _clean(at)
    side = [s.key for s in at.sidebar.slider]
    assert "n_simplex" not in side and "rho0" not in side and "beta" in side
    (box,) = [e for e in at.expander if e.label == Text("two_point", "zh")("simplex.title")]
    assert [s.key for s in box.slider] == ["n_simplex", "rho0"]
    assert at.slider(key="n_simplex").value == 11 and at.slider(key="rho0").value == pytest.approx(0.45)
    assert any(c.value == Text("two_point", "zh")("ui.controls_placed") for c in at.sidebar.caption)
    at.run()  # a rerun with the section still closed keeps them
    assert at.slider(key="n_simplex").value == 11
    assert at.query_params["n_simplex"] in ("11", ["11"])


@pytest.mark.parametrize("beta,dt,usa_below", [(1.0, 0.1, None), (3.0, 0.1, 0.75), (10.0, 0.01, 0.1)])
def test_usa_is_first_order_only_once_dt_e_beta_is_small(beta, dt, usa_below):
    """The discrete section: SA's local slopes are near 1 over the slider ranges; USA's reach 1
    only once Δe^β ≪ 1 (0.17 … 0.71 at β = 3, Δ = 0.1; below 0.1 at β = 10, Δ = 0.01)."""
    from pages.two_point.views import two_point_data

    d = two_point_data(beta, 1.0, 5.0, dt)
    assert np.all(d["slopes"]["SA"] > 0.8)
    if usa_below is None:
        assert np.all(d["slopes"]["USA"] > 0.9) and d["dte"] < 0.3
    else:
        assert np.all(d["slopes"]["USA"] < usa_below) and d["dte"] > 1.0


@pytest.mark.parametrize(
    "beta,theta0,horizon,dt,usa_gap",
    [
        (5.0, 0.2, 20.0, 0.05, 0.0619),  # shown before 0.0010 (the 150 recorded layers only)
        (8.0, 0.3, 10.0, 0.02, 0.1877),  # shown 3.6e-5
    ],
)
def test_largest_gap_is_over_every_layer_not_the_drawn_markers(beta, theta0, horizon, dt, usa_gap):
    """The metrics "largest |layer map − ODE|" and the local slopes against the hand-reduced map
    at every layer (tests/test_sim_two_point._pair_map_error), at corners where the markers are
    every 3rd layer or sparser and the USA error peaks in the first few layers."""
    from pages.two_point.views import two_point_data
    from tests.test_sim_two_point import _pair_map_error

    d = two_point_data(beta, theta0, horizon, dt)
    for flow in ("SA", "USA"):
        ref = [_pair_map_error(beta, theta0, horizon, h, flow) for h in d["dts"]]
        assert d[flow]["gap"] == pytest.approx(ref[0], rel=1e-6)
        slopes = np.diff(np.log(ref)) / np.diff(np.log(d["dts"]))
        np.testing.assert_allclose(d["slopes"][flow], slopes, atol=1e-4)
    assert d["USA"]["gap"] == pytest.approx(usa_gap, abs=1e-4)


def test_beta_at_its_hard_limit_draws_the_page():
    """β = 50 (an instructor may open β up to 50): the re-timed USA clock reached 1.3e22 and the
    page stopped with 'taus must lie in [0, 1e+06]'. Now the re-timed curve has its 40 points
    inside the SA window and still lies on the SA curve."""
    from pages.two_point.views import two_point_data

    d = two_point_data(50.0, 1.0, 5.0, 0.1)
    assert d["retimed"][0].size == 40 and d["retimed"][0][-1] <= d["tau_end"]
    assert d["retime_gap"] < 1e-9
    assert d["SA"]["gap"] == 0.0  # e^{-70}: the SA pair does not move in float64
    # the page itself at β = 50: tests/test_sweep.py (the instructor's hard limits)
