"""sim.low_temperature: the projection Pi, exact W2, the low-temperature run and the
zero-temperature flow (docs/constructions.md (low_temperature)), against hand computations, brute force and
independent integrators."""

import itertools
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.stats import special_ortho_group

from sim import low_temperature as lt
from tests import _reference_low_temperature as R
from sim.attention import simulate_reference

I3 = np.eye(3)


def _unit_rows(n, d, seed):
    Z = np.random.default_rng(seed).standard_normal((n, d))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


# --------------------------------------------------------------------------- projection
def test_projection_by_hand_simple_top_eigenvalue():
    Z = np.array([[0.3, -2.0, 1.0], [-0.1, 0.5, 0.5], [4.0, 0.0, 0.0]])
    P = lt.projection(Z, np.diag([3.0, 1.0, -2.0]))
    np.testing.assert_array_equal(P, [[1, 0, 0], [-1, 0, 0], [1, 0, 0]])


def test_projection_by_hand_two_dimensional_eigenspace():
    Z = np.array([[3.0, 4.0, 7.0], [0.0, -2.0, 1.0]])
    P = lt.projection(Z, np.diag([2.0, 2.0, 0.5]))
    np.testing.assert_allclose(P, [[0.6, 0.8, 0.0], [0.0, -1.0, 0.0]], atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mult", [1, 2])
def test_projection_properties_in_a_rotated_basis(seed, mult):
    d = 4
    Q = special_ortho_group.rvs(d, random_state=seed)
    mu = np.array([1.5] * mult + [0.2, -0.7, -1.0][: d - mult])
    S = Q @ np.diag(mu) @ Q.T
    Z = np.random.default_rng(seed).standard_normal((20, d)) * 3.0
    P = lt.projection(Z, S)
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0, atol=1e-14)  # unit rows
    np.testing.assert_allclose(lt.projection(P, S), P, atol=1e-14)  # idempotent
    np.testing.assert_allclose(P @ S, 1.5 * P, atol=1e-13)  # in the eigenspace
    np.testing.assert_allclose(lt.projection(7.0 * Z, S), P, atol=1e-14)  # scale invariant
    # the hand formula in the eigenbasis: keep the first `mult` coordinates, normalise
    C = Z @ Q
    C[:, mult:] = 0.0
    ref = (C @ Q.T) / np.linalg.norm(C, axis=1, keepdims=True)
    np.testing.assert_allclose(P, ref, atol=1e-13)
    # the closest point of the eigenspace's unit sphere: <z, Pi(z)> = ||P1 z||
    np.testing.assert_allclose(np.einsum("ij,ij->i", Z, P), np.linalg.norm(C, axis=1), rtol=1e-12)


def test_projection_invalid_input():
    S = np.diag([2.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="P1 z = 0"):
        lt.projection([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]], S)
    with pytest.raises(ValueError, match="zero"):
        lt.projection([[0.0, 0.0, 0.0]], S)
    with pytest.raises(ValueError, match="symmetric"):
        lt.projection([[1.0, 0.0, 0.0]], np.array([[1.0, 1.0, 0], [0, 1.0, 0], [0, 0, 1.0]]))
    with pytest.raises(ValueError, match="finite"):
        lt.projection([[np.nan, 0.0, 0.0]], S)
    with pytest.raises(ValueError, match="shape"):
        lt.projection([[1.0, 0.0]], S)
    with pytest.raises(ValueError, match="real"):
        lt.projection([[1.0 + 1j, 0.0, 0.0]], S)


# --------------------------------------------------------------------------- W2
def _w2_brute(X, Y):
    n = len(X)
    best = min(sum(np.sum((X[i] - Y[p[i]]) ** 2) for i in range(n)) for p in itertools.permutations(range(n)))
    return math.sqrt(best / n)


@pytest.mark.parametrize("n,d,seed", [(1, 3, 0), (2, 2, 1), (4, 3, 2), (5, 3, 3), (6, 2, 4), (6, 4, 5)])
def test_w2_equals_brute_force_over_permutations(n, d, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, d)) + 0.3
    assert lt.w2(X, Y) == pytest.approx(_w2_brute(X, Y), rel=1e-12)


