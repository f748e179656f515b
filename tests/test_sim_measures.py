"""sim.measures against independent references, closed forms, invariances and rates (§8)."""

import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.special import ellipe

from sim import measures as M
from sim.measures import circle as M_circle
from sim.measures import heads as M_heads
from sim.measures import transport as M_transport
from sim.attention import simulate_reference

TWO_PI = 2 * math.pi


def _geo(a, b):
    d = np.abs(np.mod(np.subtract.outer(a, b), TWO_PI))
    return np.minimum(d, TWO_PI - d)


def _w1_assignment(a, b):
    """Independent W₁: optimal assignment with geodesic cost (sizes expanded to their lcm)."""
    n, m = len(a), len(b)
    L = n * m // math.gcd(n, m)
    A, B = np.repeat(a, L // n), np.repeat(b, L // m)
    C = _geo(A, B)
    r, c = linear_sum_assignment(C)
    return C[r, c].mean()


# --------------------------------------------------------------------------- w1_circle
@pytest.mark.parametrize(
    "n,m,seed", [(1, 1, 0), (5, 5, 1), (40, 40, 2), (150, 150, 3), (6, 4, 4), (3, 7, 5), (12, 30, 6)]
)
def test_w1_circle_equals_optimal_assignment(n, m, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-10, 10, n)  # any real angles
    b = rng.vonmises(1.0, 2.0, m) * 3  # concentrated + wrapped
    assert M.w1_circle(a, b) == pytest.approx(_w1_assignment(a, b), rel=1e-12, abs=1e-13)


def test_w1_circle_closed_forms():
    for x, y in [(0.0, 1.0), (0.3, 4.0), (-1.0, 2.0), (0.0, math.pi), (5.0, 5.0)]:
        d = abs(x - y) % TWO_PI
        assert M.w1_circle([x], [y]) == pytest.approx(min(d, TWO_PI - d), abs=1e-14)
    # a rotation by a small ε moves every atom by ε: W₁ = ε
    rng = np.random.default_rng(7)
    a = np.sort(rng.uniform(0, TWO_PI, 20))
    eps = 0.2 * np.min(np.diff(a))
    assert M.w1_circle(a, a + eps) == pytest.approx(eps, rel=1e-10)
    # a measure against itself, in another order and with multiplicity
    assert M.w1_circle(a, np.concatenate([a, a[::-1]])) == pytest.approx(0.0, abs=1e-15)


def test_w1_circle_invariances():
    rng = np.random.default_rng(8)
    a, b, c = rng.uniform(0, TWO_PI, 17), rng.uniform(0, TWO_PI, 9), rng.uniform(0, TWO_PI, 23)
    w = M.w1_circle(a, b)
    for alpha in (0.1, -2.5, 100.0):
        assert M.w1_circle(a + alpha, b + alpha) == pytest.approx(w, abs=1e-12)
    k = rng.integers(-5, 6, a.size)
    assert M.w1_circle(a + TWO_PI * k, b) == pytest.approx(w, abs=1e-12)  # mod 2π
    assert M.w1_circle(-a, -b) == pytest.approx(w, abs=1e-12)  # reflection
    assert M.w1_circle(b, a) == pytest.approx(w, abs=1e-15)  # symmetry
    assert M.w1_circle(rng.permutation(a), b) == pytest.approx(w, abs=1e-15)
    assert M.w1_circle(a, c) <= M.w1_circle(a, b) + M.w1_circle(b, c) + 1e-12  # triangle
    assert 0 <= w <= math.pi


# --------------------------------------------------------------------------- w1_uniform_circle
@pytest.mark.parametrize("n", [1, 2, 3, 10, 64, 1000])
def test_equally_spaced_points_give_pi_over_2n(n):
    a = 0.37 + TWO_PI * np.arange(n) / n
    assert M.w1_uniform_circle(a) == pytest.approx(math.pi / (2 * n), rel=1e-12)
    assert M.equispaced_w1(n) == math.pi / (2 * n)


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (7, 2), (50, 3)])
def test_w1_uniform_against_a_fine_grid(n, seed):
    """|W₁(a, grid_N) − W₁(a, U)| ≤ W₁(grid_N, U) = π/(2N) (triangle inequality)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-7, 7, n)
    N = 100_000
    grid = TWO_PI * (np.arange(N) + 0.5) / N
    assert abs(M.w1_uniform_circle(a) - M.w1_circle(a, grid)) <= math.pi / (2 * N) + 1e-12
    assert M.w1_uniform_circle(a + 1.234) == pytest.approx(M.w1_uniform_circle(a), abs=1e-12)
    assert M.w1_uniform_circle(a + TWO_PI * 3) == pytest.approx(M.w1_uniform_circle(a), abs=1e-12)


def test_one_point_and_ties():
    assert M.w1_uniform_circle([2.0]) == pytest.approx(math.pi / 2, rel=1e-14)
    assert M.w1_uniform_circle([1.0] * 5) == pytest.approx(math.pi / 2, rel=1e-14)
    assert M.w1_uniform_circle([0.0, math.pi]) == pytest.approx(math.pi / 4, rel=1e-14)


# --------------------------------------------------------------------------- sampling error
def test_fixed_shift_mean_closed_forms_and_limit():
    assert M.fixed_shift_mean(1) == pytest.approx(math.pi / 2, rel=1e-15)  # E|U − ½| = 1/4
    assert M.fixed_shift_mean(2) == pytest.approx(TWO_PI / 6, rel=1e-15)  # triangular: 1/6
    # both branches (exact rational / Fourier integral) agree where they meet
    old = M.EXACT_IRWIN_HALL_MAX
    exact = [M.fixed_shift_mean(n) for n in (300, 1000)]
    try:
        M.EXACT_IRWIN_HALL_MAX = 0
        M_circle._abs_mean_uniform.cache_clear()
        integral = [M.fixed_shift_mean(n) for n in (300, 1000)]
    finally:
        M.EXACT_IRWIN_HALL_MAX = old
        M_circle._abs_mean_uniform.cache_clear()
    np.testing.assert_allclose(integral, exact, rtol=1e-9)
    lim = math.sqrt(TWO_PI / 3)
    assert math.sqrt(1e8) * M.fixed_shift_mean(10**8) == pytest.approx(lim, rel=1e-6)


def test_fixed_shift_mean_against_monte_carlo():
    """2π∫|G_n − mean G_n| computed on a grid from samples agrees with the exact expectation."""
    rng = np.random.default_rng(11)
    n, trials, N = 6, 3000, 2000
    s = (np.arange(N) + 0.5) / N
    u = rng.random((trials, n))
    G = (u[:, :, None] <= s[None, None, :]).mean(axis=1) - s[None, :]
    vals = TWO_PI * np.abs(G - G.mean(axis=1, keepdims=True)).mean(axis=1)
    se = vals.std(ddof=1) / math.sqrt(trials)
    assert abs(vals.mean() - M.fixed_shift_mean(n)) < 4 * se + 1e-3


def test_sampling_error_rate_and_bound():
    ns = np.array([16, 64, 256, 1024])
    res = [M.sampling_error(n, 400, seed=1 + k) for k, n in enumerate(ns)]
    mean = np.array([r[0] for r in res])
    se = np.array([r[1] for r in res])
    slope = np.polyfit(np.log(ns), np.log(mean), 1)[0]
    assert abs(slope + 0.5) < 0.05, slope
    for n, m, s in zip(ns, mean, se):
        up = M.fixed_shift_mean(n)
        assert m <= up + 3 * s  # the median shift is optimal
        assert m >= 0.9 * up - 3 * s  # ... and not far below the mean shift
        assert m > M.equispaced_w1(n)  # iid points are worse than equal spacing
    # reproducible, and the standard error shrinks like 1/sqrt(trials)
    assert M.sampling_error(64, 50, 3) == M.sampling_error(64, 50, 3)


# --------------------------------------------------------------------------- many heads
def test_expected_norm_closed_forms():
    lam = np.array([[2.0, 0.0, 0.0], [2.0, 0.5, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    want = [
        math.sqrt(2 * 2 / math.pi),  # half-normal
        math.sqrt(2 / math.pi) * math.sqrt(2) * ellipe(1 - 0.25),  # 2-D: elliptic integral
        2 * math.sqrt(2 / math.pi),  # chi with 3 dof
        0.0,
    ]
    np.testing.assert_allclose(M_heads._expected_norm(lam), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("beta", [4.9, 5.0, 6.0])
def test_head_reference_up_to_the_hard_limit(beta):
    """The page's beta (slider max 5, hard limit 6) at its head panel's size: the quadrature's
    tolerance is relative to the head spread it serves, so seed 0 no longer stops the page."""
    th = M.head_error_theory(32, 3, beta, 0)
    assert th["quad_error"] < 1e-3 * th["bound"]  # far below the smallest error measured (~bound / 64)


@pytest.mark.parametrize("d,beta", [(2, 1.0), (3, 1.0), (3, 2.5)])
def test_head_mean_velocity_against_many_heads(d, beta):
    """F = E_A[softmax-weighted mean] at every token: compare with 2^16 sampled heads."""
    Z, _ = M_heads._head_tokens(8, d, 5)
    F, Sig, err = M.head_mean_velocity(Z, beta)
    assert err <= M.GH_RTOL * math.sqrt(np.trace(Sig))
    rng = np.random.default_rng(0)
    H = 2**16
    A = rng.standard_normal((H, d, d)) / math.sqrt(d)
    for i in (0, 5):
        S = beta * np.einsum("k,hkl,jl->hj", Z[i], A, Z)
        W = np.exp(S - S.max(axis=1, keepdims=True))
        U = (W @ Z) / W.sum(axis=1, keepdims=True)
        se = U.std(axis=0, ddof=1) / math.sqrt(H)
        assert np.all(np.abs(U.mean(axis=0) - F) < 5 * se + 1e-12), (U.mean(axis=0), F)
        np.testing.assert_allclose(np.cov(U.T), Sig, atol=0.02 * np.abs(Sig).max() + 1e-4)


def test_head_kernel_equals_numpy_reference():
    rng = np.random.default_rng(3)
    for n, d, beta in [(5, 2, 0.7), (32, 3, 2.0), (9, 4, 1.0)]:
        Z, _ = M_heads._head_tokens(n, d, 1)
        A = rng.standard_normal((17, d, d))
        a1, a2 = np.zeros((n, d)), np.zeros((n, d))
        M_heads._head_sum(Z, A, beta, a1)
        M_heads._head_sum_numpy(Z, A, beta, a2)
        np.testing.assert_allclose(a1, a2, rtol=1e-12, atol=1e-13)
    r1 = M.head_average_error(8, 4, 2, n=12)
    r2 = M.head_average_error(8, 4, 2, n=12, _reference=True)
    np.testing.assert_allclose(r1, r2, rtol=1e-12)


def test_head_error_rate_bound_and_asymptote():
    th = M.head_error_theory(32, 3, 1.0, 0)
    assert th["asymptote"] < th["bound"]
    Hs = np.array([4, 16, 64, 256])
    res = [M.head_average_error(H, 40, 0) for H in Hs]
    mean = np.array([r[0] for r in res])
    se = np.array([r[1] for r in res])
    slope = np.polyfit(np.log(Hs), np.log(mean), 1)[0]
    assert abs(slope + 0.5) < 0.06, slope
    assert np.all(mean <= th["bound"] / np.sqrt(Hs) + 3 * se)  # Jensen: exact for every H
    # large H: √H E e(H) → E‖N(0, Σ)‖ (CLT); at H = 256 within noise + 3 %
    assert abs(mean[-1] * 16 - th["asymptote"]) < 3 * se[-1] * 16 + 0.03 * th["asymptote"]


# --------------------------------------------------------------------------- stability
def test_initial_measure():
    th = np.linspace(0, TWO_PI, 20001)
    rho = M.initial_density(th)
    assert rho.min() > 0
    assert np.trapezoid(rho, th) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(np.gradient(M.initial_cdf(th), th)[1:-1], rho[1:-1], atol=1e-6)
    q = np.linspace(0, 1, 101)
    np.testing.assert_allclose(M.initial_cdf(M.initial_quantile(q)), q, atol=1e-14)


def test_stability_constant_formula():
    for beta, dt in [(1.0, 0.1), (0.3, 0.5), (2.0, 0.01)]:
        want = ((1 + beta) + (1 + 2 * beta) * math.exp(2 * beta)) / (1 - dt)
        assert M.stability_constant(beta, dt) == pytest.approx(want, rel=1e-15)


def _layer(theta, beta, dt):
    """One SA layer on the circle in angles: θ + arg(1 + Δ m(θ))."""
    x = np.subtract.outer(theta, theta)  # θ_i − θ_j
    W = np.exp(beta * np.cos(x))
    m = (W * np.exp(-1j * x)).sum(axis=1) / W.sum(axis=1)
    return theta + np.angle(1 + dt * m)


@pytest.mark.parametrize("beta,dt", [(0.5, 0.1), (1.0, 0.5), (3.0, 0.05)])
def test_one_layer_contracts_at_most_by_1_plus_dt_C(beta, dt):
    """The step the bound is built on, W₁⁺ ≤ (1 + ΔC) W₁, on random and adversarial pairs."""
    rng = np.random.default_rng(int(beta * 10))
    C = M.stability_constant(beta, dt)
    worst = 0.0
    for k in range(60):
        n = rng.integers(2, 30)
        nu = rng.vonmises(0, rng.uniform(0, 5), n)
        if k % 3 == 0:  # a small perturbation of the same measure
            mu = nu + rng.normal(0, 1e-3, n)
        elif k % 3 == 1:  # antipodal bulk with a stray atom: the softmax denominator is small
            mu = np.append(np.full(n - 1, math.pi), rng.normal(0, 0.1))
            nu = np.append(np.full(n - 1, math.pi), rng.normal(0, 0.1))
        else:
            mu = rng.vonmises(1, 1, rng.integers(2, 30))
        w0 = M.w1_circle(nu, mu)
        if w0 < 1e-12:
            continue
        ratio = M.w1_circle(_layer(nu, beta, dt), _layer(mu, beta, dt)) / w0
        worst = max(worst, ratio)
    assert worst <= 1 + dt * C


def test_layer_in_angles_is_the_attention_layer_map():
    rng = np.random.default_rng(2)
    th = rng.uniform(0, TWO_PI, 11)
    Z = simulate_reference(np.stack([np.cos(th), np.sin(th)], 1), 1.7, 0.3, 1)[-1]
    np.testing.assert_allclose(
        np.mod(np.arctan2(Z[:, 1], Z[:, 0]) - _layer(th, 1.7, 0.3) + 1, TWO_PI) - 1, 0, atol=1e-13
    )


@pytest.mark.parametrize(
    "n,beta,T,dt,seed", [(16, 1.0, 2.0, 0.1, 0), (40, 2.0, 1.5, 0.05, 1), (8, 0.3, 3.0, 0.2, 2), (64, 4.0, 1.0, 0.1, 3)]
)
def test_stability_bound_holds_and_matches_its_parts(n, beta, T, dt, seed):
    r = M.stability(n, beta, T, dt, seed, n_ref=256)
    t, w1, bound = r["t"], r["w1"], r["bound"]
    assert t[0] == 0 and t[-1] == pytest.approx(round(T / dt) * dt)
    assert np.all(w1 <= bound * (1 + 1e-12))
    assert bound[0] == pytest.approx(w1[0], rel=1e-12)
    np.testing.assert_allclose(r["log_bound"], r["C"] * t + math.log(w1[0]), rtol=1e-12)
    np.testing.assert_allclose(bound, np.minimum(np.exp(np.minimum(r["log_bound"], 2.0)), math.pi), rtol=1e-12)
    # the two systems: the sample from the seed and the quantile refinement, run by the engine
    rng = np.random.default_rng(seed)
    th0 = M.initial_quantile(rng.random(n))
    ref0 = M.initial_quantile((np.arange(256) + 0.5) / 256)
    assert w1[0] == pytest.approx(M.w1_circle(th0, ref0), rel=1e-12)
    k = r["layers"][-1]
    Z = simulate_reference(np.stack([np.cos(th0), np.sin(th0)], 1), beta, dt, k)[-1]
    np.testing.assert_allclose(
        np.sort(np.mod(np.arctan2(Z[:, 1], Z[:, 0]), TWO_PI)), np.sort(r["theta"][-1]), atol=1e-9
    )
    assert w1[-1] == pytest.approx(M.w1_circle(r["theta"][-1], r["theta_ref"][-1]), rel=1e-12)


def test_stability_reference_is_reused_and_is_the_engine_run():
    """The reference system depends on neither n nor seed: stability() keeps it (lru cache) and
    hands out copies; it is the engine's run of the quantile refinement, recorded like the tokens."""
    M_transport._reference_run.cache_clear()
    a = M.stability(12, 1.3, 2.1, 0.1, 0, n_ref=128, max_records=6)
    b = M.stability(30, 1.3, 2.1, 0.1, 5, n_ref=128, max_records=6)
    assert M_transport._reference_run.cache_info().hits == 1
    np.testing.assert_array_equal(a["theta_ref"], b["theta_ref"])
    np.testing.assert_array_equal(a["layers"], b["layers"])
    assert a["layers"][-1] == 21 and a["theta_ref"].shape == (a["layers"].size, 128)
    a["theta_ref"][:] = 0.0  # a caller's copy: the cache is untouched
    c = M.stability(12, 1.3, 2.1, 0.1, 0, n_ref=128, max_records=6)
    np.testing.assert_array_equal(c["theta_ref"], b["theta_ref"])
    np.testing.assert_array_equal(c["w1"], a["w1"])
    ref0 = M.initial_quantile((np.arange(128) + 0.5) / 128)
    Z = simulate_reference(np.stack([np.cos(ref0), np.sin(ref0)], 1), 1.3, 0.1, 21)
    for k, L in enumerate(b["layers"]):
        np.testing.assert_allclose(
            np.sort(b["theta_ref"][k]), np.sort(np.mod(np.arctan2(Z[L, :, 1], Z[L, :, 0]), TWO_PI)), atol=1e-9
        )


