"""sim.coordinates against docs/constructions.md (coordinates): closed forms, conservation, limits, bad input."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from sim import coordinates as C

CASES = [
    (0.3, 0.3, 2.0),
    (1.5, -0.2, 1.0),
    (0.1, 0.9, -2.0),
    (2.0, 0.5, 0.0),
    (-1.0, 0.4, 3.0),
    (0.0, 1.2, 0.7),
    (0.05, 0.05, 4.0),
]
T = np.linspace(0.0, 6.0, 61)


def _ode_ab(a0, b0, y, t):
    """Plain reference: Euclidean gradient flow in (a, b) by DOP853 at tight tolerance."""
    f = lambda _, z: [-(z[0] * z[1] - y) * z[1], -(z[0] * z[1] - y) * z[0]]  # noqa: E731
    sol = solve_ivp(f, (0.0, t[-1]), [a0, b0], t_eval=t, method="DOP853", rtol=1e-13, atol=1e-15)
    return sol.y.T


@pytest.mark.parametrize("a0,b0,y", CASES)
def test_euclidean_flow_matches_the_ode(a0, b0, y):
    ab = C.ab_flow(a0, b0, y, T)
    ref = _ode_ab(a0, b0, y, T)
    scale = max(1.0, abs(y), abs(a0 * b0))
    np.testing.assert_allclose(ab, ref, rtol=1e-8, atol=1e-10 * scale)
    th = C.theta_flow(a0, b0, y, T)
    np.testing.assert_allclose(th, ref[:, 0] * ref[:, 1], rtol=1e-8, atol=1e-10 * scale)
    np.testing.assert_allclose(th, ab[:, 0] * ab[:, 1], rtol=1e-12, atol=1e-14 * scale)


@pytest.mark.parametrize("a0,b0,y", CASES)
def test_theta_obeys_its_own_ode_and_a2_minus_b2_is_conserved(a0, b0, y):
    ab = C.ab_flow(a0, b0, y, T)
    c = a0 * a0 - b0 * b0
    np.testing.assert_allclose(ab[:, 0] ** 2 - ab[:, 1] ** 2, c, atol=1e-12 * max(1, abs(a0 * a0 + b0 * b0)))
    # theta' = -sqrt(c^2 + 4 theta^2)(theta - y), checked by central differences
    h = 1e-5
    tt = np.linspace(0.5, 5.0, 10)
    d = (C.theta_flow(a0, b0, y, tt + h) - C.theta_flow(a0, b0, y, tt - h)) / (2 * h)
    th = C.theta_flow(a0, b0, y, tt)
    np.testing.assert_allclose(d, -np.sqrt(c * c + 4 * th * th) * (th - y), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a0,y", [(0.3, 2.0), (1.0, 0.5), (0.1, 1.0), (2.0, 3.0)])
def test_equal_start_is_logistic(a0, y):
    th0 = a0 * a0
    want = y / (1.0 + (y / th0 - 1.0) * np.exp(-2.0 * y * T))
    np.testing.assert_allclose(C.theta_flow(a0, a0, y, T), want, rtol=1e-12)


@pytest.mark.parametrize("a0,b0,y", CASES)
def test_pullback_is_exponential_relaxation(a0, b0, y):
    th = C.theta_flow(a0, b0, y, T, metric="pullback")
    np.testing.assert_allclose(th, y + (a0 * b0 - y) * np.exp(-T), rtol=1e-14, atol=1e-15)
    # and it is a different clock from the Euclidean flow unless a0^2 + b0^2 = 1 all along
    if abs(a0 * b0 - y) > 0.1:
        assert np.max(np.abs(th - C.theta_flow(a0, b0, y, T))) > 1e-3


def test_fixed_points_and_saddle():
    assert np.all(C.theta_flow(0.0, 0.0, 2.0, T) == 0.0)  # a = b = 0 is a saddle: stays
    np.testing.assert_allclose(C.theta_flow(1.0, 2.0, 2.0, T), 2.0, rtol=1e-15)  # at the target
    np.testing.assert_allclose(
        C.theta_flow(0.5, 0.5, 0.0, np.array([0.0, 2.0])), [0.25, 0.25 / (1 + 0.25 * 2 * 2)], rtol=1e-14
    )  # R = 0 case


@pytest.mark.parametrize("metric", C.METRICS)
@pytest.mark.parametrize("a0,b0,y", CASES[:4])
def test_gradient_steps_converge_at_first_order(metric, a0, b0, y):
    t_end = 2.0
    errs = []
    for dt in (0.02, 0.01, 0.005):
        steps = int(round(t_end / dt))
        it = C.gradient_steps(a0, b0, y, dt, steps, metric)
        np.testing.assert_allclose(it[:, 2], it[:, 0] * it[:, 1])
        exact = C.theta_flow(a0, b0, y, dt * np.arange(steps + 1), metric)
        errs.append(np.max(np.abs(it[:, 2] - exact)))
    assert errs[0] > 0
    for e1, e2 in zip(errs, errs[1:]):
        assert 1.7 < e1 / e2 < 2.3, errs


def test_euclidean_steps_keep_a2_minus_b2_to_second_order():
    it = C.gradient_steps(1.5, -0.2, 1.0, 0.001, 2000)
    c = it[:, 0] ** 2 - it[:, 1] ** 2
    assert np.max(np.abs(c - c[0])) < 1e-2 * 0.001 * 2000 * 0.1


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50, 400])
def test_levy_area_is_pi_for_every_n(n):
    for points in (64 * n + 1, 1024 * n + 1):
        N = points - 1
        polygon = N / (2 * n) * math.sin(2 * math.pi * n / N)  # exact for the sampled polygon
        assert C.levy_area(n, points) == pytest.approx(polygon, rel=1e-11)
    assert C.levy_area(n) == pytest.approx(math.pi, rel=1e-5)
    # the path itself shrinks: sup |x_n| = n^{-1/2}
    x = C.loop(n, np.linspace(0, 2 * math.pi, 1001))
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1 / math.sqrt(n), rtol=1e-14)


def _direct(n, A, B, y0):
    """Plain reference without the period trick: the whole interval [0, 2π] in s."""
    f = lambda s, z: math.sqrt(n) * (-math.sin(n * s) * A + math.cos(n * s) * B) @ z  # noqa: E731
    sol = solve_ivp(f, (0.0, 2 * math.pi), y0, method="DOP853", rtol=1e-13, atol=1e-14)
    return sol.y[:, -1]


RNG = np.random.default_rng(7)
A3, B3, Y3 = RNG.normal(size=(3, 3)) * 0.6, RNG.normal(size=(3, 3)) * 0.6, RNG.normal(size=3)
A_ROT, B_REF = 0.5 * np.array([[0.0, 1.0], [-1.0, 0.0]]), 0.5 * np.array([[1.0, 0.0], [0.0, -1.0]])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("A,B,y0", [(A3, B3, Y3), (A_ROT, B_REF, np.array([1.0, 0.5]))])
def test_driven_endpoint_matches_a_direct_solve(n, A, B, y0):
    got = C.driven_endpoint(n, A, B, y0)
    ref = _direct(n, A, B, y0)
    assert np.linalg.norm(got - ref) <= 1e-8 * np.linalg.norm(ref)


@pytest.mark.parametrize("n", [1, 3, 10, 1000])
def test_commuting_matrices_return_to_y0(n):
    M = RNG.normal(size=(3, 3))
    A, B = M + M @ M, 2 * M - 0.3 * np.eye(3)  # polynomials in M commute
    got = C.driven_endpoint(n, A, B, Y3)
    assert np.linalg.norm(got - Y3) <= 1e-8 * np.linalg.norm(Y3)
    np.testing.assert_allclose(C.area_limit(A, B, Y3), Y3, rtol=1e-12, atol=1e-13)


def test_area_limit_closed_form():
    E12, E21 = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    # [B, A] = E21 E12 - E12 E21 = diag(-1, 1)
    np.testing.assert_allclose(
        C.area_limit(E12, E21, [1.0, 2.0]), [math.exp(-math.pi), 2 * math.exp(math.pi)], rtol=1e-13
    )
    np.testing.assert_allclose(C.area_limit(A3, B3, Y3), expm(math.pi * (B3 @ A3 - A3 @ B3)) @ Y3, rtol=1e-13)


@pytest.mark.parametrize("A,B,y0", [(A_ROT, B_REF, np.array([1.0, 0.5])), (A3, B3, Y3)])
def test_endpoint_tends_to_the_area_limit_like_n_to_minus_half(A, B, y0):
    L = C.area_limit(A, B, y0)
    ns = np.array([256, 1024, 4096, 16384])
    err = np.array([np.linalg.norm(C.driven_endpoint(int(n), A, B, y0) - L) for n in ns])
    slope = np.polyfit(np.log(ns), np.log(err), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.05)
    # and it does NOT tend to y0, the answer on the limit path (the zero loop)
    far = np.linalg.norm(C.driven_endpoint(16384, A, B, y0) - y0)
    assert far > 0.5 * np.linalg.norm(L - y0) > 0


BAD = [float("nan"), float("inf"), 1e300, 1j, "1", None, True]


@pytest.mark.parametrize("bad", BAD)
def test_bad_scalars_raise(bad):
    for fn in (
        lambda: C.theta_flow(bad, 0.1, 1.0, T),
        lambda: C.theta_flow(0.1, 0.1, bad, T),
        lambda: C.ab_flow(0.1, bad, 1.0, T),
        lambda: C.levy_area(bad),
        lambda: C.driven_endpoint(bad, A_ROT, B_REF, [1.0, 0.0]),
        lambda: C.gradient_steps(0.1, 0.1, 1.0, bad, 10),
    ):
        with pytest.raises(ValueError):
            fn()


def test_bad_arrays_and_ranges_raise():
    with pytest.raises(ValueError, match="t must be >= 0"):
        C.theta_flow(0.1, 0.1, 1.0, [-1.0, 0.0])
    with pytest.raises(ValueError, match="t must"):
        C.theta_flow(0.1, 0.1, 1.0, [[0.0]])
    with pytest.raises(ValueError, match="t must contain only finite"):
        C.theta_flow(0.1, 0.1, 1.0, [0.0, np.nan])
    with pytest.raises(ValueError, match="too large"):
        C.theta_flow(0.1, 0.1, 1.0, np.zeros(11), max_work=10)
    with pytest.raises(ValueError, match="metric"):
        C.theta_flow(0.1, 0.1, 1.0, T, metric="fisher")
    with pytest.raises(ValueError, match="points"):
        C.levy_area(5, points=10)  # fewer than two segments per turn
    with pytest.raises(ValueError, match="points"):
        C.levy_area(5, points=10**9)  # beyond the work bound
    with pytest.raises(ValueError, match="n must be >= 1"):
        C.levy_area(0)
    with pytest.raises(ValueError, match="B must have shape"):
        C.driven_endpoint(3, A_ROT, np.eye(3), [1.0, 0.0])
    with pytest.raises(ValueError, match="A must have entries"):
        C.area_limit(1e4 * A_ROT, B_REF, [1.0, 0.0])
    with pytest.raises(ValueError, match="y0"):
        C.area_limit(A_ROT, B_REF, [])
    with pytest.raises(ValueError, match="A must contain only finite"):
        C.driven_endpoint(3, [[np.inf, 0], [0, 0]], B_REF, [1.0, 0.0])
    with pytest.raises(ValueError, match="steps"):
        C.gradient_steps(0.1, 0.1, 1.0, 0.1, 10**9)
    with pytest.raises(ValueError, match="both be 0"):
        C.gradient_steps(0.0, 0.0, 1.0, 0.1, 10, "pullback")
    with pytest.raises(ValueError, match="diverged"):
        C.gradient_steps(30.0, 30.0, 1.0, 1.0, 50)


def _magnus4(n, A, B, y0, steps=200):
    """Independent reference: 4th-order (Gauss–Legendre) Magnus steps over one turn, then the n-th power."""
    eps, h = 1 / math.sqrt(n), 2 * math.pi / steps
    c1, c2 = 0.5 - math.sqrt(3) / 6, 0.5 + math.sqrt(3) / 6
    P = np.eye(A.shape[0])
    for k in range(steps):
        A1 = eps * (-math.sin((k + c1) * h) * A + math.cos((k + c1) * h) * B)
        A2 = eps * (-math.sin((k + c2) * h) * A + math.cos((k + c2) * h) * B)
        P = expm(h / 2 * (A1 + A2) + math.sqrt(3) / 12 * h * h * (A2 @ A1 - A1 @ A2)) @ P
    return np.linalg.matrix_power(P, n) @ y0


@pytest.mark.parametrize("n", [4096, 100_000])
def test_driven_endpoint_stays_accurate_for_many_turns(n):
    """One-turn errors add up over n turns: still within 1e-8 (the reference itself is good to ~2e-9)."""
    got, ref = C.driven_endpoint(n, A3, B3, Y3), _magnus4(n, A3, B3, Y3)
    assert np.linalg.norm(got - ref) <= 1e-8 * np.linalg.norm(ref)