def test_w2_closed_forms():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 3))
    c = np.array([0.3, -1.2, 2.0])
    assert lt.w2(X, X + c) == pytest.approx(np.linalg.norm(c), rel=1e-12)  # translation
    assert lt.w2(X, X[rng.permutation(30)]) == 0.0  # relabelling
    assert lt.w2(2.5 * X, 2.5 * X[::-1] + c * 0) == pytest.approx(0.0, abs=1e-12)
    Y = rng.standard_normal((30, 3))
    assert lt.w2(3.0 * X, 3.0 * Y) == pytest.approx(3.0 * lt.w2(X, Y), rel=1e-12)  # homogeneous
    assert lt.w2(X, Y) == pytest.approx(lt.w2(Y, X), rel=1e-12)  # symmetric
    # poles: m tokens at +e1, n - m at -e1 against k of them moved across -> sqrt(4k/n)
    n, m, k = 20, 12, 3
    e1 = np.array([1.0, 0.0, 0.0])
    A = np.array([e1] * m + [-e1] * (n - m))
    Bm = np.array([e1] * (m - k) + [-e1] * (n - m + k))
    assert lt.w2(A, Bm) == pytest.approx(math.sqrt(4 * k / n), rel=1e-14)
    # 1-D: the monotone (sorted) matching is optimal
    x, y = rng.standard_normal(40), rng.standard_normal(40)
    ref = math.sqrt(np.mean((np.sort(x) - np.sort(y)) ** 2))
    assert lt.w2(x[:, None], y[:, None]) == pytest.approx(ref, rel=1e-12)


def test_w2_tiny_and_huge_scales_are_accurate():
    X = np.array([[0.0, 0.0], [1.0, 0.0]])
    for s in (1e-150, 1e150):
        assert lt.w2(s * X, s * (X + [0.0, 1e-9])) == pytest.approx(s * 1e-9, rel=1e-6)


def test_w2_invalid_input():
    with pytest.raises(ValueError, match="same shape"):
        lt.w2(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="finite"):
        lt.w2([[np.inf, 0.0]], [[0.0, 0.0]])
    with pytest.raises(ValueError, match="max_work"):
        lt.w2(np.zeros((50, 2)), np.ones((50, 2)), max_work=1e3)
    with pytest.raises(ValueError, match="at least one"):
        lt.w2(np.zeros((0, 2)), np.zeros((0, 2)))


