"""Tests of sim.depth_sum: closed forms, Monte Carlo within confidence bounds,
Numba kernel against the NumPy reference on the same draws, bad input."""

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from sim import depth_sum as ds
from sim.depth_sum import residual as ds_residual
from sim.depth_sum import sums as ds_sums
from tests import _reference_depth_sum as ref


def _set_block(monkeypatch, block):
    """Draw in blocks of ``block`` numbers (the modules that read the block size)."""
    for mod in (ds_sums, ds_residual):
        monkeypatch.setattr(mod, "_BLOCK", block)


# two-sided tail probability allowed for every chi-square check (fixed seeds: these
# either pass or fail deterministically; 1e-4 corresponds to ~3.9 standard errors)
P_TAIL = 1e-4
Z_SE = 4.0


def chi2_ok(s2, v, n, p=P_TAIL):
    """(n-1) s2 / v ~ chi2_{n-1} for the sample variance s2 of n normals of variance v."""
    q = (n - 1) * s2 / v
    return chi2.ppf(p / 2, n - 1) <= q <= chi2.ppf(1 - p / 2, n - 1)


# --------------------------------------------------------------------------- exact laws
EXACT = [  # (alpha, L, sigma, rho)
    (0.5, 1, 1.0, 0.0),
    (0.5, 10, 1.0, 0.0),
    (0.25, 100, 2.0, 0.0),
    (1.0, 37, 0.3, 0.2),
    (0.7, 8, 1.5, 1.0),
    (0.0, 5, 1.0, -0.25),
    (1.3, 64, 3.0, 0.9),
    (0.5, 50, 1.0, -1 / 49),
]


@pytest.mark.parametrize("alpha,L,sigma,rho", EXACT)
def test_variance_equals_quadratic_form(alpha, L, sigma, rho):
    # Var(L^-a sum xi) = L^-2a 1^T Sigma 1 with Sigma = sigma^2((1-rho) I + rho 11^T)
    Sigma = sigma**2 * ((1 - rho) * np.eye(L) + rho * np.ones((L, L)))
    direct = L ** (-2 * alpha) * np.ones(L) @ Sigma @ np.ones(L)
    assert ds.variance(alpha, L, sigma, rho) == pytest.approx(direct, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 0.8, 1.5])
@pytest.mark.parametrize("L", [1, 7, 256, 10**6])
def test_variance_regimes(alpha, L):
    assert ds.variance(alpha, L, 1.7) == pytest.approx(1.7**2 * L ** (1 - 2 * alpha), rel=1e-12)
    assert ds.variance(alpha, L, 1.7, rho=1.0) == pytest.approx(1.7**2 * L ** (2 - 2 * alpha), rel=1e-12)
    assert ds.mean(alpha, L, -0.4) == pytest.approx(-0.4 * L ** (1 - alpha), rel=1e-12)


def test_variance_log_log_slope():
    Ls = np.array([4, 16, 64, 256, 1024])
    for alpha in (0.2, 0.5, 0.9):
        v = [ds.variance(alpha, L, 1.0) for L in Ls]
        slope = np.polyfit(np.log(Ls), np.log(v), 1)[0]
        assert slope == pytest.approx(1 - 2 * alpha, abs=1e-10)
    assert ds.variance(0.5, 100, 1.0, rho=-1 / 99) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "alpha,L,sigma,rho,mu,c",
    [
        (0.5, 10, 1.0, 0.0, 0.0, 1.0),
        (0.2, 300, 0.5, 0.0, 0.0, 0.7),
        (0.9, 40, 2.0, 0.3, 0.1, 0.2),
        (0.5, 16, 1.0, -0.05, -0.3, 1.5),
        (1.0, 2, 1.0, 1.0, 2.0, 0.1),
    ],
)
def test_prob_within_is_normal_mass(alpha, L, sigma, rho, mu, c):
    m = mu * L ** (1 - alpha)
    s = math.sqrt(ds.variance(alpha, L, sigma, rho))
    expected = norm.cdf(c, m, s) - norm.cdf(-c, m, s)
    assert ds.prob_within(alpha, L, sigma, c, rho, mu) == pytest.approx(expected, abs=1e-13)


