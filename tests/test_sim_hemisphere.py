"""Tests of sim.hemisphere: samplers, matrices, diagnostics (vs reference), the monotone
minimum projection of the discrete map, and the phase-diagram protocol."""

import math

import numpy as np
import pytest

from sim import attention as att
from sim import hemisphere as hs


# ----------------------------------------------------------------------------- samplers
@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("alpha", [0.3, 1.2, math.pi / 2, 2.5])
def test_cap_uniform_inside_cap_and_polar_law(d, alpha):
    w = np.arange(1.0, d + 1.0)
    w /= np.linalg.norm(w)
    N = 20_000
    Z = hs.cap_uniform(N, d, alpha, center=w, seed=d)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-14)
    c = Z @ w
    assert c.min() >= math.cos(alpha) - 1e-12
    # mean of cos(theta) under density sin^(d-2) theta on [0, alpha]
    th = np.linspace(0.0, alpha, 200_001)
    dens = np.sin(th) ** (d - 2)
    exact = np.trapezoid(np.cos(th) * dens, th) / np.trapezoid(dens, th)
    se = c.std() / math.sqrt(N)
    assert abs(c.mean() - exact) < 4 * se + 1e-6


def test_cap_uniform_d3_is_archimedes_uniform():
    """On S^2 the height <w, z> is uniform on [cos alpha, 1] (Archimedes)."""
    alpha = 1.0
    c = hs.cap_uniform(40_000, 3, alpha, seed=3)[:, 2]
    qs = np.quantile(c, [0.1, 0.25, 0.5, 0.75, 0.9])
    exact = math.cos(alpha) + np.array([0.1, 0.25, 0.5, 0.75, 0.9]) * (1 - math.cos(alpha))
    np.testing.assert_allclose(qs, exact, atol=0.01)


def test_sphere_uniform_and_seed():
    Z = hs.sphere_uniform(30_000, 3, seed=1)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=4 / math.sqrt(3 * 30_000) * 3)
    np.testing.assert_array_equal(hs.sphere_uniform(5, 4, seed=9), hs.sphere_uniform(5, 4, seed=9))
    assert not np.array_equal(hs.sphere_uniform(5, 4, seed=9), hs.sphere_uniform(5, 4, seed=10))


@pytest.mark.parametrize("kind", hs.MATRIX_KINDS)
def test_random_matrix_kinds(kind):
    A = hs.random_matrix(4, kind, seed=2)
    assert A.shape == (4, 4)
    np.testing.assert_allclose(np.linalg.norm(A, 2), 1.0, atol=1e-12)
    if kind in ("identity", "symmetric", "spd"):
        np.testing.assert_allclose(A, A.T, atol=0)
    if kind == "spd":
        assert np.linalg.eigvalsh(A).min() > 0


@pytest.mark.parametrize("kind", hs.MATRIX_KINDS)
def test_every_random_matrix_the_page_offers_has_spectral_norm_1(kind):
    """The A control's help: every choice, for every A seed (0–99) and d (3–8) of the page."""
    for d in range(3, 9):
        for seed in range(100):
            A = hs.random_matrix(d, kind, seed=seed)
            assert abs(np.linalg.norm(A, 2) - 1.0) <= 1e-12, (d, seed)