# --------------------------------------------------------------------------- run
def test_run_is_the_sa_layer_map_and_w2_to_the_projection():
    B = np.diag([1.0, 2.0, 1.0])
    V = np.diag([1.0, 0.9, 0.5])
    r = lt.run(12, 5.0, B, V, 1.0, 0.05, seed=3, record=6)
    assert set(r) >= {"t", "w2", "Z"}
    assert r["t"].shape == (6,) and r["w2"].shape == (6,) and r["Z"].shape == (6, 12, 3)
    np.testing.assert_array_equal(r["layers"], [0, 4, 8, 12, 16, 20])
    np.testing.assert_allclose(r["t"], r["layers"] * 0.05)
    Z0 = np.random.default_rng(3).standard_normal((12, 3))
    np.testing.assert_allclose(r["Z"][0], Z0 / np.linalg.norm(Z0, axis=1, keepdims=True), atol=1e-15)
    ref = simulate_reference(r["Z"][0], 5.0, 0.05, 20, A=B, V=V)
    np.testing.assert_allclose(r["Z"], ref[r["layers"]], atol=1e-12)
    S = V @ B.T
    target = lt.projection(r["Z"][0], S)
    np.testing.assert_allclose(target, np.sign(r["Z"][0][:, [1]]) * [0.0, 1.0, 0.0], atol=1e-15)
    for k in range(6):
        assert r["w2"][k] == pytest.approx(lt.w2(ref[r["layers"][k]], target), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_large_beta_w2_decreases_to_sqrt_4k_over_n(seed):
    """B = I, V diagonal: Pi sends every token to +-e1; at large beta W2 falls and settles at
    sqrt(4k/n), k the net number of tokens that end at the other pole (counted at the end)."""
    n = 40
    r = lt.run(n, 300.0, I3, np.diag([1.0, 0.4, 0.4]), 30.0, 0.1, seed, record=31)
    w = r["w2"]
    assert w[0] > 0.8  # uniform tokens are far from two atoms
    assert np.all(np.diff(w) <= 0.02)  # decreasing (up to the plateau's noise)
    k = lt.pole_imbalance(r["Z"][0], r["Z"][-1], r["S"])
    assert abs(np.abs(r["Z"][-1][:, 0]).min() - 1.0) < 1e-3  # every token at a pole
    assert w[-1] == pytest.approx(math.sqrt(4 * k / n), abs=2e-3)


def test_fewer_wrong_pole_tokens_for_larger_beta_on_average():
    V = np.diag([1.0, 0.5, 0.5])
    ks = {}
    for beta in (3.0, 300.0):
        ks[beta] = [
            lt.pole_imbalance(r["Z"][0], r["Z"][-1], r["S"])
            for r in (lt.run(48, beta, I3, V, 20.0, 0.1, s, record=2) for s in range(10))
        ]
    assert np.mean(ks[300.0]) < np.mean(ks[3.0]) - 1.0, ks


def test_run_invalid_input():
    V = np.diag([1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="symmetric"):
        lt.run(8, 1.0, np.array([[1.0, 0.5, 0], [0, 1.0, 0], [0, 0, 1.0]]), V, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="invertible"):
        lt.run(8, 1.0, np.diag([1.0, 0.0, 1.0]), V, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="beta"):
        lt.run(8, 0.0, I3, V, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="beta"):
        lt.run(8, np.nan, I3, V, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="n must be"):
        lt.run(0, 1.0, I3, V, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="no layer"):
        lt.run(8, 1.0, I3, V, 0.01, 0.1, 0)
    with pytest.raises(ValueError, match="record"):
        lt.run(8, 1.0, I3, V, 1.0, 0.1, 0, record=12)
    with pytest.raises(ValueError, match="work"):
        lt.run(200, 1.0, I3, V, 100.0, 0.01, 0, max_work=1e8)
    with pytest.raises(ValueError, match="too many"):
        lt.run(8, 1.0, I3, V, 1e300, 1e-300, 0)
    with pytest.raises(ValueError, match="shape"):
        lt.run(8, 1.0, I3, np.eye(2), 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="seed"):
        lt.run(8, 1.0, I3, V, 1.0, 0.1, -1)


# --------------------------------------------------------------------------- zero temperature
def test_zero_temperature_flow_is_the_oja_flow_for_b_identity():
    V = np.array([[1.0, 0.3, 0.0], [0.3, 0.6, 0.1], [0.0, 0.1, -0.4]])
    Z0 = _unit_rows(10, 3, 1)
    t = np.array([0.0, 0.5, 2.0, 7.0])
    out = R.zero_temperature_flow(Z0, I3, V, t)
    for k, tk in enumerate(t):
        Y = Z0 @ expm(tk * V).T
        np.testing.assert_allclose(out[k], Y / np.linalg.norm(Y, axis=1, keepdims=True), atol=1e-13)


@pytest.mark.parametrize("case", [0, 1])
def test_zero_temperature_flow_matches_an_ode_solver(case):
    """General invertible B with V B^T symmetric: the time-changed closed form against solve_ivp
    on z' = P_z S z / ||B^T z||."""
    if case == 0:
        B, V = np.diag([1.0, 2.0, 1.0]), np.diag([1.0, 0.9, 0.5])
    else:
        rng = np.random.default_rng(4)
        M = rng.standard_normal((3, 3))
        B = M @ M.T + np.eye(3)  # SPD, not orthogonal
        S = np.array([[1.0, 0.2, 0.0], [0.2, 0.3, 0.1], [0.0, 0.1, -0.5]])
        V = S @ np.linalg.inv(B.T)
    S = V @ B.T
    Z0 = _unit_rows(6, 3, case)
    t = np.linspace(0.0, 4.0, 9)
    out = R.zero_temperature_flow(Z0, B, V, t)

    def f(_, y):
        Z = y.reshape(-1, 3)
        F = (Z @ S) / np.linalg.norm(Z @ B, axis=1, keepdims=True)
        return (F - np.einsum("ij,ij->i", F, Z)[:, None] * Z).ravel()

    sol = solve_ivp(f, (0.0, 4.0), Z0.ravel(), t_eval=t, rtol=1e-12, atol=1e-12, method="DOP853")
    ref = sol.y.T.reshape(len(t), -1, 3)
    np.testing.assert_allclose(out, ref, atol=2e-9)


def test_zero_temperature_flow_converges_to_the_projection_at_the_gap_rate():
    B, V = np.diag([1.0, 2.0, 1.0]), np.diag([1.0, 0.9, 0.5])  # S = diag(1, 1.8, 0.5): gap 0.8
    Z0 = _unit_rows(8, 3, 3)
    P = lt.projection(Z0, V @ B.T)
    t = np.array([10.0, 20.0, 30.0])
    out = R.zero_temperature_flow(Z0, B, V, t)
    err = np.linalg.norm(out - P, axis=2).max(axis=1)
    assert err[2] < 1e-4
    # ||B^T z|| -> 2 near +-e2, so the depth runs at half the Oja time: rate 0.8 / 2 = 0.4
    assert err[2] / err[1] == pytest.approx(math.exp(-0.4 * 10.0), rel=1e-3)


def test_zero_temperature_map_is_first_order_in_dt():
    B, V = np.diag([1.0, 2.0, 1.0]), np.diag([1.0, 0.9, 0.5])
    Z0 = _unit_rows(10, 3, 5)
    exact = R.zero_temperature_flow(Z0, B, V, [2.0])[0]
    errs = [np.abs(lt.zero_temperature_map(Z0, B, V, 2.0 / m, m)[-1] - exact).max() for m in (40, 80, 160)]
    assert errs[0] / errs[1] == pytest.approx(2.0, rel=0.1)
    assert errs[1] / errs[2] == pytest.approx(2.0, rel=0.05)


def test_large_beta_layer_map_equals_the_zero_temperature_map_for_b_identity():
    """B = I: each token's largest score is its own, so beta -> infinity gives exactly the
    zero-temperature layer map (while the tokens are still apart)."""
    V = np.diag([1.0, 0.5, 0.3])
    r = lt.run(16, 1e6, I3, V, 2.0, 0.05, seed=2, record=5)
    zt = lt.zero_temperature_map(r["Z"][0], I3, V, 0.05, 40, record_every=10)
    np.testing.assert_allclose(r["Z"], zt, atol=1e-12)


def test_distance_to_zero_temperature_shrinks_with_beta_on_average():
    V = np.diag([1.0, 0.5, 0.5])
    dist = {}
    for beta in (10.0, 100.0, 1000.0):
        ds = []
        for s in range(4):
            r = lt.run(64, beta, I3, V, 1.0, 0.05, s, record=2)
            zt = lt.zero_temperature_map(r["Z"][0], I3, V, 0.05, 20)[-1]
            ds.append(R.rms_distance(r["Z"][-1], zt))
        dist[beta] = np.mean(ds)
    assert dist[10.0] > 3 * dist[100.0] > 9 * dist[1000.0], dist
    assert dist[10.0] < 0.5


def test_pole_imbalance_by_hand_and_invalid():
    S = np.diag([2.0, 1.0, 1.0])
    Z0 = np.array([[1, 0, 0], [1, 1, 0], [-1, 0, 1], [0.1, 1, 1]], float)
    Z = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]], float)
    assert lt.pole_imbalance(Z0, Z, S) == 1
    with pytest.raises(ValueError, match="dimension 2"):
        lt.pole_imbalance(Z0, Z, np.diag([2.0, 2.0, 1.0]))
    assert R.rms_distance(Z0[:1], Z[:1]) == 0.0
    assert R.rms_distance([[0.0, 0.0]], [[3.0, 4.0]]) == 5.0