def test_prob_within_three_regimes():
    Ls = [1, 10, 100, 1000, 10**5]
    lo = [ds.prob_within(0.25, L, 1.0, 0.5) for L in Ls]
    mid = [ds.prob_within(0.5, L, 1.0, 0.5) for L in Ls]
    hi = [ds.prob_within(0.75, L, 1.0, 0.5) for L in Ls]
    assert np.all(np.diff(lo) < 0) and lo[-1] < 0.05
    assert np.allclose(mid, math.erf(0.5 / math.sqrt(2)), atol=1e-14)
    assert np.all(np.diff(hi) > 0) and hi[-1] > 0.99
    # zero variance at rho = -1/(L-1): mass is 1 if |mean| <= c
    assert ds.prob_within(0.5, 10, 1.0, 0.1, rho=-1 / 9) == 1.0
    assert ds.prob_within(0.5, 10, 1.0, 0.1, rho=-1 / 9, mu=0.1) == 0.0


def test_increment_rms_square_root_scaling():
    L = 400
    for eps in (0.01, 0.1, 0.25, 1.0):
        k = int(eps * L)
        assert ds.increment_rms(0.5, L, 1.3, k) == pytest.approx(1.3 * math.sqrt(eps), rel=1e-12)
    # with a mean and correlation: second moment = variance of the k-term sum + mean^2
    v = ds.variance(0.8, 9, 2.0, 0.4)
    m = 0.5 * 9 * 9 ** (-0.8)
    assert ds.increment_rms(0.8, 9, 2.0, 9, 0.4, 0.5) == pytest.approx(math.sqrt(v + m * m))


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 0.75, 1.0, 2.0])
@pytest.mark.parametrize("L", [1, 3, 50, 1000])
def test_residual_energy_formula(alpha, L):
    assert ds.residual_energy(alpha, L) == pytest.approx((1 + L ** (-2 * alpha)) ** L, rel=1e-12)


def test_residual_energy_limits():
    assert ds.residual_energy(0.5, 10**7) == pytest.approx(math.e, rel=1e-6)
    assert ds.residual_energy(0.75, 10**7) == pytest.approx(1.0, abs=1e-3)
    assert ds.residual_energy(0.25, 10**4) > 1e40
    assert ds.residual_energy(0.0, 10**5) == math.inf


@pytest.mark.parametrize("c,L", [(0.0, 1), (0.5, 1), (1.0, 10), (2.0, 7), (0.3, 1000), (5.0, 3), (1.0, 10**6)])
def test_one_step_formula(c, L):
    f, lin = ds.one_step(c, L)
    assert f == pytest.approx((1 - c / L) ** L, rel=1e-10, abs=1e-15)
    assert lin == 1 - c


def test_one_step_limit_differs_from_linearisation():
    for c in (0.5, 1.0, 2.0):
        f, lin = ds.one_step(c, 10**6)
        assert f == pytest.approx(math.exp(-c), rel=1e-5)
        assert abs(f - lin) > 0.1


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("c,L", [(1.0, 1), (0.7, 12), (2.0, 500)])
def test_sgd_step_from_gradient(alpha, c, L):
    f_exact, lin_exact = ds.one_step(c, L)
    sgd = ds.sgd_step(alpha, c, L, "sgd")
    sign = ds.sgd_step(alpha, c, L, "sign")
    assert sgd["lr"] == pytest.approx(c * L ** (2 * alpha - 1))
    assert sign["lr"] == pytest.approx(c * L ** (alpha - 1))
    for r in (sgd, sign):
        assert r["dw"] == pytest.approx(-c * L ** (alpha - 1), rel=1e-12)
        assert r["multiplier"] == pytest.approx(1 - c / L, rel=1e-12)
        assert r["f_after"] == pytest.approx(f_exact, rel=1e-9)
        assert r["f_linearised"] == pytest.approx(lin_exact, abs=1e-9)
        assert r["dw_max_dev"] < 1e-14


# --------------------------------------------------------------------------- Monte Carlo sums
MC = [  # (alpha, L, sigma, rho, mu, trials, seed)
    (0.5, 64, 1.0, 0.0, 0.0, 20000, 1),
    (0.25, 200, 0.5, 0.0, 0.0, 10000, 2),
    (1.0, 30, 2.0, 0.0, 0.3, 10000, 3),
    (0.5, 40, 1.0, 0.35, 0.0, 20000, 4),
    (0.7, 25, 1.2, 1.0, -0.5, 10000, 5),
    (0.5, 21, 1.0, -0.04, 0.1, 10000, 6),
    (0.0, 3, 1.0, -0.5, 0.0, 10000, 7),
]


