"""sim.block against the formulas of docs/constructions.md (block) and plain NumPy references."""

import math

import numpy as np
import pytest
from scipy.linalg import expm

from sim import block as bk
from tests import _reference_block as R


# --------------------------------------------------------------------------- RoPE
@pytest.mark.parametrize("k,base", [(1, 10000.0), (2, 10000.0), (7, 500.0), (32, 10000.0), (64, 1e6)])
def test_rope_is_the_direct_sum(k, base):
    N = np.array([0.0, 1.0, 2.5, 17.0, 1234.0, 98765.0, -40.0])
    ref = np.array([sum(math.cos(n * base ** (-(j - 1) / k)) for j in range(1, k + 1)) / k for n in N])
    np.testing.assert_allclose(bk.rope_similarity(N, k, base), ref, atol=1e-13)
    assert bk.rope_similarity(0, k, base)[0] == 1.0
    assert bk.rope_similarity([5.0], k, base).shape == (1,)


def test_rope_chunking_does_not_change_values():
    N = np.arange(0, 300_000, 7, dtype=float)  # more than one chunk for k = 16
    th = 10000.0 ** (-np.arange(16) / 16)
    np.testing.assert_allclose(bk.rope_similarity(N, 16), np.cos(np.outer(N, th)).mean(1), atol=1e-13)


@pytest.mark.parametrize("k,lo,hi", [(2, 1000, 20000), (8, 100, 5000), (16, 10000, 40000)])
def test_rope_largest_return_is_the_brute_maximum(k, lo, hi):
    N = np.arange(lo, hi + 1, dtype=float)
    sim = bk.rope_similarity(N, k)
    best, arg = bk.rope_largest_return(k, lo, hi)
    assert best == pytest.approx(sim.max(), abs=1e-14)
    assert lo <= arg <= hi and bk.rope_similarity(arg, k)[0] == pytest.approx(best, abs=1e-14)


@pytest.mark.parametrize(
    "k,lo,hi,base",
    [
        (1, 0, 5000, 1e4),
        (2, 1000, 20000, 1e4),
        (7, 3, 12345, 500.0),
        (64, 1, 200_000, 1e4),
        (128, 999_000, 1_000_000, 1e6),
    ],
)
def test_rope_range_is_the_direct_sum_within_its_bound(k, lo, hi, base):
    """Angle addition against the direct sum (both round the phases N·θ: the bound grows with N)."""
    N = np.arange(lo, hi + 1, dtype=float)
    fast = R.rope_similarity_range(lo, hi, k, base)
    th = base ** (-np.arange(k) / k)
    ref = np.cos(np.outer(N, th)).mean(1)
    assert fast.shape == N.shape
    assert np.abs(fast - ref).max() <= bk._rope_range_error(hi, k)
    np.testing.assert_allclose(fast, ref, atol=1e-9 if hi > 10**5 else 1e-12)


@pytest.mark.parametrize("k,hi,base", [(1, 3000, 1e4), (2, 60_000, 1e4), (5, 20_000, 300.0), (32, 60_000, 1e4)])
def test_rope_window_extremes_are_the_brute_force_extremes(k, hi, base):
    edges = np.unique(np.round(np.logspace(0, np.log10(hi + 1), 120)).astype(int))
    edges = np.append(edges[edges <= hi], hi + 1)
    hx, hy, lx, ly = bk.rope_window_extremes(k, edges, base)
    for j, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        seg = bk.rope_similarity(np.arange(a, b, dtype=float), k, base)
        assert (hx[j], hy[j]) == (a + np.argmax(seg), seg.max())  # the first on ties, exactly
        assert (lx[j], ly[j]) == (a + np.argmin(seg), seg.min())


def test_rope_largest_return_over_several_blocks(monkeypatch):
    monkeypatch.setattr(bk, "RANGE_MAX", 7001)  # 5 blocks, the maximum in one of them
    N = np.arange(1, 30_001, dtype=float)
    sim = bk.rope_similarity(N, 3)
    assert bk.rope_largest_return(3, 1, 30_000) == (sim.max(), int(N[np.argmax(sim)]))