def test_great_circle_concentration_then_drift_with_a_later_dip_for_larger_beta():
    """B = I, V = diag(1, 1, 0.5): W2 to Pi#rho0 (spread on the circle z3 = 0) dips, then rises
    as the tokens cluster along the circle; the dip moves deeper with beta (the page's notice)."""
    V = np.diag([1.0, 1.0, 0.5])
    dips, mins = [], []
    for beta in (10.0, 100.0, 1000.0):
        W = np.mean([lt.run(48, beta, I3, V, 30.0, 0.1, s, record=21)["w2"] for s in range(3)], axis=0)
        k = int(np.argmin(W))
        dips.append(k)
        mins.append(W[k])
        assert W[-1] > 1.15 * W[k]  # drift after the dip
    assert dips[0] < dips[1] < dips[2]
    assert mins[0] > mins[1] > mins[2]


def test_drift_model_gathers_towards_e2_then_slides_to_v_axis():
    """S = V B^T = diag(1, 1.8, 0.5) (Pi -> +-e2) while V = diag(1, 0.9, 0.5) prefers e1: at beta = 10
    the tokens first approach +-e2, later |z1| grows again (the source's numerical observation)."""
    B, V = np.diag([1.0, 1.8 / 0.9, 1.0]), np.diag([1.0, 0.9, 0.5])
    z1, z2 = [], []
    for s in range(2):
        r = lt.run(64, 10.0, B, V, 30.0, 0.1, s, record=11)
        z1.append(np.abs(r["Z"][..., 0]).mean(axis=1))
        z2.append(np.abs(r["Z"][..., 1]).mean(axis=1))
    z1, z2 = np.mean(z1, 0), np.mean(z2, 0)
    peak = int(np.argmax(z2))
    assert z2[peak] > 0.8 and r["t"][peak] <= 10.0
    assert z2[-1] < z2[peak] - 0.15 and z1[-1] > z1[peak] + 0.2