@pytest.mark.parametrize("alpha,L,sigma,rho,mu,trials,seed", MC)
def test_sample_mean_and_variance(alpha, L, sigma, rho, mu, trials, seed):
    x = ref.sample(alpha, L, sigma, trials, seed, rho, mu)
    assert x.shape == (trials,)
    v = ds.variance(alpha, L, sigma, rho)
    m = ds.mean(alpha, L, mu)
    if v < 1e-24:  # exact lower end of rho
        np.testing.assert_allclose(x, m, atol=1e-9)
        return
    assert abs(x.mean() - m) < Z_SE * math.sqrt(v / trials)
    assert chi2_ok(np.var(x, ddof=1), v, trials)


def test_sample_zero_variance_at_lower_rho():
    x = ref.sample(0.5, 20, 1.0, 500, 0, rho=-1 / 19, mu=0.2)
    np.testing.assert_allclose(x, 0.2 * 20**0.5, atol=1e-12)


def test_sample_is_normal():
    # Kolmogorov-Smirnov distance of standardised samples against N(0, 1)
    from scipy.stats import kstest

    for rho in (0.0, 0.5, -0.02):
        x = ref.sample(0.3, 50, 1.0, 20000, 11, rho)
        p = kstest(x / math.sqrt(ds.variance(0.3, 50, 1.0, rho)), "norm").pvalue
        assert p > P_TAIL


def test_variance_mc_interval():
    for alpha, L, rho in [(0.5, 64, 0.0), (0.2, 128, 0.0), (0.9, 32, 0.5)]:
        v = ds.variance(alpha, L, 1.0, rho)
        s2, lo, hi = ref.variance_mc(alpha, L, 1.0, 4000, 9, rho, level=1 - P_TAIL)
        assert lo < s2 < hi
        assert lo <= v <= hi


@pytest.mark.parametrize("L,trials", [(1, 7), (5, 300), (64, 4000), (3000, 1500)])
def test_unit_sums_kernel_matches_reference(L, trials):
    # the Numba kernel draws inside its loop exactly what the reference draws as arrays
    # (L = 3000, trials = 1500: several blocks of rows)
    a = ds.unit_sums(L, trials, 31, use_numba=True)
    b = ds.unit_sums(L, trials, 31, use_numba=False)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], rtol=0, atol=1e-13 * L)  # summation order only
    assert chi2_ok(np.var(a[1], ddof=1), L, trials) and chi2_ok(np.var(a[0], ddof=1), 1.0, trials)


@pytest.mark.parametrize(
    "alpha,L,sigma,rho,mu",
    [
        (0.5, 16, 1.0, 0.0, 0.0),
        (0.3, 40, 1.7, 0.45, -0.2),
        (1.0, 9, 0.5, 1.0, 0.3),
        (0.8, 21, 1.0, -0.04, 0.1),
        (0.5, 3000, 2.0, 0.01, 0.05),
    ],
)
def test_sums_from_units_add_the_drawn_pieces(alpha, L, sigma, rho, mu):
    # the exact rescaling equals the sum of the explicitly constructed pieces (same stream)
    trials = 1500 if L > 100 else 400
    direct = np.concatenate([y.sum(axis=1) for y in ref._term_blocks(alpha, L, sigma, trials, 13, rho, mu)])
    x = ref.sample(alpha, L, sigma, trials, 13, rho, mu)
    np.testing.assert_allclose(x, direct, rtol=0, atol=1e-12 * max(1.0, np.abs(direct).max()))
    np.testing.assert_allclose(
        ds.sums_from_units(alpha, L, sigma, *ds.unit_sums(L, trials, 13, use_numba=False), rho, mu),
        direct,
        rtol=0,
        atol=1e-12 * max(1.0, np.abs(direct).max()),
    )


def test_sample_determinism_and_seed():
    a = ref.sample(0.5, 33, 1.0, 100, 42)
    np.testing.assert_array_equal(a, ref.sample(0.5, 33, 1.0, 100, 42))
    assert not np.array_equal(a, ref.sample(0.5, 33, 1.0, 100, 43))


def test_sample_spans_several_blocks():
    # L * trials above the block size: the stream is split into row blocks
    L = 4096
    trials = ds._BLOCK // L + 7
    x = ref.sample(0.5, L, 1.0, trials, 3)
    assert chi2_ok(np.var(x, ddof=1), 1.0, trials) and abs(x.mean()) < Z_SE / math.sqrt(trials)
    np.testing.assert_allclose(ref.partial_sums(0.5, L, 1.0, trials, 3)[:, -1], x, atol=1e-10)