# --------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize(
    "call,word",
    [
        (lambda: M.w1_circle([], [1.0]), "at least one"),
        (lambda: M.w1_circle([np.nan], [1.0]), "finite"),
        (lambda: M.w1_circle([1.0], [np.inf]), "finite"),
        (lambda: M.w1_circle([1 + 1j], [1.0]), "complex"),
        (lambda: M.w1_circle([[1.0, 2.0]], [1.0]), "1-D"),
        (lambda: M.w1_circle([1e12], [1.0]), "modulo"),
        (lambda: M.w1_circle(np.zeros(10), np.zeros(10), max_work=5), "max_work"),
        (lambda: M.w1_uniform_circle("abc"), "real"),
        (lambda: M.sampling_error(0, 10, 0), "n must be"),
        (lambda: M.sampling_error(10, 1, 0), "trials"),
        (lambda: M.sampling_error(10**6, 10**3, 0), "max_work"),
        (lambda: M.sampling_error(True, 10, 0), "integer"),
        (lambda: M.head_average_error(0, 4, 0), "H must be"),
        (lambda: M.head_average_error(4, 4, 0, d=7), "d must be"),
        (lambda: M.head_average_error(4, 4, 0, beta=-1.0), "beta"),
        (lambda: M.head_average_error(4, 4, 0, beta=15.0), "too large for the quadrature"),
        (lambda: M.head_average_error(10**6, 100, 0), "max_work"),
        (lambda: M.stability(300, 1.0, 1.0, 0.1, 0, n_ref=100), "n_ref"),
        (lambda: M.stability(10, 1.0, 1.0, 1.0, 0), "dt must be <"),
        (lambda: M.stability(10, 0.0, 1.0, 0.1, 0), "beta must be >"),
        (lambda: M.stability(10, 1.0, float("nan"), 0.1, 0), "T must be finite"),
        (lambda: M.stability(10, 1.0, 1e3, 0.001, 0), "max_work"),
        (lambda: M.stability_constant(400.0, 0.1), "beta must be <= 300"),
        (lambda: M.fixed_shift_mean(0), "n must be"),
    ],
)
def test_invalid_input_raises_with_reason(call, word):
    with pytest.raises(ValueError, match=word):
        call()