# --------------------------------------------------------------------------- one engine call per run
@pytest.mark.parametrize("steps,record", [(20, 6), (37, 5), (200, 21), (9, 10)])
def test_run_in_one_call_equals_a_call_per_record(monkeypatch, steps, record):
    """run() records the trajectory in one engine call (every gcd-of-gaps layer) and builds all
    W2 cost matrices at once; the long-run path (a call per gap, one assignment at a time) agrees."""
    B, V = np.diag([1.0, 1.3, 1.0]), np.diag([1.0, 0.9, 0.5])
    a = lt.run(20, 30.0, B, V, steps * 0.05, 0.05, 4, record=record)
    monkeypatch.setattr(lt, "_ONE_CALL_MAX", 0)
    b = lt.run(20, 30.0, B, V, steps * 0.05, 0.05, 4, record=record)
    np.testing.assert_array_equal(a["layers"], b["layers"])
    np.testing.assert_allclose(a["Z"], b["Z"], atol=1e-13)
    np.testing.assert_allclose(a["w2"], b["w2"], rtol=1e-12, atol=1e-15)
    for k in range(record):
        assert a["w2"][k] == pytest.approx(lt.w2(a["Z"][k], a["target"]), rel=1e-12, abs=1e-15)


def test_start_tokens_are_the_runs_start():
    Z = lt.start_tokens(12, 3, 5)
    r = lt.run(12, 2.0, I3, np.diag([1.0, 0.5, 0.5]), 0.2, 0.1, 5, record=2)
    np.testing.assert_array_equal(Z, r["Z"][0])
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-15)
    for args, name in (((0, 3, 0), "n"), ((4, 1, 0), "d"), ((4, 3, -1), "seed"), ((4, 3.5, 0), "d")):
        with pytest.raises(ValueError, match=name):
            lt.start_tokens(*args)
