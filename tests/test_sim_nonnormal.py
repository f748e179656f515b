"""Tests for sim.nonnormal: closed forms vs scipy.linalg.expm, peak vs dense search,
pseudospectrum kernel vs NumPy SVD, Jacobian products vs direct products, Euler bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.optimize import minimize_scalar

from sim import nonnormal as nn

M_VALUES = [-7.0, -2.5, -1.0, 0.0, 0.5, 2.0, 2.01, 3.0, 6.0, 25.0]
S_GRID = np.array([0.0, 1e-3, 0.1, 0.5, 1.0, 1.7, 3.0, 8.0, 20.0])


def _expm_stack(A, s):
    return np.array([expm(t * A) for t in s])


# ---------------------------------------------------------------------------
# the Jordan-type operator
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("M", M_VALUES)
@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.3, 2.0])
def test_flow_matches_expm(M, eps):
    A = nn.matrix(M, eps)
    np.testing.assert_allclose(A, [[-1.0, M], [0.0, -1.0 - eps]])
    E = nn.flow(M, S_GRID, eps)
    np.testing.assert_allclose(E, _expm_stack(A, S_GRID), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("M", M_VALUES)
def test_response_matches_expm(M):
    A = nn.matrix(M)
    rng = np.random.default_rng(7)
    for x0 in ([1.0, 0.0], [0.0, 1.0], rng.standard_normal(2)):
        x = nn.response(M, S_GRID, x0)
        assert x.shape == (S_GRID.size, 2)
        np.testing.assert_allclose(x, _expm_stack(A, S_GRID) @ np.asarray(x0), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("M", M_VALUES)
def test_response_from_e2_at_s1(M):
    x = nn.response(M, [1.0], [0.0, 1.0])[0]
    r = np.linalg.norm(x)
    assert r == pytest.approx(math.exp(-1.0) * math.sqrt(1.0 + M * M), rel=1e-14)
    assert r >= abs(M) / math.e
    # and along the whole curve: e^{-s} sqrt(1 + s^2 M^2)
    s = np.linspace(0.0, 5.0, 41)
    np.testing.assert_allclose(
        np.linalg.norm(nn.response(M, s, [0.0, 1.0]), axis=1), np.exp(-s) * np.sqrt(1.0 + (s * M) ** 2), rtol=1e-13
    )


def test_response_scalar_s():
    assert nn.response(3.0, 0.5, [1.0, 2.0]).shape == (1, 2)


@pytest.mark.parametrize("M", M_VALUES)
def test_operator_norm_matches_expm_and_closed_form(M):
    A = nn.matrix(M)
    got = nn.operator_norm(M, S_GRID)
    ref = np.array([np.linalg.norm(E, 2) for E in _expm_stack(A, S_GRID)])
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    h = S_GRID * abs(M) / 2.0
    np.testing.assert_allclose(got, np.exp(-S_GRID) * (h + np.sqrt(1.0 + h * h)), rtol=1e-13)
    np.testing.assert_allclose(nn.flow_norm(M, S_GRID), got, rtol=1e-13)
    # depends on |M| only
    np.testing.assert_allclose(nn.operator_norm(-M, S_GRID), got, rtol=0, atol=0)


def test_operator_norm_stable_for_large_s():
    s = np.array([50.0, 300.0, 700.0, 740.0, 2000.0, 1e4])
    for M in (1.0, 40.0, 1e6):
        v = nn.operator_norm(M, s)
        assert np.all(np.isfinite(v)) and np.all(v >= 0.0)
        h = s * M / 2.0
        log_exact = -s + np.log(h + np.sqrt(1.0 + h * h))
        ok = log_exact > -700.0  # representable without underflow
        np.testing.assert_allclose(np.log(v[ok]), log_exact[ok], rtol=1e-13)
        assert np.all(v[~ok] < 1e-300)
        assert np.all(np.diff(v) <= 0.0)


@pytest.mark.parametrize("M", [-9.0, -3.0, -2.0, 0.0, 1.0, 1.99, 2.0, 2.05, 2.5, 3.0, 4.0, 10.0, 40.0])
def test_peak_against_dense_numerical_maximisation(M):
    s_star, value = nn.peak(M)
    # closed form claim: s* = sqrt(1 - 4/M^2) for |M| > 2, else no growth
    if abs(M) > 2.0:
        assert s_star == pytest.approx(math.sqrt(1.0 - 4.0 / M**2), rel=1e-12)
    else:
        assert (s_star, value) == (0.0, 1.0)
    # dense search on the closed form and on expm
    s = np.linspace(0.0, 4.0, 400_001)
    f = nn.operator_norm(M, s)
    i = int(np.argmax(f))
    assert abs(s[i] - s_star) <= 2e-5
    assert value == pytest.approx(f[i], rel=1e-9)
    assert np.all(f <= value * (1.0 + 1e-14))
    A = nn.matrix(M)
    coarse = np.linspace(0.0, 4.0, 81)
    g = np.array([np.linalg.norm(expm(t * A), 2) for t in coarse])
    assert np.max(g) <= value * (1.0 + 1e-12)
    # an independent optimiser on the expm-based norm
    res = minimize_scalar(
        lambda t: -np.linalg.norm(expm(t * A), 2), bounds=(0.0, 4.0), method="bounded", options={"xatol": 1e-10}
    )
    assert -res.fun == pytest.approx(value, rel=1e-9)
    if abs(M) > 2.05:
        assert res.x == pytest.approx(s_star, abs=1e-4)


def test_peak_is_before_s1_and_tends_to_M_over_e():
    for M in (2.5, 5.0, 50.0, 5000.0):
        s_star, value = nn.peak(M)
        assert 0.0 < s_star < 1.0
        assert value >= nn.operator_norm(M, 1.0)[0] >= abs(M) / (2 * math.e)
    s_star, value = nn.peak(1e6)
    assert value / (1e6 / math.e) == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("M,eps", [(3.0, 0.0), (-5.0, 0.5), (0.0, 1.0), (8.0, 1e-3)])
def test_circle_image_axes_are_singular_values(M, eps):
    s = np.array([0.0, 0.4, 1.0, 2.5])
    pts = nn.circle_image(M, s, n_points=20_001, eps=eps)
    assert pts.shape == (4, 20_001, 2)
    np.testing.assert_allclose(pts[:, 0], pts[:, -1], atol=1e-12)  # closed curve
    radius = np.linalg.norm(pts, axis=2)
    smax = nn.flow_norm(M, s, eps)
    smin = np.exp(-(2.0 + eps) * s) / smax  # |det| / sigma_max
    # sampled extremes can only fall inside [smin, smax]; sampling error ~ (h/2)^2 (smax/smin)^2
    h2 = (np.pi / 20_000) ** 2
    assert np.all(radius.max(axis=1) <= smax * (1 + 1e-13))
    assert np.all(radius.max(axis=1) >= smax * (1 - h2))
    assert np.all(radius.min(axis=1) >= smin * (1 - 1e-12))
    assert np.all(radius.min(axis=1) <= smin * (1 + h2 * (smax / smin) ** 2))


# ---------------------------------------------------------------------------
# diagonalisable variant: kappa(V)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("M,eps", [(3.0, 0.1), (-3.0, 0.1), (10.0, 1.0), (0.5, 2.0), (25.0, 1e-3)])
def test_kappa_matches_eigenvector_matrix_and_bounds_norm(M, eps):
    A = nn.matrix(M, eps)
    _, V = np.linalg.eig(A)  # unit-norm columns
    assert nn.kappa(M, eps) == pytest.approx(np.linalg.cond(V), rel=1e-8)
    s = np.linspace(0.0, 12.0, 2001)
    assert np.all(nn.flow_norm(M, s, eps) <= nn.kappa(M, eps) * np.exp(-s) * (1 + 1e-12))


def test_kappa_degenerates_as_eps_to_zero():
    M = 4.0
    eps = np.array([1.0, 1e-1, 1e-2, 1e-4, 1e-6])
    k = np.array([nn.kappa(M, e) for e in eps])
    assert np.all(np.diff(k) > 0)
    assert k[-1] * eps[-1] == pytest.approx(2 * M, rel=1e-6)
    assert nn.kappa(M, 0.0) == math.inf
    assert nn.kappa(0.0, 0.0) == 1.0 and nn.kappa(0.0, 0.7) == 1.0
    # while the norm itself stays bounded and tends to the Jordan case
    s = np.linspace(0.0, 10.0, 201)
    np.testing.assert_allclose(nn.flow_norm(M, s, 1e-9), nn.operator_norm(M, s), rtol=1e-7)


# ---------------------------------------------------------------------------
# pseudospectra
# ---------------------------------------------------------------------------


def _random_matrices():
    rng = np.random.default_rng(3)
    return [
        nn.matrix(3.0),
        nn.matrix(-12.0, 0.4),
        3.0 * rng.standard_normal((2, 2)),
        rng.standard_normal((2, 2)),
        np.diag([-1.0, 0.5]),
        np.zeros((2, 2)),
    ]


@pytest.mark.parametrize("A", _random_matrices())
def test_pseudospectrum_kernel_matches_svd(A):
    re = np.linspace(-5.0, 3.0, 161)
    im = np.linspace(-3.5, 3.5, 97)
    got = nn.pseudospectrum(A, re, im)
    ref = nn.pseudospectrum_reference(A, re, im)
    assert got.shape == (97, 161)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("A", _random_matrices())
def test_pseudospectrum_vs_distance_to_spectrum(A):
    re = np.linspace(-4.0, 2.0, 61)
    im = np.linspace(-2.0, 2.0, 41)
    sig = nn.pseudospectrum(A, re, im)
    Z = re[None, :] + 1j * im[:, None]
    lam = np.linalg.eigvals(A)
    dist = np.min(np.abs(Z[..., None] - lam), axis=-1)
    # sigma_min(zI - A) <= dist(z, spectrum), with equality for normal A
    assert np.all(sig <= dist * (1 + 1e-12) + 1e-13)
    if np.allclose(A @ A.T, A.T @ A):
        np.testing.assert_allclose(sig, dist, rtol=1e-12, atol=1e-13)
    # Weyl: sigma_min(zI - A) >= |z| - ||A||
    assert np.all(sig >= np.abs(Z) - np.linalg.norm(A, 2) - 1e-12)


def test_pseudospectrum_zero_at_eigenvalues_and_large_for_nonnormal():
    A = nn.matrix(10.0)
    sig = nn.pseudospectrum(A, [-1.0, -1.0 + 0.5], [0.0])
    assert sig[0, 0] == 0.0
    # zI - A = [[r, -M], [0, r]] at z = -1 + r: sigma_min = r^2 / (M/2 + sqrt(r^2 + M^2/4)),
    # so the resolvent norm ~ M / r^2 = 40, not 1/r = 2 as for a normal matrix
    r = 0.5
    assert sig[0, 1] == pytest.approx(r * r / (5.0 + math.sqrt(r * r + 25.0)), rel=1e-14)
    assert 1.0 / sig[0, 1] > 35.0


@pytest.mark.parametrize(
    "M,eps", [(0.0, 0.0), (1.0, 0.0), (3.0, 0.0), (6.0, 0.0), (20.0, 0.0), (-8.0, 0.3), (5.0, 1.5)]
)
def test_kreiss_lower_bound_below_true_peak(M, eps):
    A = nn.matrix(M, eps)
    R = max(2.5, 1.4 * math.sqrt(abs(M) + 1.0))
    re = np.linspace(-1.0 - R, -1.0 + R, 201)
    im = np.linspace(-R, R, 201)
    sig = nn.pseudospectrum(A, re, im)
    K = nn.kreiss_lower_bound(A, re, im)
    assert K == nn.kreiss_lower_bound(A, re, im, sigma=sig)
    s = np.linspace(0.0, 10.0, 20001)
    true_peak = nn.flow_norm(M, s, eps).max()
    assert 0.0 < K <= true_peak * (1 + 1e-9)
    # on the real axis at z = 1: Re z / sigma_min = (M/2 + sqrt(4 + M^2/4)) / 4 for the Jordan case
    if eps == 0.0:
        expect = (abs(M) / 2 + math.sqrt(4.0 + M * M / 4)) / 4
        assert nn.kreiss_lower_bound(A, [1.0], [0.0]) == pytest.approx(expect, rel=1e-13)
        assert K >= expect * (1 - 1e-2)
    assert nn.kreiss_lower_bound(A, [-3.0, -0.5], [0.0, 1.0]) == 0.0


# ---------------------------------------------------------------------------
# ordered products of layer Jacobians
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("L,d,eta,seed", [(6, 2, 0.5, 0), (9, 4, 0.3, 11), (5, 7, 1.2, 3)])
def test_jacobian_products_match_direct_products(L, d, eta, seed):
    r = nn.jacobian_products(L, d, eta, seed)
    rng = np.random.default_rng(seed)
    J = np.eye(d) + eta / math.sqrt(d) * rng.standard_normal((L, d, d))
    for k in range(1, L + 1):
        fwd = np.eye(d)
        bwd = np.eye(d)
        for ell in range(k):
            fwd = J[ell] @ fwd  # J_{k-1} ... J_0
            bwd = bwd @ J[ell]  # J_0 ... J_{k-1}
        assert r["ordered"][k - 1] == pytest.approx(math.log(np.linalg.norm(fwd, 2)), abs=1e-10)
        assert r["reversed"][k - 1] == pytest.approx(math.log(np.linalg.norm(bwd, 2)), abs=1e-10)
        prod_norms = np.prod([np.linalg.norm(J[e], 2) for e in range(k)])
        assert r["norm_product"][k - 1] == pytest.approx(math.log(prod_norms), abs=1e-10)
        rad = np.prod([np.max(np.abs(np.linalg.eigvals(J[e]))) for e in range(k)])
        assert r["radius_product"][k - 1] == pytest.approx(math.log(rad), abs=1e-10)
    np.testing.assert_array_equal(r["depth"], np.arange(1, L + 1))


def test_jacobian_products_bound_depth_and_determinism():
    r = nn.jacobian_products(2000, 4, 0.3, 5)
    assert np.all(np.isfinite(r["ordered"]))  # renormalisation: no overflow
    assert np.all(r["ordered"] <= r["norm_product"] + 1e-9)
    assert np.all(r["reversed"] <= r["norm_product"] + 1e-9)
    # the bound is loose by orders of magnitude at depth when directions do not align
    assert r["norm_product"][-1] - r["ordered"][-1] > 50.0
    again = nn.jacobian_products(2000, 4, 0.3, 5)
    np.testing.assert_array_equal(r["ordered"], again["ordered"])
    other = nn.jacobian_products(2000, 4, 0.3, 6)
    assert not np.array_equal(r["ordered"], other["ordered"])
    zero = nn.jacobian_products(10, 3, 0.0, 1)
    for key in ("ordered", "reversed", "norm_product", "radius_product"):
        np.testing.assert_allclose(zero[key], 0.0, atol=1e-14)


# ---------------------------------------------------------------------------
# explicit Euler
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "M,eps,delta", [(5.0, 0.0, 0.1), (-3.0, 0.0, 0.7), (5.0, 0.0, 1.5), (2.0, 0.4, 0.25), (8.0, 0.0, 2.5)]
)
def test_euler_flow_iterates_and_exact(M, eps, delta):
    x0 = np.array([0.3, -0.8])
    r = nn.euler_flow(M, delta, 6.0, x0, eps)
    n = int(math.floor(6.0 / delta + 1e-9))
    assert r["s"].shape == (n + 1,) and r["s"][-1] <= 6.0 + 1e-12
    step = np.eye(2) + delta * nn.matrix(M, eps)
    for k in range(n + 1):
        np.testing.assert_allclose(r["euler"][k], np.linalg.matrix_power(step, k) @ x0, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(r["exact"][k], expm(r["s"][k] * nn.matrix(M, eps)) @ x0, rtol=1e-10, atol=1e-14)
    if eps == 0.0 and delta != 1.0:
        k = np.arange(n + 1)
        q = 1.0 - delta
        closed = np.stack([q**k * x0[0] + k * delta * M * q ** (k - 1.0) * x0[1], q**k * x0[1]], 1)
        np.testing.assert_allclose(r["euler"], closed, rtol=1e-9, atol=1e-13)


def test_euler_flow_is_first_order():
    errs = []
    for delta in (0.04, 0.02, 0.01, 0.005):
        r = nn.euler_flow(6.0, delta, 4.0, [0.0, 1.0])
        errs.append(np.max(np.linalg.norm(r["euler"] - r["exact"], axis=1)))
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 1.8) & (ratios < 2.2))


@pytest.mark.parametrize("a", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("ad", [0.05, 0.3, 0.7, 0.95, 0.999])
@pytest.mark.parametrize("H", [0.5, 3.0, 40.0])
def test_euler_scalar_error_bound_holds(a, ad, H):
    delta = ad / a
    r = nn.euler_scalar(a, delta, H, V0=2.5)
    assert r["s"][-1] <= H + 1e-9
    assert r["factor"] == pytest.approx(1.0 - ad)
    bound = a * a * H * delta * 2.5 / (2.0 * (1.0 - ad))
    assert r["bound"] == pytest.approx(bound)
    assert np.all(r["error"] <= bound * (1 + 1e-12))
    # the sharper intermediate |V0| j delta_ (delta_ = -log(1-aΔ) - aΔ)
    j = np.arange(r["s"].size)
    dlt = -math.log1p(-ad) - ad
    assert np.all(r["error"] <= 2.5 * j * dlt * (1 + 1e-12) + 1e-300)
    np.testing.assert_allclose(r["exact"], 2.5 * np.exp(-a * r["s"]), rtol=1e-14)
    np.testing.assert_allclose(r["euler"], 2.5 * (1.0 - ad) ** j, rtol=1e-12)


@pytest.mark.parametrize(
    "ad,regime", [(0.5, "monotone"), (1.0, "zero"), (1.5, "alternating"), (2.0, "neutral"), (2.5, "divergent")]
)
def test_euler_scalar_regimes(ad, regime):
    r = nn.euler_scalar(1.0, ad, 30.0)
    assert r["regime"] == regime == nn.euler_regime(1.0, ad)
    v = r["euler"]
    nonneg = bool(np.all(v >= 0.0))
    assert nonneg == (ad <= 1.0)
    decays = abs(v[-1]) < 1e-3
    assert decays == (ad < 2.0)
    if 1.0 < ad < 2.0:
        assert np.all(np.sign(v[1:]) == (-1.0) ** np.arange(1, v.size))
    if ad >= 1.0:
        assert r["bound"] == math.inf


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: nn.response(float("nan"), [1.0], [0, 1]),
        lambda: nn.response(True, [1.0], [0, 1]),
        lambda: nn.response("3", [1.0], [0, 1]),
        lambda: nn.response(3.0, [-0.1, 1.0], [0, 1]),
        lambda: nn.response(3.0, [np.inf], [0, 1]),
        lambda: nn.response(3.0, [[1.0, 2.0]], [0, 1]),
        lambda: nn.response(3.0, [1.0], [0, 1, 0]),
        lambda: nn.response(3.0, [1.0], [0, np.nan]),
        lambda: nn.response(3.0, np.zeros(2_000_000), [0, 1]),
        lambda: nn.operator_norm(1e7, [1.0]),
        lambda: nn.operator_norm(3.0, [2e4]),
        lambda: nn.peak(np.inf),
        lambda: nn.peak(None),
        lambda: nn.flow(3.0, [1.0], eps=-0.1),
        lambda: nn.kappa(3.0, -1.0),
        lambda: nn.circle_image(3.0, np.linspace(0, 1, 1000), n_points=5000),
        lambda: nn.circle_image(3.0, [1.0], n_points=2),
        lambda: nn.pseudospectrum(np.eye(3), [0.0], [0.0]),
        lambda: nn.pseudospectrum(np.eye(2), [], [0.0]),
        lambda: nn.pseudospectrum(np.eye(2), np.zeros(3000), np.zeros(3000)),
        lambda: nn.pseudospectrum_reference([[1, np.nan], [0, 1]], [0.0], [0.0]),
        lambda: nn.kreiss_lower_bound(np.eye(2), [0.0, 1.0], [0.0], sigma=np.ones((2, 2))),
        lambda: nn.jacobian_products(0),
        lambda: nn.jacobian_products(10, d=0),
        lambda: nn.jacobian_products(5000, d=64),
        lambda: nn.jacobian_products(10, eta=-1.0),
        lambda: nn.jacobian_products(10, seed=-1),
        lambda: nn.jacobian_products(2.5),
        lambda: nn.euler_flow(3.0, 0.0, 1.0, [0, 1]),
        lambda: nn.euler_flow(3.0, 1e-6, 1e4, [0, 1]),
        lambda: nn.euler_scalar(0.0, 0.1, 1.0),
        lambda: nn.euler_scalar(1.0, 0.1, -1.0),
        lambda: nn.euler_regime(-1.0, 0.1),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------------------
# every number finite and right, or a ValueError that says why
# ---------------------------------------------------------------------------


def test_euler_flow_overflow_raises_not_nan():
    """euler_flow(1e6, 10, 1e4, [0, 1]) returned NaNs (9^k overflows)."""
    with pytest.raises(ValueError, match=r"overflow.*horizon <"):
        nn.euler_flow(1e6, 10, 1e4, [0, 1])
    r = nn.euler_flow(1e6, 10, 100.0, [0, 1])  # 10 steps: finite, and the closed form
    k = np.arange(11)
    np.testing.assert_allclose(r["euler"][:, 1], (-9.0) ** k, rtol=1e-15)
    np.testing.assert_allclose(r["euler"][:, 0], k * 10 * 1e6 * (-9.0) ** (k - 1.0), rtol=1e-12)
    with pytest.raises(ValueError, match="overflow"):
        nn.euler_scalar(100.0, 100.0, 1e4)


def test_euler_flow_long_horizon_is_fast_and_complete():
    """euler_flow(3, 0.01, 1e4, ...) looped 3 s in Python, then failed on 's' (never passed)."""
    import time

    nn.euler_flow(3, 0.01, 1.0, [0, 1])  # compile / load outside the timing
    t0 = time.process_time()
    r = nn.euler_flow(3, 0.01, 1e4, [0.3, 1.0])
    assert time.process_time() - t0 < 2.5  # CPU seconds (not wall: other jobs may share the cores)
    assert r["s"].size == r["euler"].shape[0] == r["exact"].shape[0] == 1_000_001
    assert np.all(np.isfinite(r["euler"])) and np.all(np.isfinite(r["exact"]))
    np.testing.assert_allclose(r["exact"][:501], nn.response(3, r["s"][:501], [0.3, 1.0]), rtol=1e-13)
    step = np.eye(2) + 0.01 * nn.matrix(3)
    np.testing.assert_allclose(r["euler"][300], np.linalg.matrix_power(step, 300) @ [0.3, 1.0], rtol=1e-12)
    with pytest.raises(ValueError, match="max_work"):
        nn.euler_flow(3, 0.001, 1e4, [0, 1])
    assert nn.euler_flow(3, 0.5, 10.0, [0, 1], max_work=20)["s"].size == 21
    with pytest.raises(ValueError, match="max_work"):
        nn.euler_flow(3, 0.5, 10.0, [0, 1], max_work=19)


@pytest.mark.parametrize("z", [1e150, 1e200, 1e300, 1e308])
def test_pseudospectrum_and_kreiss_finite_far_out(z):
    """At |z| ~ 1e308 the kernel returned 0 and kreiss_lower_bound inf; sigma_min(zI - A) ~ |z|."""
    A = nn.matrix(10.0)
    re, im = np.array([-z, 1.0, z]), np.array([0.0, z / 2])
    sig = nn.pseudospectrum(A, re, im)
    np.testing.assert_allclose(sig, nn.pseudospectrum_reference(A, re, im), rtol=1e-12)
    assert sig[0, 2] == pytest.approx(z, rel=1e-12)
    K = nn.kreiss_lower_bound(A, re, im)
    assert np.isfinite(K)
    assert K == pytest.approx(nn.kreiss_lower_bound(A, [1.0], [0.0, z / 2]), rel=1e-12)
    assert K <= nn.peak(10.0)[1]


def test_kreiss_unstable_eigenvalue_on_the_grid_raises():
    with pytest.raises(ValueError, match="eigenvalue"):
        nn.kreiss_lower_bound(np.array([[1.0, 0.0], [0.0, -1.0]]), [1.0, 2.0], [0.0])


def test_work_bounds_can_be_raised_explicitly():
    A = nn.matrix(5.0)
    re, im = np.linspace(-3, 1, 30), np.linspace(-2, 2, 20)
    with pytest.raises(ValueError, match="max_work"):
        nn.pseudospectrum(A, re, im, max_work=599)
    np.testing.assert_array_equal(nn.pseudospectrum(A, re, im, max_work=600), nn.pseudospectrum(A, re, im))
    with pytest.raises(ValueError, match="max_work"):
        nn.pseudospectrum_reference(A, re, im, max_work=599)
    with pytest.raises(ValueError, match="max_work"):
        nn.kreiss_lower_bound(A, re, im, max_work=599)
    with pytest.raises(ValueError, match="max_work"):
        nn.jacobian_products(10, d=4, max_work=639)
    assert nn.jacobian_products(10, d=4, max_work=640)["depth"].size == 10
    with pytest.raises(ValueError, match="max_work"):
        nn.circle_image(5.0, [0.0, 1.0], n_points=11, max_work=21)
    with pytest.raises(ValueError, match="max_work"):
        nn.euler_scalar(1.0, 0.1, 10.0, max_work=99)
    with pytest.raises(ValueError):  # default bounds unchanged
        nn.pseudospectrum(A, np.zeros(2001), np.zeros(2000))


@pytest.mark.parametrize("M", [6.0, -3.0, 0.0, 50.0])
def test_flow_norm_grid_is_flow_norm_per_eps(M):
    s = np.linspace(0.0, 12.0, 300)
    eps = np.concatenate([[0.0], np.logspace(-4, 1, 17)])
    g = nn.flow_norm_grid(M, s, eps)
    assert g.shape == (eps.size, s.size)
    np.testing.assert_array_equal(g, [nn.flow_norm(M, s, e) for e in eps])
    with pytest.raises(ValueError, match="eps"):
        nn.flow_norm_grid(M, s, [-1.0])
    with pytest.raises(ValueError, match="eps"):
        nn.flow_norm_grid(M, s, [[0.1]])
    with pytest.raises(ValueError, match="len"):
        nn.flow_norm_grid(M, np.zeros(10_000), np.ones(200))