def test_hemisphere_direction_and_projection_basis():
    Z = hs.cap_uniform(200, 4, 1.3, seed=0)
    w, margin = hs.hemisphere_direction(Z)
    assert margin > 0 and np.min(Z @ w) > 0
    Zbad = np.vstack([Z, -Z[:1]])
    _, margin_bad = hs.hemisphere_direction(np.vstack([Zbad, -Z]))
    assert margin_bad <= 1e-9
    P = hs.projection_basis(6, np.ones(6))
    np.testing.assert_allclose(P @ P.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(P[2], np.ones(6) / math.sqrt(6), atol=1e-14)


# ----------------------------------------------------------------------------- monotone r_min
@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("dt", [0.05, 1.0, 5.0])
@pytest.mark.parametrize("kind", ["identity", "gaussian", "symmetric"])
def test_min_projection_non_decreasing_discrete_map(flow, dt, kind):
    """The discrete-map argument: for V = I and positive weights, min_i <w, z_i> never drops
    (for any step dt), whatever A is."""
    d = 3
    w = np.array([0.0, 0.0, 1.0])
    Z0 = hs.cap_uniform(40, d, 1.45, center=w, seed=4)
    A = hs.random_matrix(d, kind, seed=5)
    traj = att.simulate(Z0, 4.0, dt, 60, A=A, flow=flow)
    r = hs.min_projection(traj, w)
    assert r[0] > 0
    assert np.all(np.diff(r) >= -1e-14)


def test_min_projection_can_drop_outside_the_theorem():
    """Not a tautology: with V = -I (repulsive) the minimum does drop."""
    w = np.array([0.0, 0.0, 1.0])
    Z0 = hs.cap_uniform(20, 3, 1.0, center=w, seed=6)
    traj = att.simulate(Z0, 1.0, 0.1, 20, V=-np.eye(3))
    assert np.diff(hs.min_projection(traj, w)).min() < -1e-3


def test_diameter_goes_to_zero_in_hemisphere():
    Z0 = hs.cap_uniform(30, 3, 1.4, seed=7)
    traj = att.simulate(Z0, 2.0, 0.2, 400, A=hs.random_matrix(3, "spd", 1), record_every=50)
    diam = hs.diameter(traj)
    assert diam[0] > 1.0
    assert diam[-1] < 1e-3
    assert np.all(np.diff(diam) <= 1e-15)  # decreases until it reaches rounding (~1e-15)


# ----------------------------------------------------------------------------- pair statistics
def _clustered(seed, sizes, d=3, spread=1e-3):
    rng = np.random.default_rng(seed)
    centres = hs.sphere_uniform(len(sizes), d, seed=seed)
    pts = [c + spread * rng.standard_normal((s, d)) for c, s in zip(centres, sizes)]
    Z = np.vstack(pts)
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


@pytest.mark.parametrize("threshold", [0.999, 0.99, 0.5])
def test_pair_stats_match_reference(threshold):
    Zs = np.stack(
        [_clustered(s, [5, 7, 3, 1]) for s in range(4)] + [hs.sphere_uniform(16, 3, seed=s) for s in range(4)]
    )
    fast = hs.pair_stats(Zs, threshold)
    ref = hs.pair_stats_reference(Zs, threshold)
    for a, b in zip(fast, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_pair_stats_known_configurations():
    st = hs.pair_stats(_clustered(1, [4, 6, 5], spread=1e-5))
    assert st.clusters == 3 and not st.one_cluster
    np.testing.assert_allclose(st.close_fraction, (6 + 15 + 10) / 105)
    st1 = hs.pair_stats(_clustered(2, [9], spread=1e-5))
    assert st1.clusters == 1 and st1.one_cluster and st1.close_fraction == 1.0
    # tiny diameters are resolved (no arccos cancellation)
    eps = 1e-10
    Z = np.array([[1.0, 0.0, 0.0], [math.cos(eps), math.sin(eps), 0.0]])
    np.testing.assert_allclose(hs.diameter(Z), eps, rtol=1e-6)
    # antipodal pair: diameter pi
    np.testing.assert_allclose(hs.diameter(np.array([[0, 0, 1.0], [0, 0, -1.0]])), math.pi)


def test_shapes_of_diagnostics():
    traj = np.stack([hs.sphere_uniform(6, 3, seed=s) for s in range(5)])
    assert hs.min_projection(traj, [0, 0, 1]).shape == (5,)
    assert hs.cluster_count(traj).shape == (5,)
    assert hs.pair_stats(traj[None].repeat(2, 0)).clusters.shape == (2, 5)


# ----------------------------------------------------------------------------- phase diagram
def test_phase_diagram_small_protocol():
    calls = []
    pd = hs.phase_diagram(B=12, n_betas=3, beta_max=9.0, n_times=7, seed=1, progress=calls.append)
    assert calls == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert pd.one_cluster.shape == pd.close_pairs.shape == pd.median_clusters.shape == (3, 7)
    np.testing.assert_allclose(pd.times, np.linspace(0, 30, 7))
    np.testing.assert_allclose(pd.betas, [0.1, 4.55, 9.0])
    assert np.all(pd.one_cluster[:, 0] == 0)  # uniform starts are not clustered
    assert pd.one_cluster[0, -1] == 1.0  # beta = 0.1: one cluster by tau = 30
    assert pd.median_clusters[-1, -1] >= 2  # beta = 9: several clusters persist
    assert np.all((0 <= pd.close_pairs) & (pd.close_pairs <= 1))
    # the colour is reproduced from simulate_batch directly for one beta
    g = np.random.default_rng(1).standard_normal((12, 32, 2))
    traj = att.simulate_batch(g, 4.55, 0.1, 300, record_every=50)
    st = hs.pair_stats_reference(traj, 0.999)
    np.testing.assert_allclose(pd.one_cluster[1], st.one_cluster.mean(axis=0))
    np.testing.assert_allclose(pd.median_clusters[1], np.median(st.clusters, axis=0))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(B=0), "B"),
        (dict(n_betas=0), "n_betas"),
        (dict(beta_max=-1.0), "beta_max"),
        (dict(beta_min=20.0), "beta_min"),
        (dict(dt=0.0), "dt"),
        (dict(T=np.nan), "T"),
        (dict(threshold=1.0), "threshold"),
        (dict(progress=3), "progress"),
        (dict(B=100_000, n_betas=1000), "too large"),
    ],
)
def test_phase_diagram_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        hs.phase_diagram(**kwargs)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: hs.cap_uniform(10, 3, 0.0), "half_angle"),
        (lambda: hs.cap_uniform(10, 3, 4.0), "half_angle"),
        (lambda: hs.cap_uniform(10, 1, 1.0), "d"),
        (lambda: hs.cap_uniform(0, 3, 1.0), "n"),
        (lambda: hs.cap_uniform(10, 3, 1.0, center=[0, 0, 0]), "center"),
        (lambda: hs.cap_uniform(10, 3, 1.0, seed=-1), "seed"),
        (lambda: hs.random_matrix(3, "weird"), "kind"),
        (lambda: hs.min_projection(np.ones((3, 2)), [0, 0, 1]), "w"),
        (lambda: hs.pair_stats(np.ones(3)), "Z"),
        (lambda: hs.pair_stats(np.ones((3, 2)), threshold=np.nan), "threshold"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_cluster_labels_agree_with_counts():
    Z = _clustered(3, [2, 9, 5], spread=1e-5)
    lab = hs.cluster_labels(Z)
    assert lab.max() + 1 == hs.cluster_count(Z) == 3
    np.testing.assert_array_equal(lab, [2, 2] + [0] * 9 + [1] * 5)  # largest cluster first
    for s in range(3):
        U = hs.sphere_uniform(40, 3, seed=s)
        assert hs.cluster_labels(U, 0.9).max() + 1 == hs.cluster_count(U, 0.9)


@pytest.mark.parametrize("threshold", [0.999, 0.95, 0.3])
def test_cluster_labels_match_reference(threshold):
    """The union-find kernel against SciPy's connected components (same ranking of labels)."""
    for s in range(4):
        for Z in (_clustered(10 + s, [3, 8, 3, 1, 6], spread=2e-3), hs.sphere_uniform(60, 4, seed=s)):
            np.testing.assert_array_equal(hs.cluster_labels(Z, threshold), hs.cluster_labels_reference(Z, threshold))


# ----------------------------------------------------------------------------- from the numerical review
def _polar(Z, w):
    c = Z @ w
    return np.arctan2(np.linalg.norm(Z - np.outer(c, w), axis=1), c)


@pytest.mark.parametrize("d", [3, 4, 5, 17, 64])
@pytest.mark.parametrize("alpha", [1e-6, 1e-3, 0.3, 1.5, 2.5])
def test_cap_uniform_inverse_cdf_exact(d, alpha):
    """cap_uniform(5, 64, 1e-6) was all NaN (the grid CDF underflowed). Each polar angle is the
    exact inverse CDF of its uniform draw: int_0^theta sin^(d-2) / int_0^alpha sin^(d-2) = u,
    checked by quadrature (independent of the Beta-function route)."""
    from scipy.integrate import quad

    n = 6
    Z = hs.cap_uniform(n, d, alpha, seed=3)
    assert np.all(np.isfinite(Z))
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-15)
    u = np.random.default_rng(3).random(n)  # the first draws of the same stream
    th = _polar(Z, np.eye(d)[-1])
    assert np.all(th <= alpha * (1 + 1e-12))
    m = d - 2
    # integrate sin^m(t)/sin^m(alpha) (scaled: no underflow for tiny caps)
    f = lambda t: (math.sin(t) / math.sin(alpha)) ** m if alpha < math.pi / 2 else math.sin(t) ** m
    total = quad(f, 0, alpha, epsabs=0, epsrel=1e-13, limit=200)[0]
    for ti, ui in zip(th, u):
        part = quad(f, 0, ti, epsabs=0, epsrel=1e-13, limit=200)[0]
        assert part / total == pytest.approx(ui, rel=1e-8, abs=1e-12)


