"""The rotation page plots exactly what sim.rotation computes, for several parameter sets."""

import math

import numpy as np
import pytest

from sim import rotation as ro
from tests.conftest import app_test, chart_specs, decode
from ui.kit.figures import thin
from ui.kit.i18n import Text

SETS = [
    dict(angle=30.0, kappa=4.0, noise_ratio=0.1, dt=0.01, T=500.0, blend=0.5, seed=0, lang="en"),
    dict(angle=60.0, kappa=2.5, noise_ratio=0.3, dt=0.02, T=300.0, blend=0.0, seed=7, lang="zh"),
    dict(angle=80.0, kappa=9.0, noise_ratio=0.0, dt=0.004, T=250.0, blend=1.0, seed=3, lang="en"),
]


def HD(angle, kappa, noise_ratio):
    """The page's model, written out independently: H = diag(1, κ), D = Q diag(1, r) Qᵀ, Q a turn by angle°."""
    a = math.radians(angle)
    Q = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.diag([1.0, kappa]), Q @ np.diag([1.0, noise_ratio]) @ Q.T


def _traces(spec):
    return {tr.get("name"): tr for tr in spec["data"]}


def _xy(tr):
    return decode(tr["x"]), decode(tr["y"])


@pytest.fixture(scope="module", params=range(len(SETS)))
def page(request):
    p = SETS[request.param]
    at = app_test("rotation", {k: str(v) for k, v in p.items()})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return p, at, Text("rotation", p["lang"])


def test_cloud_ellipse_and_current(page):
    p, at, t = page
    H, D = HD(p["angle"], p["kappa"], p["noise_ratio"])
    S = ro.stationary_covariance(H, D)
    fig = _traces(chart_specs(at)[0])
    ex, ey = _xy(fig[t("fig.ellipse")])
    E = np.column_stack([ex, ey])
    np.testing.assert_allclose(np.einsum("ni,ij,nj->n", E, np.linalg.inv(S), E), 4.0, rtol=1e-10)
    steps = int(round(p["T"] / p["dt"]))
    path = ro.simulate_ou(H, D, p["dt"], steps, p["seed"])
    cx, cy = _xy(fig[t("fig.cloud")])
    np.testing.assert_allclose(np.column_stack([cx, cy]), path[thin(steps + 1, 1500)], rtol=1e-12, atol=1e-14)
    ax, ay = _xy(fig[t("fig.current")])
    seg = np.column_stack([ax, ay]).reshape(-1, 7, 2)  # start, tip, gap, head, tip, head, gap
    start, tip = seg[:, 0], seg[:, 1]
    J = ro.current_field(H, D, start)
    V = tip - start
    assert np.abs(V[:, 0] * J[:, 1] - V[:, 1] * J[:, 0]).max() <= 1e-9 * np.abs(V).max() * np.abs(J).max()
    assert np.all(np.einsum("ni,ni->n", V, J) >= -1e-15)  # same direction, not opposite


def test_area_curves_are_the_simulated_areas_and_the_exact_slope(page):
    p, at, t = page
    fig = _traces(chart_specs(at)[1])
    steps = int(round(p["T"] / p["dt"]))
    for (ex_key, sim_key), angle in (
        (("fig.area_exact", "fig.area_sim"), p["angle"]),
        (("fig.area0_exact", "fig.area0_sim"), 0.0),
    ):
        H, D = HD(angle, p["kappa"], p["noise_ratio"])
        path = ro.simulate_ou(H, D, p["dt"], steps, p["seed"])
        area = np.concatenate([[0.0], np.cumsum(0.5 * (path[:-1, 0] * path[1:, 1] - path[:-1, 1] * path[1:, 0]))])
        x, y = _xy(fig[t(sim_key)])
        k = np.rint(x / p["dt"]).astype(int)
        np.testing.assert_allclose(y, area[k], rtol=1e-10, atol=1e-12)
        xe, ye = _xy(fig[t(ex_key)])
        np.testing.assert_allclose(ye, ro.area_rate(H, D) * xe, rtol=1e-12, atol=1e-15)
    # the metrics show the exact rate and the path's estimate
    H, D = HD(p["angle"], p["kappa"], p["noise_ratio"])
    shown = {m.label: m.value for m in at.metric}
    assert shown[t("metrics.rate_exact")] == f"{ro.area_rate(H, D):.4f}"
    assert shown[t("metrics.rate_scheme")] == f"{ro.em_area_rate(H, D, p['dt']):.4f}"
    r, se = ro.area_mc(H, D, p["T"], p["dt"], p["seed"])
    assert shown[t("metrics.rate_mc")] == f"{r:.4f} ± {se:.4f}"
    assert abs(r - ro.em_area_rate(H, D, p["dt"])) < 4 * se


def test_rate_against_angle(page):
    p, at, t = page
    fig = _traces(chart_specs(at)[2])
    x, y = _xy(fig[t("fig.rate_exact")])
    want = [ro.area_rate(*HD(a, p["kappa"], p["noise_ratio"])) for a in x]
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-15)
    closed = (1 - p["kappa"]) * (1 - p["noise_ratio"]) * np.sin(2 * np.radians(x)) / (2 * (1 + p["kappa"]))
    np.testing.assert_allclose(y, closed, atol=1e-13)
    tr = fig[t("fig.rate_mc")]
    xm, ym = _xy(tr)
    err = decode(tr["error_y"]["array"])
    for i, a in enumerate(xm):
        r, se = ro.area_mc(*HD(a, p["kappa"], p["noise_ratio"]), 1000.0, 0.005, p["seed"] + 1 + i)
        assert ym[i] == pytest.approx(r, rel=1e-12, abs=1e-15) and err[i] == pytest.approx(2 * se, rel=1e-12)


def test_ffn_curl_map(page):
    p, at, t = page
    fig = _traces(chart_specs(at)[3])
    hm = fig[t("fig.curl")]
    g, z = decode(hm["x"]), decode(hm["z"])
    rng = np.random.default_rng(p["seed"])
    W_in = rng.standard_normal((16, 2)) / math.sqrt(2.0)
    W_out = (1 - p["blend"]) * W_in.T + p["blend"] * rng.standard_normal((2, 16)) / math.sqrt(2.0)
    X = np.array(np.meshgrid(g, g, indexing="xy")).reshape(2, -1).T
    want = ro.ffn_curl(W_in, W_out, X).reshape(g.size, g.size)
    np.testing.assert_allclose(z, want, rtol=1e-12, atol=1e-14)
    if p["blend"] == 0.0:
        assert np.all(z == 0.0)
    else:
        assert np.abs(z).max() > 0.05


def test_detailed_balance_draws_no_current_arrows():
    """At φ = 0 the exact current is 0; rounding-level values must not be blown up into arrows."""
    p = dict(angle=0.0, kappa=4.0, noise_ratio=0.1, dt=0.02, T=250.0, blend=0.5, seed=1, lang="en")
    at = app_test("rotation", {k: str(v) for k, v in p.items()})
    assert not at.exception
    t = Text("rotation", "en")
    fig = _traces(chart_specs(at)[0])
    assert t("fig.current") not in fig
    ax, ay = _xy(fig[t("fig.current_zero")])
    seg = np.column_stack([ax, ay]).reshape(-1, 7, 2)
    assert np.all(seg[:, 1] == seg[:, 0])  # zero-length arrows
    shown = {m.label: m.value for m in at.metric}
    assert shown[t("metrics.rate_exact")] in ("0.0000", "-0.0000")