@pytest.mark.parametrize("rho,mu", [(0.0, 0.0), (0.6, 0.0), (0.0, 0.4), (-0.03, 0.0)])
def test_partial_sums(rho, mu):
    L, trials, sigma, alpha = 32, 8000, 1.0, 0.5
    P = ref.partial_sums(alpha, L, sigma, trials, 17, rho, mu)
    assert P.shape == (trials, L + 1)
    assert np.all(P[:, 0] == 0)
    np.testing.assert_allclose(P[:, -1], ref.sample(alpha, L, sigma, trials, 17, rho, mu), atol=1e-12)
    # change over k layers at one fixed position: normal with the exact second moment
    for k, l0 in [(1, 0), (8, 10), (16, 16)]:
        d = P[:, l0 + k] - P[:, l0]
        v = ds._variance(alpha, L, sigma, rho, k)
        m = mu * k * L ** (-alpha)
        assert abs(d.mean() - m) < Z_SE * math.sqrt(v / trials)
        assert chi2_ok(np.var(d, ddof=1), v, trials)
    # pooled RMS over all positions (overlapping windows: a loose relative check)
    for k in (1, 4, 8):
        exact = ds.increment_rms(alpha, L, sigma, k, rho, mu)
        assert ref.increment_rms_mc(P, k) == pytest.approx(exact, rel=0.05)


def test_prob_within_mc():
    for alpha, L, c, rho, mu in [
        (0.5, 16, 1.0, 0.0, 0.0),
        (0.25, 256, 0.5, 0.0, 0.0),
        (0.8, 64, 0.3, 0.2, 0.0),
        (0.5, 9, 1.0, 0.0, 0.3),
    ]:
        p, se = ref.prob_within_mc(alpha, L, 1.0, c, 20000, 8, rho, mu)
        exact = ds.prob_within(alpha, L, 1.0, c, rho, mu)
        assert abs(p - exact) < Z_SE * math.sqrt(exact * (1 - exact) / 20000)
        assert se == pytest.approx(math.sqrt(p * (1 - p) / 20000))


@pytest.mark.parametrize(
    "alpha,L,sigma,rho,mu",
    [
        (0.5, 16, 1.0, 0.0, 0.0),
        (0.5, 24, 1.0, 0.4, 0.5),
        (1.0, 10, 2.0, 1.0, 0.0),
        (0.3, 12, 1.0, -0.05, 0.0),
    ],
)
def test_covariance_decomposition(alpha, L, sigma, rho, mu):
    trials = 6000
    d = ref.covariance_decomposition(alpha, L, sigma, trials, 21, rho, mu)
    x = ref.sample(alpha, L, sigma, trials, 21, rho, mu)
    # the identity holds for the estimates themselves
    assert d["var_total"] == pytest.approx(np.var(x, ddof=1), rel=1e-9)
    assert d["sum_var"] + d["sum_cov2"] == pytest.approx(d["var_total"], rel=1e-12, abs=1e-15)
    assert d["cov"].shape == (L, L) and np.allclose(d["cov"], d["cov"].T)
    assert d["n_cov_terms"] == L * (L - 1) // 2
    base = sigma**2 * L ** (-2 * alpha)
    assert d["sum_var_exact"] == pytest.approx(L * base)
    assert d["sum_cov2_exact"] == pytest.approx(L * (L - 1) * rho * base)
    assert d["var_total_exact"] == pytest.approx(ds.variance(alpha, L, sigma, rho))
    assert chi2_ok(d["var_total"], d["var_total_exact"], trials)
    # each diagonal entry: chi-square with trials-1 dof (Bonferroni over the L entries)
    diag = np.diag(d["cov"])
    assert all(chi2_ok(s, base, trials, P_TAIL / L) for s in diag)
    if rho == 0.0:  # independent columns: the trace is chi-square with L (n-1) dof
        q = (trials - 1) * d["sum_var"] / base
        dof = L * (trials - 1)
        assert chi2.ppf(P_TAIL / 2, dof) <= q <= chi2.ppf(1 - P_TAIL / 2, dof)
    # mean off-diagonal entry against rho * base (SE of a sample covariance <= base sqrt(2/n))
    off = (d["cov"].sum() - diag.sum()) / (L * (L - 1))
    assert abs(off - rho * base) < Z_SE * base * math.sqrt(2.0 / trials)


