"""The measures page plots what sim.measures computes, for the parameters on the page (§8)."""

import math

import numpy as np
import pytest

from sim import measures as ms
from tests.conftest import app_test, chart_specs, decode
from ui.kit.figures import thin
from ui.kit.i18n import Text
from ui.kit.compute import sub_seed
from ui.kit.numbers import fmt
from pages.measures import views as V

SETS = [
    {"n": 32, "H": 256, "beta": 1.0, "depth": 4.0, "dt": 0.1, "seed": 0},  # the defaults
    {"n": 16, "H": 16, "beta": 2.0, "depth": 1.0, "dt": 0.2, "seed": 3},
]


def _trace(spec, name):
    for tr in spec["data"]:
        if tr.get("name") == name:
            return decode(tr.get("x")), decode(tr.get("y")), tr
    raise KeyError(f"no trace {name!r} in {[t.get('name') for t in spec['data']]}")


def _by_title(specs, title):
    for s in specs:
        if s["layout"]["title"]["text"] == title:
            return s
    raise KeyError(title)


@pytest.fixture(scope="module", params=range(len(SETS)))
def page(request):
    p = SETS[request.param]
    at = app_test("measures", {"lang": "en", **{k: str(v) for k, v in p.items()}})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return p, at


def test_w1_over_depth_and_its_bound(page):
    p, at = page
    t = Text("measures", "en")
    spec = _by_title(chart_specs(at), t("fig.w1_title"))
    r = ms.stability(p["n"], p["beta"], p["depth"], p["dt"], p["seed"], n_ref=V.N_REF, max_records=101)
    k = thin(r["t"].size, 60)
    x, y, _ = _trace(spec, t("fig.w1_sim"))
    np.testing.assert_allclose(x, r["t"][k], rtol=1e-12)
    np.testing.assert_allclose(y, r["w1"][k], rtol=1e-12)
    # the bound line: min(e^{Cτ} W₁(0), π) with C from its formula
    C = ((1 + p["beta"]) + (1 + 2 * p["beta"]) * math.exp(2 * p["beta"])) / (1 - p["dt"])
    bx, by, _ = _trace(spec, t("fig.bound"))
    want = np.minimum(np.exp(np.minimum(C * bx + math.log(r["w1"][0]), 2.0)), math.pi)
    np.testing.assert_allclose(by, want, rtol=1e-9)
    assert np.all(r["w1"] <= r["bound"] * (1 + 1e-12))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[t("metrics.w1_start")] == fmt(r["w1"][0], 4)
    assert metrics[t("metrics.C")] == f"{C:.4g}"
    assert metrics[t("metrics.tau_star")] == f"{math.log(math.pi / r['w1'][0]) / C:.3g}"


def test_tokens_and_reference_density(page):
    p, at = page
    t = Text("measures", "en")
    spec = _by_title(chart_specs(at), t("fig.tokens_title"))
    r = ms.stability(p["n"], p["beta"], p["depth"], p["dt"], p["seed"], n_ref=V.N_REF, max_records=101)
    heat = next(tr for tr in spec["data"] if tr["type"] == "heatmap")
    z = decode(heat["z"])
    dtheta = 2 * math.pi / V.BINS
    np.testing.assert_allclose(z.sum(axis=0) * dtheta, 1.0, rtol=1e-12)  # a probability density per layer
    x, y, _ = _trace(spec, t("fig.tokens", n=p["n"]))
    # first path = first drawn token: its angles over depth, wrapped to [−π/2, 3π/2)
    first = y[: np.flatnonzero(np.isnan(y))[0]]
    want = np.mod(r["theta"][:, 0] + math.pi / 2, 2 * math.pi) - math.pi / 2
    if first.size == want.size:
        np.testing.assert_allclose(first, want, atol=1e-12)
    else:  # the path wrapped around: compare the part before the first wrap
        np.testing.assert_allclose(first, want[: first.size], atol=1e-12)


def test_sampling_plot(page):
    p, at = page
    t = Text("measures", "en")
    spec = _by_title(chart_specs(at), t("fig.sampling_title"))
    x, y, tr = _trace(spec, t("fig.sampling_sim"))
    np.testing.assert_array_equal(x, V.SAMPLE_NS)
    for i in (0, 3, 6):
        mean, se = ms.sampling_error(int(x[i]), V.SAMPLE_TRIALS, sub_seed(p["seed"], i))
        assert y[i] == pytest.approx(mean, rel=1e-12)
        assert decode(tr["error_y"]["array"])[i] == pytest.approx(V.SIGMA_BAR * se, rel=1e-12)
    fx, fy, _ = _trace(spec, t("fig.fixed_shift"))
    np.testing.assert_allclose(fy, [ms.fixed_shift_mean(int(k)) for k in fx], rtol=1e-12)
    ex, ey, _ = _trace(spec, t("fig.equispaced"))
    np.testing.assert_allclose(ey, math.pi / (2 * ex), rtol=1e-12)
    assert np.all(y <= np.interp(x, fx, fy) + 3 * decode(tr["error_y"]["array"]))


def test_heads_plot(page):
    p, at = page
    t = Text("measures", "en")
    spec = _by_title(chart_specs(at), t("fig.heads_title"))
    x, y, tr = _trace(spec, t("fig.head_sim"))
    np.testing.assert_array_equal(x, V.head_grid(p["H"]))
    assert x[-1] == p["H"]
    for i in (0, 2):
        mean, _ = ms.head_average_error(int(x[i]), V.HEAD_TRIALS, p["seed"], n=V.HEAD_N, d=V.HEAD_D, beta=p["beta"])
        assert y[i] == pytest.approx(mean, rel=1e-12)
    th = ms.head_error_theory(V.HEAD_N, V.HEAD_D, p["beta"], p["seed"])
    bx, by, _ = _trace(spec, t("fig.head_bound"))
    np.testing.assert_allclose(by, th["bound"] / np.sqrt(bx), rtol=1e-12)
    ax, ay, _ = _trace(spec, t("fig.head_asymptote"))
    np.testing.assert_allclose(ay, th["asymptote"] / np.sqrt(ax), rtol=1e-12)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[t("metrics.head_err", H=p["H"])] == fmt(y[-1], 3)
