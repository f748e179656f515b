"""Tests for sim.gaussian_width: closed forms, bounds, Monte Carlo, kernels vs NumPy, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from sim import gaussian_width as gw
from tests import _reference_gaussian_width as R

SQ2PI = math.sqrt(2.0 / math.pi)


def chi_mean_gamma(k):
    """Direct formula with math.gamma (fine for small k)."""
    return math.sqrt(2.0) * math.gamma((k + 1) / 2) / math.gamma(k / 2)


# ---------------------------------------------------------------- exact values
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10, 37, 100, 170])
@pytest.mark.parametrize("D", [170, 1000, 10**6])
def test_subspace_exact_matches_gamma_formula_and_ignores_D(k, D):
    assert gw.exact("subspace", D=D, k=k) == pytest.approx(chi_mean_gamma(k), rel=1e-12)


@pytest.mark.parametrize("k", [199, 200, 201, 10**4, 12_345, 10**6, 10**9, 10**12 - 1])
def test_subspace_exact_large_k(k):
    w, w1 = gw.exact("subspace", D=k + 1, k=k), gw.exact("subspace", D=k + 1, k=k + 1)
    # Gamma recursion: w_k * w_{k+1} = 2 Gamma(k/2+1)/Gamma(k/2) = k
    assert w * w1 == pytest.approx(k, rel=1e-14)
    # independent implementations: gammaln difference (loses ~k*1e-16), Pochhammer
    assert w == pytest.approx(
        math.sqrt(2) * math.exp(special.gammaln((k + 1) / 2) - special.gammaln(k / 2)), rel=max(1e-13, 2e-15 * k)
    )
    assert w == pytest.approx(math.sqrt(2) * special.poch(k / 2, 0.5), rel=1e-11)
    # asymptotic series sqrt(k) (1 - 1/(4k) + 1/(32k^2) + 5/(128k^3))
    series = math.sqrt(k) * (1 - 1 / (4 * k) + 1 / (32 * k**2) + 5 / (128 * k**3))
    assert w == pytest.approx(series, rel=1e-11)
    lo, hi = gw.bound("subspace", D=k, k=k)
    assert lo < w < hi


def test_small_cases_by_hand():
    assert gw.exact("subspace", D=5, k=1) == pytest.approx(SQ2PI, rel=1e-14)  # E|g_1|
    assert gw.exact("subspace", D=5, k=2) == pytest.approx(math.sqrt(math.pi / 2), rel=1e-14)
    assert gw.exact("circle", D=2) == pytest.approx(math.sqrt(math.pi / 2), rel=1e-15)
    assert gw.exact("circle", D=999) == gw.exact("circle", D=2)
    assert gw.exact("hypercube", D=1) == pytest.approx(SQ2PI, rel=1e-15)


@pytest.mark.parametrize("D", [1, 2, 7, 100, 10**5])
def test_adaptive_and_hypercube_closed_forms(D):
    assert gw.exact("adaptive", D=D) == pytest.approx(gw.exact("subspace", D=D, k=D), rel=1e-15)
    if D <= 170:
        assert gw.exact("adaptive", D=D) == pytest.approx(chi_mean_gamma(D), rel=1e-12)
    assert gw.exact("hypercube", D=D) == pytest.approx(math.sqrt(2 * D / math.pi), rel=1e-15)
    # hypercube vertices lie on the unit sphere: width at most E||g||
    assert gw.exact("hypercube", D=D) <= gw.exact("adaptive", D=D) + 1e-12


@pytest.mark.parametrize("M", [1, 2, 7, 100, 10**4])
def test_directions_independent_closed_form(M):
    f = lambda r: 1.0 - special.erf(r / math.sqrt(2)) ** M  # noqa: E731
    ref = integrate.quad(f, 0, 40, limit=200, epsabs=1e-13)[0]
    assert gw.exact("directions", D=M, M=M) == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("M,rho", [(3, 0.5), (20, 0.3), (50, 0.95)])
def test_directions_correlated_against_nested_quad(M, rho):
    s, sr = math.sqrt(1 - rho), math.sqrt(rho)

    def tail(r):
        f = lambda z: (
            stats.norm.pdf(z)
            * (
                1
                - (
                    special.ndtr((r - sr * z) / s)  # noqa: E731
                    - special.ndtr((-r - sr * z) / s)
                )
                ** M
            )
        )
        return 2 * integrate.quad(f, 0, 12, points=[min(r / sr, 11.9)], limit=100, epsabs=1e-11)[0]

    ref = integrate.quad(tail, 0, 12, limit=50, epsabs=1e-9)[0]
    assert gw.exact("directions", D=M, M=M, correlation=rho) == pytest.approx(ref, rel=1e-8)
    r = np.array([0.5, 1.5, 2.5, 3.5])
    assert gw.tail_exact(r, M, rho) == pytest.approx([tail(x) for x in r], abs=1e-9)


@pytest.mark.parametrize("M,rho", [(1, 0.0), (1, 0.6), (40, 1.0), (10**6, 1.0)])
def test_directions_degenerate_cases_equal_one_direction(M, rho):
    assert gw.exact("directions", D=M, M=M, correlation=rho) == pytest.approx(SQ2PI, rel=1e-10)


def test_directions_mean_is_integral_of_tail_and_monotone():
    for M, rho in [(5, 0.0), (30, 0.4), (300, 0.9)]:
        x, w = np.polynomial.legendre.leggauss(10)
        edges = np.linspace(0.0, 15.0, 61)  # Gauss-Legendre on 60 panels of [0, 15]
        r = (0.5 * (edges[:-1] + edges[1:])[:, None] + 0.125 * x).ravel()
        T = gw.tail_exact(r, M, rho)
        assert gw.tail_exact([0.0], M, rho)[0] == pytest.approx(1.0, abs=1e-12)
        assert np.all(np.diff(T) <= 1e-12)
        assert np.sum(np.tile(0.125 * w, 60) * T) == pytest.approx(
            gw.exact("directions", D=M, M=M, correlation=rho), rel=1e-9
        )
        assert np.all(T <= gw.tail_bound(r, M) + 1e-12)
    means = [gw.exact("directions", D=1000, M=M, correlation=0.3) for M in (1, 2, 10, 100, 1000)]
    assert np.all(np.diff(means) > 0)
    by_rho = [gw.exact("directions", D=50, M=50, correlation=c) for c in (0.0, 0.3, 0.7, 0.99)]
    assert np.all(np.diff(by_rho) < 0)  # more correlated, narrower


# ---------------------------------------------------------------- bounds
@pytest.mark.parametrize(
    "kind,params",
    [
        ("subspace", dict(D=10, k=1)),
        ("subspace", dict(D=10, k=2)),
        ("subspace", dict(D=500, k=77)),
        ("subspace", dict(D=10**5, k=10**4)),
        ("adaptive", dict(D=1)),
        ("adaptive", dict(D=3000)),
        ("hypercube", dict(D=1)),
        ("hypercube", dict(D=64)),
        ("circle", dict(D=3)),
        ("directions", dict(D=1, M=1)),
        ("directions", dict(D=100, M=100, correlation=0.0)),
        ("directions", dict(D=1000, M=700, correlation=0.5)),
        ("directions", dict(D=9, M=9, correlation=1.0)),
    ],
)
def test_bounds_bracket_exact(kind, params):
    lo, hi = gw.bound(kind, **params)
    w = gw.exact(kind, **params)
    assert lo <= w * (1 + 1e-12) and w <= hi * (1 + 1e-12)


def test_bound_values():
    assert gw.bound("subspace", D=9, k=4) == pytest.approx((math.sqrt(8 / math.pi), 2.0))
    assert gw.bound("directions", D=9, M=4) == pytest.approx((SQ2PI, math.sqrt(2 * math.log(8))))
    assert gw.max_abs_bound(1) == pytest.approx(math.sqrt(2 * math.log(2)))
    # subspace lower bound is attained only at k = 1
    assert gw.bound("subspace", D=5, k=1)[0] == pytest.approx(gw.exact("subspace", D=5, k=1))


# ---------------------------------------------------------------- Monte Carlo
MC_CASES = [
    ("subspace", dict(D=30, k=1)),
    ("subspace", dict(D=40, k=13)),
    ("subspace", dict(D=13, k=13)),
    ("adaptive", dict(D=1)),
    ("adaptive", dict(D=250)),
    ("hypercube", dict(D=3)),
    ("hypercube", dict(D=400)),
    ("circle", dict(D=2)),
    ("circle", dict(D=60)),
    ("directions", dict(D=1, M=1)),
    ("directions", dict(D=80, M=80)),
    ("directions", dict(D=50, M=30, correlation=0.45)),
    ("directions", dict(D=20, M=20, correlation=1.0)),
]


@pytest.mark.parametrize("kind,params", MC_CASES)
@pytest.mark.parametrize("seed", [3, 2024])
def test_monte_carlo_within_four_standard_errors(kind, params, seed):
    mean, se = gw.monte_carlo(kind, 4000, seed, **params)
    assert se > 0
    assert abs(mean - gw.exact(kind, **params)) < 4 * se


def test_monte_carlo_standard_error_matches_theory():
    # Var ||g_k|| = k - w_k^2; the reported stderr estimates sqrt(Var/n)
    k, n = 6, 20000
    _, se = gw.monte_carlo("subspace", n, 11, D=9, k=k)
    w = gw.exact("subspace", D=9, k=k)
    assert se == pytest.approx(math.sqrt((k - w * w) / n), rel=0.05)


@pytest.mark.parametrize(
    "kind,params",
    MC_CASES[::2]
    + [
        ("directions", dict(D=300, M=5, correlation=0.2)),
        ("subspace", dict(D=100, k=70)),
    ],
)
def test_numba_path_equals_numpy_reference(kind, params):
    n = 3000 if params["D"] < 100 else 1500  # several chunks when D is large
    ref = gw.sup_samples(kind, n, 7, method="numpy", **params)
    fast = gw.sup_samples(kind, n, 7, **params)
    one = gw.sup_samples(kind, n, 7, threads=1, **params)
    np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(fast, one)  # threads do not change the draws


def test_same_draws_give_geometric_invariants():
    n, D = 5000, 40
    ada = gw.sup_samples("adaptive", n, 5, D=D)
    cube = gw.sup_samples("hypercube", n, 5, D=D)
    full = gw.sup_samples("subspace", n, 5, D=D, k=D)
    sub = gw.sup_samples("subspace", n, 5, D=D, k=10)
    assert np.all(cube <= ada + 1e-12)  # ||g||_1/sqrt(D) <= ||g||_2
    np.testing.assert_allclose(full, ada, rtol=1e-12)  # k = D: the whole sphere
    assert np.all(sub <= ada + 1e-12)  # projection shortens
    assert np.all(cube >= ada / math.sqrt(D) - 1e-12)
    # different seeds give different draws
    assert not np.allclose(gw.sup_samples("adaptive", n, 6, D=D), ada)


def test_orientation_is_orthonormal_tilted_and_cheap():
    D, k = 50, 7
    V = gw._reflectors(D, 4)
    Q = gw._basis(V, k)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), atol=1e-12)
    assert np.abs(Q).max() < 0.99  # not the coordinate axes: every coordinate of g is used
    g = np.random.default_rng(1).standard_normal(D)
    h = g.copy()
    for v in V:  # what the kernel does: h = H g, reflection by reflection
        h -= 2.0 * (v @ h) * v
    np.testing.assert_allclose(Q.T @ g, h[:k], atol=1e-12)
    # the Numba path needs no basis: k = D = 5000 runs although D*k exceeds the reference's caps
    m, se = gw.monte_carlo("subspace", 200, 0, D=5000, k=5000)
    assert abs(m - gw.exact("subspace", D=5000, k=5000)) < 4 * se


def test_equicorrelated_directions_gram():
    for M, D, rho, seed in [(5, 5, 0.0, None), (7, 20, 0.3, None), (12, 40, 0.8, 3), (6, 6, 1.0, 9)]:
        U = R.equicorrelated_directions(M, D, rho, seed=seed)
        G = U @ U.T
        np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)
        off = G[~np.eye(M, dtype=bool)]
        np.testing.assert_allclose(off, rho, atol=1e-12)


def test_directions_empirical_tail_against_exact_and_bound():
    M, rho, n = 25, 0.5, 40000
    v = gw.sup_samples("directions", n, 8, D=25, M=M, correlation=rho)
    r = np.array([1.0, 2.0, 2.5, 3.0])
    emp = gw.empirical_tail(v, r)
    ex = gw.tail_exact(r, M, rho)
    se = np.sqrt(ex * (1 - ex) / n)
    assert np.all(np.abs(emp - ex) < 4 * se + 1e-12)
    assert np.all(ex < gw.tail_bound(r, M))
    assert gw.empirical_tail([1.0, 2.0, 3.0], [0.0, 2.0, 3.5]) == pytest.approx([1.0, 2 / 3, 0.0])


@pytest.mark.parametrize(
    "kind,params",
    [
        ("subspace", dict(D=9, k=4)),
        ("circle", dict(D=4)),
        ("adaptive", dict(D=30)),
        ("directions", dict(D=40, M=40, correlation=0.0)),
        ("directions", dict(D=40, M=12, correlation=0.6)),
    ],
)
def test_density_normalised_with_exact_mean(kind, params):
    t, wt = np.polynomial.legendre.leggauss(10)
    edges = np.linspace(0.0, 15.0, 61)  # Gauss-Legendre on 60 panels of [0, 15]
    x = (0.5 * (edges[:-1] + edges[1:])[:, None] + 0.125 * t).ravel()
    w = np.tile(0.125 * wt, 60)
    f = gw.sup_density(kind, x, **params)
    assert np.all(f >= 0)
    assert np.sum(w * f) == pytest.approx(1.0, abs=1e-9)
    assert np.sum(w * x * f) == pytest.approx(gw.exact(kind, **params), rel=1e-9)


@pytest.mark.parametrize(
    "kind,params",
    [
        ("subspace", dict(D=3, k=2)),
        ("subspace", dict(D=3, k=1)),
        ("adaptive", dict(D=3)),
        ("hypercube", dict(D=3)),
        ("hypercube", dict(D=2)),
        ("circle", dict(D=3)),
        ("directions", dict(D=3, M=3, correlation=0.2)),
        ("directions", dict(D=2, M=2)),
    ],
)
def test_one_draw_is_first_sample_and_maximiser(kind, params):
    d = gw.one_draw(kind, 17, **params)
    g, u = d["g"], d["u"]
    assert np.linalg.norm(u) == pytest.approx(1.0)
    assert d["sup"] == pytest.approx(g @ u)
    assert d["sup"] == pytest.approx(gw.sup_samples(kind, 2, 17, **params)[0], rel=1e-12)
    if "points" in d:  # no point of a finite set does better
        pts = d["points"]
        vals = pts @ g if kind == "hypercube" else np.abs(pts @ g)
        assert d["sup"] == pytest.approx(vals.max())
    if "basis" in d:  # u lies in the subspace, and beats random unit vectors in it
        B = d["basis"]
        np.testing.assert_allclose(B @ (B.T @ u), u, atol=1e-12)
        c = np.random.default_rng(0).standard_normal((200, B.shape[1]))
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        assert np.all((c @ B.T) @ g <= d["sup"] + 1e-12)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gw.exact("subspace", D=3, k=4), "k"),
        (lambda: gw.exact("subspace", D=3, k=0), "k"),
        (lambda: gw.exact("subspace", D=3), "k"),
        (lambda: gw.exact("subspace", D=float("nan"), k=1), "D"),
        (lambda: gw.exact("subspace", D=3.5, k=1), "D"),
        (lambda: gw.exact("adaptive", D=0), "D"),
        (lambda: gw.exact("adaptive", D=True), "D"),
        (lambda: gw.exact("circle", D=1), "D"),
        (lambda: gw.exact("hypercube", D=4, k=2), "k"),
        (lambda: gw.exact("sphere", D=4), "kind"),
        (lambda: gw.exact("directions", D=4, M=0), "M"),
        (lambda: gw.exact("directions", D=4, M=5), "M"),
        (lambda: gw.exact("directions", D=4, M=2, correlation=float("nan")), "correlation"),
        (lambda: gw.exact("directions", D=4, M=2, correlation=1.5), "correlation"),
        (lambda: gw.exact("directions", D=4, M=2, correlation=-0.1), "correlation"),
        (lambda: gw.bound("subspace", D=2, k=3), "k"),
        (lambda: gw.bound("directions", D=5, M=0), "M"),
        (lambda: gw.monte_carlo("adaptive", 1, 0, D=3), "samples"),
        (lambda: gw.monte_carlo("adaptive", 2.5, 0, D=3), "samples"),
        (lambda: gw.monte_carlo("adaptive", 100, -1, D=3), "seed"),
        (lambda: gw.monte_carlo("adaptive", 100, float("nan"), D=3), "seed"),
        (lambda: gw.monte_carlo("adaptive", 10**6, 0, D=10**4), "samples*D"),
        (lambda: gw.sup_samples("subspace", 20_000, 0, method="numpy", D=1000, k=500), "samples*D*k"),
        (lambda: gw.sup_samples("directions", 100, 0, method="numpy", D=10**4, M=10**4), "D*M"),
        (lambda: gw.monte_carlo("directions", 100, 0, D=3, M=0), "M"),
        (lambda: gw.sup_samples("adaptive", 100, 0, method="fortran", D=3), "method"),
        (lambda: gw.tail_bound([1.0, float("nan")], 3), "r"),
        (lambda: gw.tail_exact([-1.0], 3), "r"),
        (lambda: gw.tail_exact([1.0], 3, correlation=2.0), "correlation"),
        (lambda: gw.tail_bound([1.0], 0), "M"),
        (lambda: gw.empirical_tail([], [1.0]), "values"),
        (lambda: gw.sup_density("hypercube", [1.0], D=3), "hypercube"),
        (lambda: R.equicorrelated_directions(5, 3, 0.1), "M"),
        (lambda: gw.one_draw("adaptive", 0, D=5000), "D"),
    ],
)
def test_bad_arguments_raise_value_error_naming_argument(call, name):
    with pytest.raises(ValueError, match=name.replace("*", r"\*")):
        call()


# ---------------------------------------------------------------- from the numerical review: M > D, work bounds
def _angle_average(U):
    """E_phi max_i |cos(phi - theta_i)| for unit rows of U in R^2, by adaptive quadrature on
    [0, pi) split at every kink (independent of the gap formula)."""
    th = np.arctan2(U[:, 1], U[:, 0])
    f = lambda phi: np.max(np.abs(np.cos(phi - th)))
    kinks = np.sort(np.mod(np.concatenate([th, th + math.pi / 2]), math.pi))
    pts = np.concatenate([[0.0], kinks, [math.pi]])
    total = sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-13)[0] for a, b in zip(pts[:-1], pts[1:]) if b > a)
    return total / math.pi


@pytest.mark.parametrize("M", [1, 2, 3, 7, 40, 500])
def test_directions_more_than_D_exact_in_the_plane(M):
    """M > D directions, D = 2: exact value = E||g|| * E_phi max_i|cos(phi - theta_i)|,
    with E||g|| = sqrt(pi/2); checked by quadrature and by Monte Carlo (4 s.e.)."""
    U = gw.random_directions(M, 2, seed=5)
    expect = math.sqrt(math.pi / 2) * _angle_average(U)
    assert gw.exact("directions", vectors=U) == pytest.approx(expect, rel=1e-10)
    assert gw.exact("directions", vectors=3.0 * U, D=2, M=M) == pytest.approx(expect, rel=1e-10)
    m, se = gw.monte_carlo("directions", 20000, 5, D=2, M=M, layout="random")
    assert abs(m - expect) < 4 * se
    lo, hi = gw.bound("directions", D=2, M=M, layout="random")
    assert lo * (1 - 1e-12) <= expect <= min(hi, math.sqrt(math.pi / 2)) * (1 + 1e-12)


@pytest.mark.parametrize("M,D", [(64, 3), (1000, 5), (200, 16)])
def test_directions_more_than_D_monte_carlo(M, D):
    """M >> D random unit directions: Monte Carlo, numba == numpy, first draw == max_i |u_i.g|,
    inside [sqrt(2/pi), min(sqrt(2 log 2M), E||g||)]; exact() says why it has no value."""
    a = gw.sup_samples("directions", 3000, 11, D=D, M=M, layout="random")
    b = gw.sup_samples("directions", 3000, 11, method="numpy", D=D, M=M, layout="random")
    np.testing.assert_allclose(a, b, rtol=1e-13)
    U = gw.random_directions(M, D, 11)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-15)
    first = gw.one_draw("directions", 11, D=D, M=M, layout="random")
    assert a[0] == pytest.approx(np.max(np.abs(U @ first["g"])), rel=1e-13)
    assert first["sup"] == pytest.approx(a[0], rel=1e-13)
    np.testing.assert_allclose(first["points"], U)
    m = float(a.mean())
    assert SQ2PI < m < min(gw.max_abs_bound(M), gw.exact("adaptive", D=D))
    given = gw.sup_samples("directions", 3000, 11, vectors=U)
    np.testing.assert_allclose(given, a, rtol=1e-13)  # same g; the rows are renormalised
    with pytest.raises(ValueError, match="monte_carlo"):
        gw.exact("directions", vectors=U)
    with pytest.raises(ValueError, match="random_directions"):
        gw.exact("directions", D=D, M=M, layout="random")
    with pytest.raises(ValueError, match="layout='random'"):
        gw.exact("directions", D=D, M=M)


def test_directions_given_equicorrelated_matrix_matches_exact():
    """A given matrix (here the equicorrelated one) gives the Monte Carlo of that set."""
    U = R.equicorrelated_directions(12, 20, 0.4, seed=2)
    m, se = gw.monte_carlo("directions", 40000, 3, vectors=U)
    assert abs(m - gw.exact("directions", D=20, M=12, correlation=0.4)) < 4 * se


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: gw.exact("directions", vectors=np.zeros((3, 2))), "zero row"),
        (lambda: gw.exact("directions", vectors=np.eye(2), M=3), "M"),
        (lambda: gw.exact("directions", vectors=np.eye(2) * 1j), "vectors must be real"),
        (lambda: gw.exact("directions", D=2, M=3, layout="given"), "vectors"),
        (lambda: gw.exact("directions", D=2, M=3, layout="random", correlation=0.3), "correlation"),
        (lambda: gw.sup_density("directions", [1.0], D=2, M=3, layout="random"), "equicorrelated"),
        (lambda: gw.tail_exact([1j], 3), "r"),
    ],
)
def test_directions_explicit_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_correlated_tail_and_density_bounded_before_work():
    """tail_exact / sup_density('directions') at 1e5 points took 37-55 s: now refused at once
    for 0 < rho < 1 beyond max_work points (default 2000); closed forms stay fast."""
    import time

    r = np.linspace(0.0, 6.0, 100_000)
    t0 = time.process_time()
    with pytest.raises(ValueError, match="max_work"):
        gw.tail_exact(r, 50, 0.3)
    with pytest.raises(ValueError, match="max_work"):
        gw.sup_density("directions", r, D=50, M=50, correlation=0.3)
    assert time.process_time() - t0 < 1.0  # CPU seconds; the old path took ~40 s
    assert np.all(np.isfinite(gw.tail_exact(r, 50, 0.0)))  # closed form: 1e5 points fine
    few = np.array([0.5, 1.0, 2.0])
    np.testing.assert_array_equal(gw.tail_exact(few, 50, 0.3, max_work=3), gw.tail_exact(few, 50, 0.3))
    with pytest.raises(ValueError, match="max_work"):
        gw.tail_exact(few, 50, 0.3, max_work=2)


def test_monte_carlo_max_work():
    with pytest.raises(ValueError, match="max_work"):
        gw.monte_carlo("adaptive", 1000, 0, D=100, max_work=99_999)
    assert gw.monte_carlo("adaptive", 1000, 0, D=100, max_work=100_000)[0] > 9
    with pytest.raises(ValueError, match="max_work"):
        gw.sup_samples("adaptive", 10**6, 0, D=100)  # default bound unchanged