def test_phase_diagram_max_work():
    with pytest.raises(ValueError, match="max_work"):
        hs.phase_diagram(B=2, n_betas=2, n=4, T=1.0, n_times=3, max_work=2 * 2 * 10 * 16 * 2 - 1)
    res = hs.phase_diagram(B=2, n_betas=2, n=4, T=1.0, n_times=3, max_work=2 * 2 * 10 * 16 * 2)
    assert res.one_cluster.shape == (2, 3)
    with pytest.raises(ValueError, match="max_work"):
        hs.phase_diagram(B=100_000, n_betas=1000)  # default bound unchanged


@pytest.mark.parametrize(
    "n, d, threshold", [(1, 3, 0.999), (2, 2, 0.5), (60, 2, 0.99), (150, 3, 0.999), (90, 5, 0.9), (40, 8, 0.999)]
)
def test_cluster_count_is_pair_stats_clusters(n, d, threshold):
    """cluster_count skips pairs whose first coordinates are already too far apart, and stops at
    one component: the same count as pair_stats on spread, clustered and collapsed tokens, ties in
    the sort included."""
    from sim.attention import simulate

    rng = np.random.default_rng(n * 10 + d)
    Z0 = hs.sphere_uniform(n, d, seed=n)
    traj = simulate(Z0, 4.0, 0.2, 120, record_every=4)  # spread -> clusters -> one
    groups = rng.integers(0, 4, n)  # tight groups, some ties
    centres = hs.sphere_uniform(4, d, seed=1)
    G = centres[groups] + 1e-3 * rng.standard_normal((n, d))
    G[: n // 3, 0] = G[0, 0]  # equal first coordinates
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    for Z in (traj, G[None], G, traj[-1]):
        expect = hs.pair_stats(Z, threshold).clusters
        got = hs.cluster_count(Z, threshold)
        assert got.shape == expect.shape and got.dtype == expect.dtype
        np.testing.assert_array_equal(got, expect)
    assert hs.pair_stats(traj, threshold).clusters.min() < hs.pair_stats(traj, threshold).clusters.max() or n <= 2


def test_cluster_count_rejects_bad_input():
    with pytest.raises(ValueError):
        hs.cluster_count(np.full((3, 3), np.nan))
    with pytest.raises(ValueError):
        hs.cluster_count(np.zeros((2, 2, 2, 3, 3)))
    Z4 = np.stack([hs.sphere_uniform(5, 3, seed=s)[None].repeat(2, 0) for s in range(3)])  # (B, T, n, d)
    np.testing.assert_array_equal(hs.cluster_count(Z4), hs.pair_stats(Z4).clusters)
    with pytest.raises(ValueError):
        hs.cluster_count(hs.sphere_uniform(4, 3), threshold=1.0)