def test_rope_returns_get_lower_with_more_planes():
    """Not a law, a measurement: on a fixed long window the largest return falls as k grows."""
    h = [bk.rope_largest_return(k, 10_000, 60_000)[0] for k in (8, 32, 128)]
    assert h[0] > h[1] > h[2] and h[2] < 0.5


# --------------------------------------------------------------------------- RMSNorm
def _rms(x, eps):
    return x / np.sqrt(x @ x / x.size + eps)


@pytest.mark.parametrize(
    "d,eps,scale", [(1, 1e-3, 1.0), (2, 1e-2, 0.3), (5, 1e-6, 1.0), (16, 0.5, 3.0), (64, 1e-4, 0.01)]
)
def test_rmsnorm_jacobian_matches_finite_differences(d, eps, scale):
    rng = np.random.default_rng(d)
    x = scale * rng.standard_normal(d)
    J = bk.rmsnorm_jacobian(x, eps)
    h = 1e-6 * max(1.0, np.linalg.norm(x))
    fd = np.column_stack([(_rms(x + h * e, eps) - _rms(x - h * e, eps)) / (2 * h) for e in np.eye(d)])
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-6 * np.abs(J).max())
    np.testing.assert_allclose(J, J.T, atol=0)
    smax = np.linalg.svd(J, compute_uv=False)[0]
    assert bk.rmsnorm_gain(x, eps) == pytest.approx(smax, rel=1e-12)
    r = math.sqrt(x @ x / d + eps)
    assert bk.rmsnorm_gain(x, eps) == pytest.approx(1 / r if d >= 2 else eps / r**3, rel=1e-14)


@pytest.mark.parametrize("d", [1, 3, 256])
def test_rmsnorm_gain_at_zero_is_eps_to_minus_half(d):
    eps = np.logspace(-14, 2, 17)
    g = np.array([bk.rmsnorm_gain(np.zeros(d), e) for e in eps])
    np.testing.assert_allclose(g, 1 / np.sqrt(eps), rtol=1e-14)
    slope = np.polyfit(np.log(eps), np.log(g), 1)[0]
    assert slope == pytest.approx(-0.5, abs=1e-12)
    np.testing.assert_allclose(bk.rmsnorm_jacobian(np.zeros(d), 1e-6), np.eye(d) * 1e3, rtol=1e-14)


def test_rmsnorm_gain_eps_zero_and_large_x():
    x = np.array([3.0, 4.0])
    assert bk.rmsnorm_gain(x, 0.0) == pytest.approx(1 / math.sqrt(12.5), rel=1e-14)
    assert bk.rmsnorm_gain([2.0], 0.0) == 0.0  # d = 1: x/|x| is locally constant
    g = bk.rmsnorm_gain(np.full(10, 1e90), 1e-6)  # far out the gain is √d/‖x‖
    assert g == pytest.approx(math.sqrt(10) / np.linalg.norm(np.full(10, 1e90)), rel=1e-12)


# --------------------------------------------------------------------------- splitting
@pytest.mark.parametrize("d,seed", [(2, 0), (4, 1), (9, 7)])
def test_splitting_defect_tends_to_the_commutator(d, seed):
    A, B, x = bk.splitting_example(d, seed)
    alphas = np.logspace(-12, 0, 13)
    got = bk.splitting_defect(A, B, x, alphas)
    lim = np.linalg.norm((A @ B - B @ A) @ x)
    assert bk.commutator_norm(A, B, x) == pytest.approx(lim, rel=1e-13)
    # straight from expm (cancellation-prone, so only where alpha is not tiny)
    for a, g in zip(alphas, got):
        if a >= 1e-3:
            ref = np.linalg.norm((expm(a * A) @ expm(a * B) - expm(a * B) @ expm(a * A)) @ x) / a**2
            assert g == pytest.approx(ref, rel=1e-8)
    err = np.abs(got - lim)
    assert err[0] < 1e-12 * lim  # alpha = 1e-12: the limit itself
    small = alphas <= 1e-2
    assert np.all(err[small] <= 10 * alphas[small] * (np.linalg.norm(A, 2) + np.linalg.norm(B, 2)) ** 3)