# --------------------------------------------------------------------------- curves and moments
@pytest.mark.parametrize(
    "alpha,sigma,rho,mu,c",
    [
        (0.5, 1.0, 0.0, 0.0, 1.0),
        (0.25, 1.7, 0.3, -0.4, 0.6),
        (1.2, 0.4, 1.0, 0.9, 2.0),
        (0.0, 1.0, -1 / 1023, 0.0, 0.5),
        (0.8, 2.5, 0.05, 0.2, 0.0),
    ],
)
def test_curves_equal_the_scalar_laws(alpha, sigma, rho, mu, c):
    Ls = np.unique(np.round(np.logspace(0, np.log10(1024), 60)))
    np.testing.assert_allclose(
        ds.variance_curve(alpha, Ls, sigma, rho),
        [ds.variance(alpha, int(L), sigma, rho) for L in Ls],
        rtol=1e-14,
        atol=1e-300,
    )
    np.testing.assert_allclose(ds.mean_curve(alpha, Ls, mu), [ds.mean(alpha, int(L), mu) for L in Ls], rtol=1e-14)
    np.testing.assert_allclose(
        ds.prob_within_curve(alpha, Ls, sigma, c, rho, mu),
        [ds.prob_within(alpha, int(L), sigma, c, rho, mu) for L in Ls],
        rtol=1e-12,
        atol=1e-15,
    )


PATHS = [  # (L, trials, ks, keep)
    (1, 5, [1], 5),
    (8, 40, [1, 3, 8], 7),
    (64, 300, [1, 2, 5, 16, 64], 24),
    (3000, 800, [1, 30, 3000], 3),
]


@pytest.mark.parametrize("L,trials,ks,keep", PATHS)
def test_path_moments_kernel_matches_reference(L, trials, ks, keep):
    # L = 3000, trials = 800: several blocks of rows (the draw order depends on them)
    a = ds.path_moments(L, trials, 5, ks, keep, use_numba=True)
    b = ds.path_moments(L, trials, 5, ks, keep, use_numba=False)
    np.testing.assert_array_equal(a["c"], b["c"])
    np.testing.assert_array_equal(a["E"], b["E"])  # both are sequential partial sums
    np.testing.assert_array_equal(a["U"], b["U"])
    for key in ("SD", "SD2", "SDc", "SDE"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-10, atol=1e-9 * L * trials)


