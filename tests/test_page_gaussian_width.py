"""What the gaussian_width page draws is what sim/ computes: solid curves are the closed forms,
simulation markers are the sim functions (several parameter values)."""

import numpy as np
import pytest

from sim import gaussian_width as gw
from tests.conftest import app_test, chart_specs, decode


def _trace(fig, startswith):
    hits = [tr for tr in fig["data"] if str(tr.get("name", "")).startswith(startswith)]
    assert hits, f"no trace named {startswith!r}: {[tr.get('name') for tr in fig['data']]}"
    return hits


@pytest.mark.parametrize(
    "query", [{"family": "subspace", "D": "64", "k": "4"}, {"family": "subspace", "D": "300", "k": "37", "seed": "5"}]
)
def test_gaussian_width_subspace_curve_and_markers(query):
    at = app_test("gaussian_width", query)
    assert not at.exception
    fig = chart_specs(at)[0]
    D = int(query["D"])
    exact = _trace(fig, "exact")[0]
    k, w = decode(exact["x"]), decode(exact["y"])
    np.testing.assert_allclose(w, [gw.exact("subspace", D=D, k=int(kk)) for kk in k], rtol=1e-12)
    lo, hi = zip(*(gw.bound("subspace", D=D, k=int(kk)) for kk in k))
    assert np.all(np.array(lo) <= w + 1e-12) and np.all(w <= np.array(hi) + 1e-12)
    mc = _trace(fig, "Monte Carlo")[0]
    x, y = decode(mc["x"]), decode(mc["y"])
    err = decode(mc["error_y"]["array"])  # ± 2 s.e.
    ref = np.array([gw.exact("subspace", D=D, k=int(kk)) for kk in x])
    assert np.all(np.abs(y - ref) <= 2.5 * err), (y - ref) / err  # within 5 s.e.


@pytest.mark.parametrize(
    "query",
    [
        {"family": "directions", "D": "16", "M": "4096", "seed": "3", "samples": "400"},
        {"family": "directions", "D": "2", "M": "1000", "seed": "1", "samples": "600"},
    ],
)
def test_gaussian_width_more_directions_than_dimensions(query):
    """M > D on the page: M random unit directions (fixed by the seed), Monte Carlo from
    sim.gaussian_width with layout="random", the bounds for any M directions, the exact value only
    in D <= 2 (from the gaps between the directions), and the tail without an exact law."""
    import re

    from ui.kit.i18n import Text

    at = app_test("gaussian_width", query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    D, M, seed = int(query["D"]), int(query["M"]), int(query["seed"])
    t = Text("gaussian_width", "en")
    assert any(t("notes.M_random", M=M, D=D) == i.value for i in at.info)
    fig = chart_specs(at)[0]
    star = _trace(fig, "your M")[0]
    n = int(re.search(r"\((\d+) draws\)", star["name"]).group(1))
    assert 200 <= n <= min(int(query["samples"]), gw.MAX_FLOPS // (D * M))
    v = gw.sup_samples("directions", n, seed, D=D, M=M, layout="random")
    np.testing.assert_allclose(decode(star["y"]), [v.mean()], rtol=1e-12)
    metrics = {m.label: m.value for m in at.metric}
    lo, hi = gw.bound("directions", D=D, M=M, layout="random")
    assert metrics[t("metrics.upper")] == f"{hi:.4f}" and metrics[t("metrics.lower")] == f"{lo:.4f}"
    assert hi == pytest.approx(np.sqrt(2 * np.log(2 * M)))
    if D <= 2:
        w = gw.exact("directions", vectors=gw.random_directions(M, D, seed))
        assert metrics[t("metrics.exact")] == f"{w:.4f}"
        assert abs(v.mean() - w) <= 5 * v.std(ddof=1) / np.sqrt(n)
    else:
        assert metrics[t("metrics.exact")] == t("metrics.mc_only")
    assert v.mean() <= hi
    # the sweep runs on beyond M = D with Monte Carlo points only, under the bound
    mc = _trace(fig, "Monte Carlo")[0]
    x, y = decode(mc["x"]), decode(mc["y"])
    assert x.max() == M and np.all(y[x > D] <= np.sqrt(2 * np.log(2 * x[x > D])))
    # the tail: union bound and empirical tail of the same draws (no exact law for a random set)
    tail = next(
        f for f in chart_specs(at) if f["layout"]["title"]["text"].startswith(t("fig.tail_title", M=M, rho="0")[:20])
    )
    names = [tr.get("name") for tr in tail["data"]]
    assert t("fig.tail_exact") not in names
    b = _trace(tail, t("fig.tail_bound", M=M))[0]
    np.testing.assert_allclose(decode(b["y"]), gw.tail_bound(decode(b["x"]), M), rtol=1e-12)
    emp = _trace(tail, t("fig.tail_mc", n=n).split("(")[0])[0]
    np.testing.assert_allclose(decode(emp["y"]), gw.empirical_tail(v, decode(emp["x"])), rtol=1e-12)