def test_splitting_defect_vanishes_for_commuting_fields():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 5))
    B = 0.5 * A @ A - 2.0 * A + np.eye(5)  # a polynomial in A commutes with A
    x = rng.standard_normal(5)
    got = bk.splitting_defect(A, B, x, np.logspace(-6, -0.5, 8))
    assert np.all(got < 1e-12 * np.linalg.norm(B, 2) * np.linalg.norm(A, 2) * np.linalg.norm(x))
    D1, D2 = np.diag([1.0, -2.0, 0.5]), np.diag([3.0, 0.1, -1.0])
    assert np.all(bk.splitting_defect(D1, D2, np.ones(3), [1e-3, 0.1, 1.0]) == 0.0)


@pytest.mark.parametrize("d,seed", [(3, 2), (6, 5)])
def test_one_trotter_step_is_half_the_commutator(d, seed):
    A, B, x = bk.splitting_example(d, seed)
    alphas = np.logspace(-5, 0, 11)
    got = bk.trotter_defect(A, B, x, alphas)
    for a, g in zip(alphas, got):
        if a >= 1e-3:
            ref = np.linalg.norm((expm(a * A) @ expm(a * B) - expm(a * (A + B))) @ x)
            assert g == pytest.approx(ref, rel=1e-7)
    half = 0.5 * alphas**2 * np.linalg.norm((A @ B - B @ A) @ x)
    small = alphas <= 1e-2
    np.testing.assert_allclose(got[small], half[small], rtol=50 * alphas[small].max())


# --------------------------------------------------------------------------- attention
def _attention_loop(Z, A, V, beta, causal=False, P=None):
    n, d = Z.shape
    Y = Z if P is None else Z + P
    U = np.zeros((n, d))
    for i in range(n):
        js = range(i + 1) if causal else range(n)
        s = [beta * Y[i] @ A @ Y[j] for j in js]
        m = max(s)
        w = [math.exp(v - m) for v in s]
        tot = sum(w)
        for wj, j in zip(w, js):
            U[i] += wj / tot * (V @ Z[j])
    return U


