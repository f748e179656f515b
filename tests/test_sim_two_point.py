"""sim.two_point against closed forms, the 2-particle layer map and invariants."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from sim import two_point as tp
from sim.attention import simulate, simulate_reference


def _sa_rate(th, beta):
    return -math.sin(2 * th) / (1 + math.exp(beta * (1 - math.cos(2 * th))))


def _usa_rate(th, beta):
    return -0.5 * math.exp(beta * math.cos(2 * th)) * math.sin(2 * th)


@pytest.mark.parametrize("flow,rate", [("SA", _sa_rate), ("USA", _usa_rate)])
@pytest.mark.parametrize("beta,theta0", [(1.0, 1.0), (0.3, 0.4), (3.7, 1.3), (0.0, 0.9)])
def test_half_angle_inverts_the_separable_integral(flow, rate, beta, theta0):
    """τ(ϑ) = ∫_ϑ^ϑ0 dφ / |rate(φ)| is the exact inverse of the solution (independent of the ODE solver)."""
    taus = np.array([0.0, 0.3, 1.1, 2.5])
    th = tp.half_angle(beta, theta0, taus, flow)
    assert th[0] == theta0
    for tau, t_ in zip(taus[1:], th[1:]):
        back, _ = quad(lambda p: -1.0 / rate(p, beta), t_, theta0, epsabs=1e-13, epsrel=1e-13)
        assert abs(back - tau) < 1e-8 * max(1.0, tau) / abs(rate(t_, beta)) + 1e-9


def test_seed_example_values_and_ordering():
    """β = 1, ϑ0 = 1 rad: both collapse, USA faster, monotone; unsorted taus are handled."""
    taus = np.array([4.0, 0.0, 1.0, 2.0])
    sa, usa = tp.half_angle(1, 1, taus), tp.half_angle(1, 1, taus, "USA")
    order = np.argsort(taus)
    assert np.all(np.diff(sa[order]) < 0) and np.all(np.diff(usa[order]) < 0)
    assert np.all(usa[taus > 0] < sa[taus > 0])
    # Small-angle regime: SA rate ≈ -2ϑ/2 = -ϑ for small ϑ -> ϑ ~ C e^{-τ}; check the log-slope late.
    late = tp.half_angle(1, 1, [20.0, 21.0])
    assert abs(math.log(late[1] / late[0]) + 1.0) < 1e-3


@pytest.mark.parametrize(
    "flow,beta,theta0,horizon",
    [("SA", 1.0, 1.0, 3.0), ("SA", 2.5, 0.6, 3.0), ("USA", 1.0, 1.0, 1.5), ("USA", 2.5, 0.6, 0.3)],
)
def test_layer_map_converges_first_order_to_ode(flow, beta, theta0, horizon):
    """Horizons end well before ϑ reaches rounding level (USA collapses like e^{-e^β τ})."""
    exact = tp.half_angle(beta, theta0, [horizon], flow)[0]
    errs = []
    for dt in (0.02, 0.01, 0.005):
        traj = simulate(tp.initial_pair(theta0), beta, dt, int(round(horizon / dt)), flow=flow)
        errs.append(abs(tp.half_angle_of(traj)[-1] - exact))
    assert errs[2] < errs[1] < errs[0]
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all(np.abs(ratios - 2.0) < 0.15), ratios  # slope 1
    slope = np.polyfit(np.log([0.02, 0.01, 0.005]), np.log(errs), 1)[0]
    assert abs(slope - 1) < 0.1


def test_discretisation_error_slope():
    errs = tp.discretisation_error(1.0, 1.0, 5.0, [0.2, 0.1, 0.05, 0.025])
    slope = np.polyfit(np.log([0.2, 0.1, 0.05, 0.025]), np.log(errs), 1)[0]
    assert abs(slope - 1) < 0.1


@pytest.mark.parametrize("beta,theta0", [(1.0, 1.0), (0.2, 1.4), (4.0, 0.3)])
def test_time_change_maps_usa_onto_sa(beta, theta0):
    tu = np.linspace(0, 2.0, 50)
    ts = tp.usa_on_sa_clock(beta, theta0, tu)
    assert np.all(np.diff(ts) > 0) and np.all(ts >= tu - 1e-12)  # Z/n >= 1
    gap = np.abs(tp.half_angle(beta, theta0, tu, "USA") - tp.half_angle(beta, theta0, ts, "SA"))
    assert gap.max() < 1e-8


def _clock_by_ode(beta, theta0, tu):
    """The SA clock as a second component of the USA ODE (the former implementation)."""
    from scipy.integrate import solve_ivp

    def f(_, y):
        th = math.exp(y[0])
        s2 = math.sin(2 * th) / th if th > 1e-150 else 2.0
        return [
            -0.5 * math.exp(beta * math.cos(2 * th)) * s2,
            (math.exp(beta) + math.exp(beta * math.cos(2 * th))) / 2.0,
        ]

    sol = solve_ivp(f, (0.0, tu.max()), [math.log(theta0), 0.0], method="DOP853", t_eval=tu, rtol=1e-12, atol=1e-14)
    return sol.y[1]


@pytest.mark.parametrize("beta,theta0", [(0.0, 1.0), (0.2, 1.4), (1.0, 1.0), (4.0, 0.3), (30.0, 0.05), (3.3, 1.0)])
def test_usa_clock_quadrature_is_the_ode_clock(beta, theta0):
    tu = np.linspace(0.0, 5.0, 400)
    got = tp.usa_on_sa_clock(beta, theta0, tu)
    np.testing.assert_allclose(got, _clock_by_ode(beta, theta0, tu), rtol=1e-10, atol=0)
    perm = np.random.default_rng(0).permutation(tu.size)  # any order, a single point, none
    np.testing.assert_allclose(tp.usa_on_sa_clock(beta, theta0, tu[perm]), got[perm], rtol=1e-14)
    assert tp.usa_on_sa_clock(beta, theta0, [0.0])[0] == 0.0
    assert tp.usa_on_sa_clock(beta, theta0, []).shape == (0,)


def test_energy_closed_form_and_reference():
    rng = np.random.default_rng(3)
    for beta in (0.5, 1.0, 3.0):
        for th in (0.1, 0.7, 1.4):
            Z = tp.initial_pair(th)
            assert tp.energy(Z, beta, None) == pytest.approx(tp.energy_two_point(beta, th), rel=1e-13)
        Z = rng.normal(size=(7, 4))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        A = rng.normal(size=(4, 4))
        ref = -sum(math.exp(beta * Z[i] @ A @ Z[j]) for i in range(7) for j in range(7)) / (2 * beta * 49)
        assert tp.energy(Z, beta, A) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize(
    "beta,n,d,with_A", [(1.0, 2, 3, False), (3.3, 2, 3, False), (0.7, 7, 4, True), (20.0, 12, 3, True)]
)
def test_energies_are_energy_of_each_configuration(beta, n, d, with_A):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(d, d)) if with_A else None
    traj = simulate(rng.normal(size=(n, d)), beta, 0.05, 30, A=A, record_every=3)
    E = tp.energies(traj, beta, A)
    assert E.shape == (traj.shape[0],)
    np.testing.assert_allclose(E, [tp.energy(Z, beta, A) for Z in traj], rtol=1e-13, atol=0)
    assert tp.energies(traj[:0], beta, A).shape == (0,)


def test_energies_invalid_input():
    Z = np.ones((4, 2, 3)) / math.sqrt(3)
    for call, match in (
        (lambda: tp.energies(Z[0], 1.0), "traj"),
        (lambda: tp.energies(Z, 0.0), "beta"),
        (lambda: tp.energies(Z * np.nan, 1.0), "traj"),
        (lambda: tp.energies(Z, 1e4), "beta"),
        (lambda: tp.energies(Z, 1.0, np.eye(2)), "A"),
        (lambda: tp.energies(Z, 1.0, max_work=10), "max_work"),
    ):
        with pytest.raises(ValueError, match=match):
            call()


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_energy_non_increasing_along_layer_map(flow):
    """A symmetric, V = A: E decreases along the discrete flow for a small step (random config)."""
    rng = np.random.default_rng(11)
    Z0 = rng.normal(size=(12, 3))
    B = rng.normal(size=(3, 3))
    A = 0.5 * (B + B.T) * 0.5
    traj = simulate(Z0, 1.5, 0.01, 300, A=A, V=A, flow=flow)
    E = np.array([tp.energy(Z, 1.5, A) for Z in traj])
    assert np.all(np.diff(E) <= 1e-12)
    assert E[-1] < E[0]
    assert np.allclose(np.linalg.norm(traj, axis=-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("n,rho0,beta", [(3, 0.0, 1.0), (8, 0.2, 2.0), (5, -0.2, 0.5)])
def test_simplex_reduction(n, rho0, beta):
    P = tp.simplex_points(n, rho0)
    G = P @ P.T
    assert np.allclose(np.diag(G), 1) and np.allclose(G[~np.eye(n, dtype=bool)], rho0)
    dt, steps = 1e-3, 1500
    traj = simulate_reference(P, beta, dt, steps)
    Gs = traj[-1] @ traj[-1].T
    off = Gs[~np.eye(n, dtype=bool)]
    assert off.std() < 1e-10  # stays equiangular
    exact = tp.simplex_rho(beta, n, rho0, [dt * steps])[0]
    assert abs(off.mean() - exact) < 5 * dt  # first-order layer map


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: tp.half_angle(float("nan"), 1, [1]), "beta"),
        (lambda: tp.half_angle(1, 0.0, [1]), "theta0"),
        (lambda: tp.half_angle(1, 2.0, [1]), "theta0"),
        (lambda: tp.half_angle(1, 1, [-1]), "taus"),
        (lambda: tp.half_angle(1, 1, [np.inf]), "taus"),
        (lambda: tp.half_angle(1, 1, [1], flow="XX"), "flow"),
        (lambda: tp.half_angle(1e9, 1, [1]), "beta"),
        (lambda: tp.energy([[1.0, 0.0]], 0.0, None), "beta"),
        (lambda: tp.energy([[np.nan, 0.0]], 1.0, None), "Z"),
        (lambda: tp.energy([[1.0, 0.0]], 1.0, np.eye(3)), "A"),
        (lambda: tp.simplex_rho(1, 4, -0.5, [1]), "rho0"),
    ],
)
def test_bad_input_names_the_argument(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()


def test_energy_overflow_raises_not_minus_inf():
    """Rule: A number returned is finite and right, or a ValueError says why."""
    Z = tp.initial_pair(0.5)
    with pytest.raises(ValueError, match="beta too large"):
        tp.energy(Z, 1e4, None)
    with pytest.raises(ValueError, match="beta too large"):
        tp.energy(Z, 1e308, 1e10 * np.eye(3))
    # just inside the range: e^{700} / (2 beta n^2)
    assert tp.energy(Z, 700.0, None) == pytest.approx(
        -(math.exp(700.0) + math.exp(700.0 * math.cos(1.0))) * 2 / (2 * 700.0 * 4), rel=1e-12
    )
    with pytest.raises(ValueError, match="max_work"):
        tp.energy(np.ones((20, 3)), 1.0, None, max_work=399)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_stiff_collapse_is_cheap_positive_and_accurate(flow):
    """β = 10: near the axis the USA rate is ~e^β; in ϑ an explicit solver needed ~1e5 steps
    (4.4 s) and returned ϑ < 0. The log-ϑ form must stay positive, fast and accurate."""
    import time

    from scipy.integrate import solve_ivp

    taus = np.linspace(0, 20, 50)
    t0 = time.process_time()
    th = tp.half_angle(10.0, 0.05, taus, flow)
    assert time.process_time() - t0 < 2.5  # CPU seconds (not wall: other jobs may share the cores)
    assert np.all(th >= 0) and np.all(np.diff(th) <= 0)  # USA underflows to exactly 0, never below
    rate = _sa_rate if flow == "SA" else _usa_rate
    tau = 2.0 if flow == "SA" else 0.01  # USA: ϑ ~ 0.05·e^{-e^β τ}, representable only for small τ
    # The reference integrates y = log ϑ, y' = rate(e^y) / e^y with an explicit 8th-order solver:
    # in log ϑ the collapse is not stiff (y' -> -e^β near the axis), ~300 rate calls. (Radau on ϑ
    # itself cost ~35 s of CPU for USA and agreed only to 2e-10.)
    sol = solve_ivp(
        lambda s, y: [rate(math.exp(y[0]), 10.0) / math.exp(y[0])],
        (0, tau),
        [math.log(0.05)],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
    )
    ref = math.exp(sol.y[0, -1])
    assert ref > 1e-200
    # the documented accuracy of half_angle
    assert tp.half_angle(10.0, 0.05, [tau], flow)[0] == pytest.approx(ref, rel=1e-8)


# ----------------------------------------------------------------------------- from the numerical review
def _pair_map_error(beta, theta0, horizon, dt, flow):
    """Independent computation of discretisation_error for one Δ: the symmetric pair's layer map
    reduced to its half-angle by hand, z_{1,2} = (cos θ, ±sin θ), A = V = I:
    y_1 = z_1 + Δ(w_11 z_1 + w_12 z_2) = ((1 + Δ(w_11 + w_12)) cos θ, (1 + Δ(w_11 - w_12)) sin θ),
    w_1j = e^{β<z_1,z_j>} / (e^β + e^{β cos 2θ}) (SA) or / 2 (USA); θ' = atan2(y_12, y_11).
    The exact θ(τ) from solve_ivp on the half-angle ODE in θ itself (not log θ)."""
    from scipy.integrate import solve_ivp

    K = max(1, int(round(horizon / dt)))
    h = horizon / K
    th = [theta0]
    for _ in range(K):
        t = th[-1]
        e_self, e_other = math.exp(beta), math.exp(beta * math.cos(2 * t))
        norm = e_self + e_other if flow == "SA" else 2.0
        w11, w12 = e_self / norm, e_other / norm
        th.append(math.atan2((1 + h * (w11 - w12)) * math.sin(t), (1 + h * (w11 + w12)) * math.cos(t)))
    rate = _sa_rate if flow == "SA" else _usa_rate
    tau = h * np.arange(K + 1)
    sol = solve_ivp(
        lambda _, y: [rate(y[0], beta)], (0, horizon), [theta0], method="DOP853", t_eval=tau, rtol=1e-13, atol=1e-15
    )
    return float(np.max(np.abs(np.array(th) - sol.y[0])))


@pytest.mark.parametrize(
    "flow,beta,theta0,horizon,dts",
    [
        ("SA", 1.0, 1.0, 5.0, [0.5, 0.2, 0.1, 0.05]),
        ("SA", 3.0, 0.4, 2.0, [0.3, 0.07]),
        ("USA", 1.0, 1.0, 1.5, [0.25, 0.1, 0.03]),
        ("USA", 0.2, 1.3, 4.0, [0.4, 0.13]),
    ],
)
def test_discretisation_error_values_match_independent_computation(flow, beta, theta0, horizon, dts):
    """Values, not just the slope: a layer map shifted by one layer (errors ~50 % off) fails."""
    got = tp.discretisation_error(beta, theta0, horizon, dts, flow)
    expect = [_pair_map_error(beta, theta0, horizon, dt, flow) for dt in dts]
    np.testing.assert_allclose(got, expect, rtol=1e-7)


@pytest.mark.parametrize(
    "flow,beta,theta0,horizon,dt",
    [
        ("USA", 10.0, 0.05, 5.0, 0.01 / 16),  # K = 8000: the old sampling kept every 4th layer
        ("USA", 8.0, 0.3, 10.0, 0.02 / 8),  # K = 4000, the error peaks in the first layers
        ("SA", 3.0, 1.0, 5.0, 0.1 / 16),  # K = 800 (no thinning then either): SA too
    ],
)
def test_discretisation_error_is_the_largest_over_every_layer(flow, beta, theta0, horizon, dt):
    """With K > 2000 layers the error was taken at every ceil(K/2000)-th layer only and
    missed the USA peak in the first layers (β = 10, ϑ0 = 0.05: local slopes 4.3 and 6.2 where
    the dense errors give -0.49 and -0.63). Now every layer, against the hand-reduced map."""
    got = tp.discretisation_error(beta, theta0, horizon, [dt], flow)[0]
    assert got == pytest.approx(_pair_map_error(beta, theta0, horizon, dt, flow), rel=1e-6)


def test_discretisation_error_chunks_join_without_a_seam(monkeypatch):
    """The layers run CHUNK at a time: a chunk of 7 layers gives the one-call result."""
    whole = tp.discretisation_error(2.0, 0.7, 3.0, [0.05, 0.013], "USA")
    monkeypatch.setattr(tp, "CHUNK", 7)
    np.testing.assert_allclose(tp.discretisation_error(2.0, 0.7, 3.0, [0.05, 0.013], "USA"), whole, rtol=1e-12)


def test_discretisation_error_bounded_before_work():
    """discretisation_error(1, 1, 1e4, [1e-3]) ran 1e7 layers (7.5 s): now refused at once,
    unless the caller raises max_work."""
    import time

    t0 = time.process_time()
    with pytest.raises(ValueError, match="max_work"):
        tp.discretisation_error(1, 1, 1e4, [1e-3])
    assert time.process_time() - t0 < 0.5  # CPU seconds; the old path took 7.5 s
    small = tp.discretisation_error(1.0, 1.0, 5.0, [0.1], max_work=50)
    assert small[0] == tp.discretisation_error(1.0, 1.0, 5.0, [0.1])[0]
    with pytest.raises(ValueError, match="max_work"):
        tp.discretisation_error(1.0, 1.0, 5.0, [0.1], max_work=49)
    # the page's hard limits (horizon <= 100, dt >= 0.001 halved 4 times) stay inside the default
    assert 2 * sum(round(100 / (0.001 / 2**k)) for k in range(5)) / 2 <= tp.MAX_LAYERS


def test_energy_nonsymmetric_A_by_hand():
    """E = -1/(2βn²) Σ_ij exp(β z_i^T A z_j), written out for two tokens and a non-symmetric A.
    (The double sum is unchanged by A -> A^T: the i,j relabelling; so is the value below.)"""
    z1, z2 = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    A = np.array([[0.5, 2.0], [-1.0, 0.3]])
    beta = 0.9
    s11 = 0.5  # z1^T A z1 = A11
    s12 = 1.0 * (0.5 * 0.6 + 2.0 * 0.8)  # z1^T (A z2), A z2 = (0.3 + 1.6, -0.6 + 0.24)
    s21 = 0.6 * 0.5 + 0.8 * (-1.0)  # z2^T (A z1), A z1 = (0.5, -1)
    s22 = 0.6 * (0.5 * 0.6 + 2.0 * 0.8) + 0.8 * (-1.0 * 0.6 + 0.3 * 0.8)
    expect = -(math.exp(beta * s11) + math.exp(beta * s12) + math.exp(beta * s21) + math.exp(beta * s22)) / (
        2 * beta * 4
    )
    Z = np.array([z1, z2])
    assert tp.energy(Z, beta, A) == pytest.approx(expect, rel=1e-14)
    # a wrong convention (e.g. A z_i paired with z_j through A^2, or dropping A) fails
    assert abs(tp.energy(Z, beta, A @ A) - expect) > 1e-3
    assert abs(tp.energy(Z, beta, None) - expect) > 1e-3