@pytest.mark.parametrize(
    "alpha,L,sigma,rho,mu",
    [
        (0.5, 32, 1.0, 0.0, 0.0),
        (0.3, 50, 1.4, 0.4, -0.3),
        (1.0, 9, 0.7, 1.0, 0.5),
        (0.7, 21, 1.0, -0.04, 0.2),
        (0.5, 1, 2.0, 0.0, 0.1),
    ],
)
def test_paths_from_moments_equal_partial_sums(alpha, L, sigma, rho, mu):
    # the rescaled moments give exactly what partial_sums + increment_rms_mc give on the same draws
    trials, seed = 700, 19
    ks = sorted({1, max(1, L // 3), L})
    P = ref.partial_sums(alpha, L, sigma, trials, seed, rho, mu)
    r = ds.paths_from_moments(alpha, sigma, ds.path_moments(L, trials, seed, ks, keep=24), rho, mu)
    scale = max(1.0, np.abs(P).max())
    np.testing.assert_allclose(r["paths"], P[:24], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(r["rms_mc"], [ref.increment_rms_mc(P, k) for k in ks], rtol=1e-9)
    assert r["end_sd"] == pytest.approx(np.std(P[:, -1], ddof=1), rel=1e-9, abs=1e-12)
    assert r["n"] == trials


@pytest.mark.parametrize(
    "L,trials,block",
    [(1, 4, None), (7, 300, None), (64, 1000, None), (128, 2441, None), (1024, 3, None), (50, 130, 256)],
)
def test_column_moments_kernel_matches_reference(L, trials, block, monkeypatch):
    if block:  # several blocks of rows (the draw order depends on them)
        _set_block(monkeypatch, block)
    a = ds.column_moments(L, trials, 8, use_numba=True)
    b = ds.column_moments(L, trials, 8, use_numba=False)
    np.testing.assert_array_equal(a["c"], b["c"])
    np.testing.assert_allclose(a["E"], b["E"], rtol=0, atol=1e-13 * L)
    np.testing.assert_allclose(a["colsum"], b["colsum"], rtol=0, atol=1e-13 * trials)
    assert a["sq"] == pytest.approx(b["sq"], rel=1e-12)
    assert a["off"] == pytest.approx(b["off"], rel=1e-9, abs=1e-9 * L * trials)


@pytest.mark.parametrize(
    "alpha,L,sigma,rho,mu",
    [
        (0.5, 16, 1.0, 0.0, 0.0),
        (0.5, 24, 1.0, 0.4, 0.5),
        (1.0, 10, 2.0, 1.0, 0.0),
        (0.3, 12, 1.0, -0.05, 0.0),
        (0.8, 64, 0.6, 0.05, -0.2),
        (0.2, 30, 1.0, -1 / 29, 0.0),
    ],
)
def test_covariance_from_moments_equals_the_matrix(alpha, L, sigma, rho, mu):
    # same draws as covariance_decomposition: the O(1) rescaling reproduces its three terms
    trials = 3000
    d = ref.covariance_decomposition(alpha, L, sigma, trials, 21, rho, mu)
    r = ds.covariance_from_moments(alpha, sigma, ds.column_moments(L, trials, 21), rho)
    big = max(d["var_total"], d["sum_var"], abs(d["sum_cov2"]))
    for key in ("sum_var", "sum_cov2", "var_total"):
        assert r[key] == pytest.approx(d[key], rel=1e-9, abs=1e-11 * big), key
    for key in ("sum_var_exact", "sum_cov2_exact", "var_total_exact", "n_var_terms", "n_cov_terms"):
        assert r[key] == d[key]
    assert r["n"] == trials
    # the identity is checked, not assumed: the pair sums and the variance of the sum are
    # computed separately and agree to rounding
    assert abs(r["sum_var"] + r["sum_cov2"] - r["var_total"]) < 1e-12 * big


# --------------------------------------------------------------------------- residual network
RES = [  # (alpha, L, width, trials, seed)
    (0.5, 16, 8, 3000, 1),
    (0.25, 20, 4, 3000, 2),
    (1.0, 32, 16, 600, 3),
    (0.5, 64, 32, 300, 4),
    (0.0, 6, 3, 4000, 5),
    (0.5, 1, 1, 4000, 6),
]


@pytest.mark.parametrize("alpha,L,width,trials,seed", RES)
def test_residual_energy_mc_within_se(alpha, L, width, trials, seed):
    m, se = ds.residual_energy_mc(alpha, L, width, trials, seed)
    assert se > 0
    assert abs(m - ds.residual_energy(alpha, L)) < Z_SE * se


def test_residual_profile():
    alpha, L, width, trials = 0.5, 24, 12, 1500
    m, se = ds.residual_energy_profile(alpha, L, width, trials, 7)
    assert m.shape == se.shape == (L + 1,)
    assert m[0] == 1.0 and se[0] == 0.0
    assert (m[-1], se[-1]) == pytest.approx(ds.residual_energy_mc(alpha, L, width, trials, 7))
    exact = (1 + L ** (-2 * alpha)) ** np.arange(L + 1)
    assert np.all(np.abs(m[1:] - exact[1:]) < Z_SE * se[1:])


@pytest.mark.parametrize(
    "alpha,L,width,trials",
    [
        (0.5, 8, 4, 5),
        (0.3, 17, 9, 70),
        (1.0, 3, 256, 3),
        (0.5, 64, 64, 40),
        (0.0, 5, 1, 130),
        (0.5, 5, 512, 3),
    ],
)
def test_residual_kernel_matches_reference(alpha, L, width, trials):
    # the same draws go to the Numba kernel and to the NumPy reference
    a = ds._residual_norms(alpha, L, width, trials, 123, use_numba=True)
    b = ds._residual_norms(alpha, L, width, trials, 123, use_numba=False)
    assert a.shape == (trials, L + 1)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_residual_blocks_cover_splits():
    # the kernel-vs-reference cases above include several trial groups and several layer blocks
    rows, lb = ds._residual_blocks(64, 64, 40)
    assert rows < 40 and lb < 64
    rows, lb = ds._residual_blocks(5, 512, 3)
    assert lb < 5
    for L, N, T in [(1, 1, 2), (512, 1024, 2), (512, 1, 10**5), (64, 32, 256)]:
        rows, lb = ds._residual_blocks(L, N, T)
        assert 1 <= rows <= T and 1 <= lb <= L
        assert rows * lb * N * N <= 4 * ds._BLOCK or (rows == 1 and lb == 1)


def test_residual_kernel_direct():
    T, lb, N = 5, 3, 7
    z0 = np.random.default_rng(0).standard_normal((T, N))
    za, zb = z0.copy(), z0.copy()
    na, nb = np.zeros((T, lb + 3)), np.zeros((T, lb + 3))
    ra, rb = np.random.default_rng(1), np.random.default_rng(1)
    ds._residual_kernel(ra, za, 0.3, na, 2, lb)
    ds._residual_reference(rb, zb, 0.3, nb, 2, lb)
    np.testing.assert_allclose(za, zb, rtol=1e-13)
    np.testing.assert_allclose(na, nb, rtol=1e-13)
    # both consumed exactly the T * lb * N * N draws of the weights
    assert ra.standard_normal() == rb.standard_normal()
    # one explicit layer by hand, with the weights the kernel drew
    W = np.random.default_rng(1).standard_normal((T, lb, N, N))
    z = z0[0] + 0.3 * W[0, 0] @ z0[0]
    assert nb[0, 3] == pytest.approx(z @ z, rel=1e-13)


def test_residual_determinism():
    a = ds.residual_energy_mc(0.5, 10, 5, 50, 9)
    assert a == ds.residual_energy_mc(0.5, 10, 5, 50, 9)
    assert a != ds.residual_energy_mc(0.5, 10, 5, 50, 10)


# --------------------------------------------------------------------------- bad input
BAD = [
    (ds.variance, (float("nan"), 10, 1.0), {}, "alpha"),
    (ds.variance, (-0.1, 10, 1.0), {}, "alpha"),
    (ds.variance, (0.5, 0, 1.0), {}, "L"),
    (ds.variance, (0.5, 2.5, 1.0), {}, "L"),
    (ds.variance, (0.5, True, 1.0), {}, "L"),
    (ds.variance, (0.5, 10, 0.0), {}, "sigma"),
    (ds.variance, (0.5, 10, float("inf")), {}, "sigma"),
    (ds.variance, (0.5, 10, 1.0), {"rho": 1.5}, "rho"),
    (ds.variance, (0.5, 10, 1.0), {"rho": -0.2}, "-1/\\(L-1\\)"),
    (ref.sample, (0.5, 10, 1.0, 100, 0), {"rho": -0.5}, "rho"),
    (ref.sample, (0.5, 10, 1.0, 0, 0), {}, "trials"),
    (ref.sample, (0.5, 10, 1.0, 100, -1), {}, "seed"),
    (ref.sample, (0.5, 10, 1.0, 100, 0), {"mu": float("nan")}, "mu"),
    (ref.sample, (0.5, 10**5, 1.0, 10**4, 0), {}, "trials \\* L"),
    (ref.partial_sums, (0.5, 1000, 1.0, 10**4, 0), {}, "trials \\* \\(L\\+1\\)"),
    (ref.covariance_decomposition, (0.5, 2000, 1.0, 10, 0), {}, "L"),
    (ref.covariance_decomposition, (0.5, 1000, 1.0, 1000, 0), {}, "trials \\* L \\* L"),
    (ds.prob_within, (0.5, 10, 1.0, -1.0), {}, "c"),
    (ds.residual_energy, (0.5, 0), {}, "L"),
    (ds.residual_energy, (3.0, 10), {}, "alpha"),
    (ds.residual_energy_mc, (0.5, 10, 0, 10, 0), {}, "width"),
    (ds.residual_energy_mc, (0.5, 10, 2000, 10, 0), {}, "width"),
    (ds.residual_energy_mc, (0.5, 1000, 4, 10, 0), {}, "L"),
    (ds.residual_energy_mc, (0.5, 10, 4, 1, 0), {}, "trials"),
    (ds.residual_energy_mc, (0.5, 512, 512, 10, 0), {}, "width\\^2"),
    (ds.residual_energy_mc, (0.5, 10, 4, 10, "a"), {}, "seed"),
    (ds.unit_sums, (10**5, 10**4, 0), {}, "trials \\* L"),
    (ds.unit_sums, (0, 10, 0), {}, "L"),
    (ds.unit_sums, (10, 0, 0), {}, "trials"),
    (ds.unit_sums, (10, 100, -1), {}, "seed"),
    (ds.sums_from_units, (0.5, 10, 1.0, [0.0], [1.0]), {"mu": float("nan")}, "mu"),
    (ds.sums_from_units, (0.5, 10, 1.0, [0.0, 1.0], [1.0]), {}, "E"),
    (ds.sums_from_units, (0.5, 10, 1.0, [0.0, float("nan")], [1.0, 2.0]), {}, "c"),
    (ds.sums_from_units, (0.5, 10, 1.0, [0.0], [1.0]), {"rho": -0.5}, "rho"),
    (ds.variance_curve, (0.5, [1, 2.5], 1.0), {}, "Ls"),
    (ds.variance_curve, (0.5, [0, 2], 1.0), {}, "Ls"),
    (ds.variance_curve, (0.5, [2, 100], 1.0), {"rho": -0.1}, "rho"),
    (ds.prob_within_curve, (0.5, [2, 3], 1.0, -1.0), {}, "c"),
    (ds.mean_curve, (0.5, [2, 3], float("inf")), {}, "mu"),
    (ds.path_moments, (10, 50, 0, [0, 2]), {}, "ks"),
    (ds.path_moments, (10, 50, 0, [11]), {}, "ks"),
    (ds.path_moments, (10, 50, 0, [2]), {"keep": 51}, "keep"),
    (ds.path_moments, (10**5, 10**4, 0, [1]), {}, "trials \\* L"),
    (ds.column_moments, (2000, 10, 0), {}, "L"),
    (ds.column_moments, (1000, 1000, 0), {}, "trials \\* L \\* L"),
    (ds.one_step, (-1.0, 10), {}, "c"),
    (ds.one_step, (1.0, 0), {}, "L"),
    (ds.sgd_step, (0.5, 1.0, 10), {"update": "adam"}, "update"),
    (ds.increment_rms, (0.5, 10, 1.0, 11), {}, "k"),
]


@pytest.mark.parametrize("fn,args,kwargs,match", BAD)
def test_bad_input_raises(fn, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fn(*args, **kwargs)


def test_warm_runs():
    ds.warm()


def test_residual_energy_mc_standard_error_finite_at_alpha_zero():
    """Residual_energy_mc(0.0, 512, 128, 10, 0) showed '± inf' (the ratios are ~1e154,
    their squares overflowed in the standard deviation). Checked against long double."""
    m, se = ds.residual_energy_mc(0.0, 512, 128, 10, 0)
    assert np.isfinite(m) and np.isfinite(se) and se > 0
    r = ds._residual_sample(0.0, 512, 128, 10, 0)[:, -1].astype(np.longdouble)
    mean = r.mean()
    sd = np.sqrt(((r - mean) ** 2).sum() / (r.size - 1))
    if np.finfo(np.longdouble).maxexp >= 16384:  # 80-bit: the squares fit
        assert m == pytest.approx(float(mean), rel=1e-13)
        assert se == pytest.approx(float(sd / np.sqrt(10)), rel=1e-12)
    pm, pse = ds.residual_energy_profile(0.0, 512, 128, 10, 0)
    assert np.all(np.isfinite(pm)) and np.all(np.isfinite(pse))
    assert (pm[-1], pse[-1]) == pytest.approx((m, se), rel=1e-13)


# --------------------------------------------------------------------------- the vector sampler
@pytest.mark.parametrize(
    "alpha,L,width,trials,block",
    [(0.5, 8, 4, 5, 2**21), (0.3, 17, 9, 70, 200), (1.0, 3, 256, 3, 2**21), (0.0, 5, 1, 130, 7)],
)
def test_residual_vector_kernel_matches_reference(monkeypatch, alpha, L, width, trials, block):
    _set_block(monkeypatch, block)  # several groups of trials where block is small
    a = ds._residual_norms_vector(alpha, L, width, trials, 123, use_numba=True)
    b = ds._residual_norms_vector(alpha, L, width, trials, 123, use_numba=False)
    assert a.shape == (trials, L + 1) and np.all(a[:, 0] == 1.0)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "alpha,L,width,trials,seed", [(0.5, 16, 8, 3000, 1), (0.25, 20, 4, 3000, 2), (0.5, 64, 32, 300, 4)]
)
def test_residual_vector_sampler_has_the_matrix_law(alpha, L, width, trials, seed):
    """W z given z is N(0, |z|^2/N I) for Gaussian W: the two samplers draw from one law (two-sample
    Kolmogorov-Smirnov on the final ratios and on a middle layer; fixed seeds, so not flaky)."""
    from scipy.stats import ks_2samp

    v = ds._residual_norms_vector(alpha, L, width, trials, seed)
    m = ds._residual_norms(alpha, L, width, trials, seed + 100)
    for col in (L // 2, L):
        assert ks_2samp(v[:, col], m[:, col]).pvalue > 1e-3
    exact = (1 + L ** (-2 * alpha)) ** np.arange(L + 1)
    se = v.std(axis=0, ddof=1) / math.sqrt(trials)
    assert np.all(np.abs(v[:, 1:].mean(axis=0) - exact[1:]) < Z_SE * se[1:])


def test_residual_sampler_switch(monkeypatch):
    assert ds.RESIDUAL_SAMPLER in ds.RESIDUAL_SAMPLERS
    monkeypatch.setattr(ds_residual, "RESIDUAL_SAMPLER", "vector")
    m, se = ds.residual_energy_mc(0.5, 24, 12, 1500, 7)
    assert abs(m - ds.residual_energy(0.5, 24)) < Z_SE * se
    r = ds._residual_norms_vector(0.5, 24, 12, 1500, 7)[:, -1]
    assert m == pytest.approx(r.mean(), rel=1e-12)