def _setup(n, d, seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    A = rng.standard_normal((d, d))  # not symmetric
    V = rng.standard_normal((d, d))  # not symmetric
    P = rng.standard_normal((n, d))
    assert np.abs(A - A.T).max() > 0.1 and np.abs(V - V.T).max() > 0.1
    return Z, A, V, P


@pytest.mark.parametrize("n,d,beta,seed", [(1, 3, 1.0, 0), (6, 3, 0.7, 1), (11, 5, 2.0, 2), (8, 2, 0.0, 3)])
def test_attention_is_the_double_loop(n, d, beta, seed):
    Z, A, V, P = _setup(n, d, seed)
    for causal in (False, True):
        for pos in (None, P):
            np.testing.assert_allclose(
                bk.attention(Z, A, V, beta, causal, pos), _attention_loop(Z, A, V, beta, causal, pos), atol=1e-12
            )


def test_attention_scores_use_A_in_the_stated_order():
    """Score β⟨z_i, A z_j⟩, not β⟨A z_i, z_j⟩: with A = e1 e2ᵀ only z_j's 2nd coordinate matters."""
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    u = bk.attention(Z, A, np.eye(2), 1.0)
    w = np.exp([0.0, 1.0, -1.0]) / np.exp([0.0, 1.0, -1.0]).sum()
    np.testing.assert_allclose(u[0], w @ Z, atol=1e-15)


@pytest.mark.parametrize("n,d,beta,seed", [(7, 3, 1.0, 4), (16, 4, 3.0, 5)])
def test_permutation_equivariance_and_how_it_breaks(n, d, beta, seed):
    Z, A, V, P = _setup(n, d, seed)
    perm = np.random.default_rng(seed + 100).permutation(n)
    assert np.any(perm != np.arange(n))
    gap = {}
    for name, kw in (("plain", {}), ("positions", {"positions": P}), ("causal", {"causal": True})):
        gap[name] = np.abs(bk.attention(Z[perm], A, V, beta, **kw) - bk.attention(Z, A, V, beta, **kw)[perm]).max()
    scale = np.abs(bk.attention(Z, A, V, beta)).max()
    assert gap["plain"] <= 1e-13 * scale
    assert gap["positions"] > 1e-2 * scale and gap["causal"] > 1e-2 * scale


def test_attention_extreme_beta_is_stable():
    Z, A, V, _ = _setup(5, 3, 9)
    u = bk.attention(Z, A, V, 1e5)
    assert np.all(np.isfinite(u))
    S = Z @ A @ Z.T
    np.testing.assert_allclose(u, (Z @ V.T)[np.argmax(S, axis=1)], atol=1e-12)  # hard max


# --------------------------------------------------------------------------- sink
@pytest.mark.parametrize("delta", [-3.0, 0.0, 2.5, 10.0, 40.0])
def test_sink_mass_and_capacity_closed_forms(delta):
    N = np.array([1.0, 2.0, 10.0, 1e3, 1e8])
    np.testing.assert_allclose(bk.sink_mass(delta, N), np.exp(delta) / (np.exp(delta) + N - 1), rtol=1e-14)
    assert bk.sink_mass(delta, 1)[0] == 1.0
    for c in (0.01, 0.3, 0.5, 0.9, 1.0):
        nmax = bk.sink_capacity(delta, c)
        assert nmax == pytest.approx(1 + (1 - c) / c * math.exp(delta), rel=1e-14)
        assert bk.sink_mass(delta, nmax)[0] == pytest.approx(c, rel=1e-12)  # N_max is where c is reached
        below, above = bk.sink_mass(delta, [max(1.0, nmax * (1 - 1e-9)), nmax * (1 + 1e-9) + 1e-9])
        assert below >= c * (1 - 1e-12) and (c == 1.0 or above < c)


@pytest.mark.parametrize("delta,N,beta", [(0.0, 2, 1.0), (3.0, 50, 0.5), (8.0, 700, 2.0)])
def test_sink_mass_is_what_a_softmax_layer_gives(delta, N, beta):
    Z, A, V = bk.sink_example(delta, N, beta)
    u = bk.attention(Z, A, V, beta, causal=True)
    assert u[-1, 2] == pytest.approx(bk.sink_mass(delta, N)[0], rel=1e-12)
    s = np.zeros(N)
    s[0] = delta
    w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    assert u[-1, 2] == pytest.approx(w[0], rel=1e-12)


# --------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: bk.rope_similarity([1.0, np.nan], 4), "N"),
        (lambda: bk.rope_similarity([1.0], 0), "k"),
        (lambda: bk.rope_similarity([1.0], 2.5), "k"),
        (lambda: bk.rope_similarity([1.0], 4, base=0.5), "base"),
        (lambda: bk.rope_similarity([1e12], 4), "N"),
        (lambda: bk.rope_similarity(np.ones((2, 2)), 4), "N"),
        (lambda: bk.rope_similarity(np.array([1 + 1j]), 4), "N"),
        (lambda: bk.rope_similarity(np.arange(10**6), 4096), "max_work"),
        (lambda: bk.rope_largest_return(4, 10, 5), "n_to"),
        (lambda: R.rope_similarity_range(10, 5, 4), "n_to"),
        (lambda: R.rope_similarity_range(-1, 5, 4), "n_from"),
        (lambda: R.rope_similarity_range(0, 5, 0), "k"),
        (lambda: R.rope_similarity_range(0, 10**7, 1), "n_to - n_from"),
        (lambda: R.rope_similarity_range(0, 10**6, 4096), "max_work"),
        (lambda: bk.rope_window_extremes(4, [5]), "edges"),
        (lambda: bk.rope_window_extremes(4, [5, 3]), "edges"),
        (lambda: bk.rope_window_extremes(4, [0.5, 3]), "edges"),
        (lambda: bk.rope_window_extremes(4, [-1, 3]), "edges"),
        (lambda: bk.rope_window_extremes(4, [0, np.nan]), "edges"),
        (lambda: bk.rmsnorm_jacobian(np.zeros(3), 0.0), "eps"),
        (lambda: bk.rmsnorm_jacobian([1.0, np.inf], 1e-6), "x"),
        (lambda: bk.rmsnorm_jacobian([1.0], -1e-6), "eps"),
        (lambda: bk.rmsnorm_jacobian([1e200], 1e-6), "x"),
        (lambda: bk.rmsnorm_jacobian(np.ones(5000), 1e-6), "x"),
        (lambda: bk.rmsnorm_gain([], 1e-6), "x"),
        (lambda: bk.rmsnorm_gain([1.0], float("nan")), "eps"),
        (lambda: bk.splitting_defect(np.eye(2), np.eye(3), np.ones(2), [0.1]), "B"),
        (lambda: bk.splitting_defect(np.eye(2), np.eye(2), np.ones(2), [0.0]), "alphas"),
        (lambda: bk.splitting_defect(np.eye(2), np.eye(2), np.ones(2), [100.0]), "alphas"),
        (lambda: bk.splitting_defect(np.ones((2, 3)), np.eye(2), np.ones(2), [0.1]), "A"),
        (lambda: bk.splitting_defect(np.eye(2), np.eye(2), np.ones(3), [0.1]), "x"),
        (lambda: bk.trotter_defect(np.eye(2), np.eye(2) * np.nan, np.ones(2), [0.1]), "B"),
        (lambda: bk.splitting_defect(np.eye(200), np.eye(200), np.ones(200), np.full(100, 0.01)), "max_work"),
        (lambda: bk.splitting_example(1, 0), "d"),
        (lambda: bk.splitting_example(3, -1), "seed"),
        (lambda: bk.attention(np.ones((3, 2)), np.eye(3), np.eye(2), 1.0), "A"),
        (lambda: bk.attention(np.ones((3, 2)), np.eye(2), np.eye(2), -1.0), "beta"),
        (lambda: bk.attention(np.ones((3, 2)), np.eye(2), np.eye(2), 1.0, causal="yes"), "causal"),
        (lambda: bk.attention(np.ones((3, 2)), np.eye(2), np.eye(2), 1.0, positions=np.ones((2, 2))), "positions"),
        (lambda: bk.attention(np.full((3, 2), 1e200), np.eye(2), np.eye(2), 1.0), "overflow"),
        (lambda: bk.attention(np.ones((3000, 100)), np.eye(100), np.eye(100), 1.0), "max_work"),
        (lambda: bk.sink_mass(1.0, [0.5]), "N"),
        (lambda: bk.sink_mass(float("inf"), [2.0]), "delta"),
        (lambda: bk.sink_mass(1000.0, [2.0]), "delta"),
        (lambda: bk.sink_capacity(1.0, 0.0), "c"),
        (lambda: bk.sink_capacity(1.0, 1.5), "c"),
        (lambda: bk.sink_capacity(700.0, 1e-300), "overflow"),
        (lambda: bk.sink_example(1.0, 1), "N"),
    ],
)
def test_invalid_input_raises_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_max_work_can_be_raised():
    N = np.arange(12_600, dtype=float)  # 12 600 * 4000 = 5.04e7 > MAX_WORK
    with pytest.raises(ValueError, match="max_work"):
        bk.rope_similarity(N, 4000)
    with pytest.raises(ValueError, match="max_work"):
        bk.rope_similarity(N[:100], 4000, max_work=1e5)
    assert bk.rope_similarity(N[:100], 4000, max_work=5e5).shape == (100,)
    A, B, x = bk.splitting_example(100, 0)  # 60 (2d)^3 = 4.8e8 > MAX_WORK, yet fast
    with pytest.raises(ValueError, match="max_work"):
        bk.splitting_defect(A, B, x, [0.01])
    assert bk.splitting_defect(A, B, x, [0.01], max_work=1e9)[0] > 0
