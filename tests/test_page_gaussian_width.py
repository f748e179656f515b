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


@pytest.mark.parametrize("query", [{"family": "subspace", "D": "64", "k": "4"},
                                   {"family": "subspace", "D": "300", "k": "37", "seed": "5"}])
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
