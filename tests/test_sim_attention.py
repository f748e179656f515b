"""Tests of sim.attention: compiled paths against the NumPy reference, invariants, bad input."""

import numpy as np
import pytest

from sim import attention as att
from sim.attention import kernels as K


def _system(seed, n, d, general=True):
    rng = np.random.default_rng(seed)
    Z0 = rng.standard_normal((n, d))
    if not general:
        return Z0, None, None
    A = rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))
    return Z0, A, V


CASES = [  # (seed, n, d, beta, dt, steps, general, record_every)
    (0, 2, 3, 1.0, 0.1, 20, False, 1),
    (1, 7, 2, 0.3, 0.25, 15, True, 1),
    (2, 33, 3, 4.0, 0.05, 25, True, 4),
    (3, 16, 5, 9.0, 0.1, 12, True, 5),
    (4, 64, 3, 1.5, 0.2, 10, False, 3),
    (5, 1, 3, 2.0, 0.1, 5, True, 1),
    (6, 40, 1, 2.0, 0.1, 8, True, 2),
]


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("case", CASES)
def test_simulate_matches_reference(case, flow):
    seed, n, d, beta, dt, steps, general, rec = case
    Z0, A, V = _system(seed, n, d, general)
    ref = att.simulate_reference(Z0, beta, dt, steps, A, V, flow, record_every=rec)
    out = att.simulate(Z0, beta, dt, steps, A, V, flow, record_every=rec)
    assert out.shape == (steps // rec + 1, n, d) == ref.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(out[0], Z0 / np.linalg.norm(Z0, axis=1, keepdims=True), atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-13)


def test_default_contract_shape_and_identity_defaults():
    Z0, _, _ = _system(11, 5, 3, general=False)
    out = att.simulate(Z0, 2.0, 0.1, 7)
    assert out.shape == (8, 5, 3)
    np.testing.assert_allclose(out, att.simulate(Z0, 2.0, 0.1, 7, np.eye(3), np.eye(3), "SA"), atol=0)


def test_one_layer_by_hand():
    """One SA layer written out for two tokens, A = V = I."""
    z1, z2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    beta, dt = 1.3, 0.4
    w11 = np.exp(beta) / (np.exp(beta) + 1.0)
    u1 = w11 * z1 + (1 - w11) * z2
    y = z1 + dt * u1
    out = att.simulate(np.array([z1, z2]), beta, dt, 1)
    np.testing.assert_allclose(out[1, 0], y / np.linalg.norm(y), atol=1e-15)
    # USA: weights e^{beta<z1,zj>}/n, no renormalisation
    u1 = (np.exp(beta) * z1 + 1.0 * z2) / 2
    y = z1 + dt * u1
    out = att.simulate(np.array([z1, z2]), beta, dt, 1, flow="USA")
    np.testing.assert_allclose(out[1, 0], y / np.linalg.norm(y), atol=1e-15)


def test_usa_large_beta_does_not_overflow():
    Z0, A, V = _system(7, 12, 3)
    out = att.simulate(Z0, 2000.0, 0.1, 10, A, V, "USA")
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, att.simulate_reference(Z0, 2000.0, 0.1, 10, A, V, "USA"), atol=1e-10)


def test_two_points_follow_half_angle_direction():
    """Two symmetric points with A = V = I approach each other (SA and USA)."""
    th = 1.0
    Z0 = np.array([[np.cos(th), np.sin(th), 0.0], [np.cos(th), -np.sin(th), 0.0]])
    for flow in ("SA", "USA"):
        out = att.simulate(Z0, 1.0, 0.05, 40, flow=flow)
        ang = np.arccos(np.clip(np.einsum("tk,tk->t", out[:, 0], out[:, 1]), -1, 1)) / 2
        assert np.all(np.diff(ang) < 0)
        np.testing.assert_allclose(out[:, 0, 2], 0.0, atol=1e-15)  # stays in its plane


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(Z0=np.zeros((3, 3))), "Z0"),
        (dict(Z0=np.array([[1.0, np.nan, 0.0]])), "Z0"),
        (dict(Z0=np.ones(3)), "Z0"),
        (dict(Z0=np.ones((0, 3))), "Z0"),
        (dict(beta=0.0), "beta"),
        (dict(beta=-1.0), "beta"),
        (dict(beta=np.inf), "beta"),
        (dict(beta="2"), "beta"),
        (dict(dt=0.0), "dt"),
        (dict(dt=np.nan), "dt"),
        (dict(steps=-1), "steps"),
        (dict(steps=2.5), "steps"),
        (dict(steps=10**9), "steps"),
        (dict(A=np.eye(2)), "A"),
        (dict(A=np.full((3, 3), np.inf)), "A"),
        (dict(V=np.ones((3, 4))), "V"),
        (dict(flow="sa"), "flow"),
        (dict(record_every=0), "record_every"),
        (dict(Z0=np.ones((1000, 3)), steps=100_000, record_every=100_000), "steps"),
    ],
)
def test_bad_input_raises(kwargs, name):
    args = dict(Z0=np.eye(3), beta=1.0, dt=0.1, steps=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        att.simulate(**args)
    with pytest.raises(ValueError, match=name):
        att.simulate_reference(**args)


def test_vanishing_update_raises_naming_dt():
    # V = -I, one token: z + dt*(-z) = 0 at dt = 1
    with pytest.raises(ValueError, match="dt"):
        att.simulate(np.array([[1.0, 0.0]]), 1.0, 1.0, 2, V=-np.eye(2))


# ----------------------------------------------------------------------------- fast paths
def test_fast_exp_matches_numpy_over_wide_range():
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            np.linspace(-708.0, 709.0, 100_001),
            rng.uniform(-40.0, 0.0, 50_000),
            rng.uniform(-1e-3, 1e-3, 1000),
            [0.0, -0.0, 1.0, -1.0, np.log(2.0)],
        ]
    )
    y = att.fast_exp(x)
    ref = np.exp(x)
    assert np.max(np.abs(y - ref) / ref) < 1e-15
    assert att.fast_exp(np.array([0.0]))[0] == 1.0
    # large negative arguments go to 0 gracefully (no nan, no negative, monotone)
    far = np.array([-708.5, -720.0, -745.0, -746.0, -1e4, -1e300])
    yf = att.fast_exp(far)
    assert np.all(yf >= 0.0) and np.all(yf <= 3.4e-308) and np.all(np.isfinite(yf))


BIG_CASES = [  # enough tokens to take the parallel path (n >= PARALLEL_MIN_N)
    (21, 300, 3, 3.0, 0.1, 6, 2),
    (22, 257, 2, 0.7, 0.3, 5, 1),
    (23, 260, 6, 12.0, 0.05, 4, 4),
]


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("case", BIG_CASES)
def test_parallel_path_matches_reference(case, flow):
    seed, n, d, beta, dt, steps, rec = case
    assert n >= att.PARALLEL_MIN_N
    Z0, A, V = _system(seed, n, d)
    out = att.simulate(Z0, beta, dt, steps, A, V, flow, record_every=rec)
    ref = att.simulate_reference(Z0, beta, dt, steps, A, V, flow, record_every=rec)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("nchunks", [1, 2, 3, 7])
def test_parallel_kernel_any_chunking(nchunks):
    """The parallel kernel itself on small n and uneven chunks equals the serial one."""
    Z0, A, V = _system(31, 23, 3)
    Z = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    a = np.empty((4, 23, 3))
    b = np.empty((4, 23, 3))
    K._run_serial(Z, 2.0, 0.1, 6, A, V, False, 2, a)
    K._run_parallel(Z, 2.0, 0.1, 6, A, V, False, 2, b, nchunks)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("d", [2, 3, 4])
def test_batch_equals_one_by_one(flow, d):
    rng = np.random.default_rng(40 + d)
    Z0s = rng.standard_normal((5, 19, d))
    A = rng.standard_normal((d, d))
    V = rng.standard_normal((d, d))
    out = att.simulate_batch(Z0s, 2.5, 0.1, 12, A, V, flow, record_every=4)
    assert out.shape == (5, 4, 19, d)
    for b in range(5):
        ref = att.simulate_reference(Z0s[b], 2.5, 0.1, 12, A, V, flow, record_every=4)
        np.testing.assert_allclose(out[b], ref, rtol=0, atol=1e-10)


def test_batch_bad_input():
    good = np.ones((2, 3, 3))
    with pytest.raises(ValueError, match="Z0s"):
        att.simulate_batch(np.ones((3, 3)), 1.0, 0.1, 2)
    with pytest.raises(ValueError, match="Z0s"):
        att.simulate_batch(np.zeros((2, 3, 3)), 1.0, 0.1, 2)
    with pytest.raises(ValueError, match="beta"):
        att.simulate_batch(good, -1.0, 0.1, 2)
    with pytest.raises(ValueError, match="steps"):
        att.simulate_batch(np.ones((10_000, 100, 3)), 1.0, 0.1, 10_000, record_every=10_000)
    with pytest.raises(ValueError, match="record_every"):
        att.simulate_batch(good, 1.0, 0.1, 2, record_every=0)


def test_long_run_stays_on_sphere_and_clusters():
    """Hemisphere start, A = V = I: the diameter shrinks (a coarse sanity check)."""
    rng = np.random.default_rng(5)
    Z0 = rng.standard_normal((50, 3))
    Z0[:, 2] = np.abs(Z0[:, 2]) + 0.1
    out = att.simulate(Z0, 1.0, 0.2, 300, record_every=100)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-13)
    G = np.einsum("ik,jk->ij", out[-1], out[-1])
    assert G.min() > 0.999


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("beta", [40.0, 3000.0])
def test_softmax_shift_branches(flow, beta):
    """Kernels shift by beta*|A^T z_i| when close to the self score, else by the row maximum
    (large beta, general A); both must equal the reference (which always uses the maximum)."""
    Z0, A, V = _system(77, 30, 3)
    Zn = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    gap = beta * (np.linalg.norm(Zn @ A, axis=1) - np.einsum("ij,ij->i", Zn @ A.T, Zn))
    assert (gap.max() > K._SHIFT_GAP) == (beta > 1000)  # both branches are exercised
    out = att.simulate(Z0, beta, 0.02, 8, A, V, flow)
    ref = att.simulate_reference(Z0, beta, 0.02, 8, A, V, flow)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


def test_concurrent_calls_from_threads():
    """Sessions call the engine from several threads at once (nogil kernels, parallel path)."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(_system(90 + k, 300 if k % 2 else 40, 3), 1.0 + k) for k in range(6)]
    expect = [att.simulate(Z0, b, 0.1, 5, A, V) for (Z0, A, V), b in jobs]
    with ThreadPoolExecutor(max_workers=3) as ex:
        got = list(ex.map(lambda job: att.simulate(job[0][0], job[1], 0.1, 5, job[0][1], job[0][2]), jobs))
    for g, e in zip(got, expect):
        np.testing.assert_array_equal(g, e)


# ----------------------------------------------------------------------------- from the numerical review
def _naive_longdouble(Z0, beta, dt, A, V, flow):
    """One layer written out plainly in 80-bit long double (exponents up to e^11356): no shift,
    no rescaling; an independent check of the shifted float64 paths."""
    Z = np.asarray(Z0, dtype=np.longdouble)
    Z = Z / np.sqrt((Z * Z).sum(axis=1, keepdims=True))
    A = np.asarray(A, dtype=np.longdouble)
    V = np.asarray(V, dtype=np.longdouble)
    n = Z.shape[0]
    out = np.empty_like(Z)
    for i in range(n):
        w = np.array([np.exp(np.longdouble(beta) * (Z[i] @ (A @ Z[j]))) for j in range(n)])
        w = w / (w.sum() if flow == "SA" else n)
        y = Z[i] + np.longdouble(dt) * sum(w[j] * (V @ Z[j]) for j in range(n))
        out[i] = y / np.sqrt((y * y).sum())
    return out.astype(np.float64)


@pytest.mark.skipif(np.finfo(np.longdouble).maxexp < 16384, reason="needs 80-bit long double")
@pytest.mark.parametrize("beta", [1.0, 400.0, 1000.0, 3000.0, 8000.0])
@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_usa_and_sa_exact_for_large_beta(flow, beta):
    """Default_rng(1), shapes (3,2), (2,2), beta = 1000 gave 'dt too large' for USA (the
    Cauchy-Schwarz shift made the unnormalised vector underflow). Every beta gives the layer."""
    rng = np.random.default_rng(1)
    Z0, A = rng.standard_normal((3, 2)), rng.standard_normal((2, 2))
    V = np.array([[0.7, -1.2], [0.4, 1.1]])
    for VV in (None, V):
        expect = _naive_longdouble(Z0, beta, 0.1, A, np.eye(2) if VV is None else VV, flow)
        for f in (att.simulate, att.simulate_reference):
            out = f(Z0, beta, 0.1, 1, A, VV, flow)
            np.testing.assert_allclose(out[1], expect, rtol=0, atol=1e-12)
    a = att.simulate(Z0, beta, 0.1, 40, A, V, flow)
    b = att.simulate_reference(Z0, beta, 0.1, 40, A, V, flow)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_one_layer_nonsymmetric_A_V_by_hand():
    """Score <z_i, A z_j> = z_i^T A z_j, value V z_j, written out with numbers; A -> A^T or
    V -> V^T anywhere changes every value below."""
    z1, z2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    A = np.array([[0.5, 2.0], [-1.0, 0.0]])
    V = np.array([[1.0, 3.0], [0.0, 1.0]])
    beta, dt = 0.7, 0.3
    # scores: s11 = A11 = 0.5, s12 = A12 = 2, s21 = A21 = -1, s22 = A22 = 0
    # values: V z1 = (1, 0), V z2 = (3, 1)
    for flow in ("SA", "USA"):
        e11, e12, e21, e22 = np.exp(beta * 0.5), np.exp(beta * 2.0), np.exp(-beta), 1.0
        if flow == "SA":
            w11, w12 = e11 / (e11 + e12), e12 / (e11 + e12)
            w21, w22 = e21 / (e21 + e22), e22 / (e21 + e22)
        else:
            w11, w12, w21, w22 = e11 / 2, e12 / 2, e21 / 2, e22 / 2
        y1 = np.array([1.0 + dt * (w11 * 1.0 + w12 * 3.0), dt * w12 * 1.0])
        y2 = np.array([dt * (w21 * 1.0 + w22 * 3.0), 1.0 + dt * w22 * 1.0])
        expect = np.array([y1 / np.linalg.norm(y1), y2 / np.linalg.norm(y2)])
        for f in (att.simulate, att.simulate_reference):
            out = f(np.array([z1, z2]), beta, dt, 1, A, V, flow)
            np.testing.assert_allclose(out[1], expect, rtol=0, atol=1e-14)
            bad = f(np.array([z1, z2]), beta, dt, 1, A.T, V, flow)
            assert np.max(np.abs(bad[1] - expect)) > 1e-2
            bad = f(np.array([z1, z2]), beta, dt, 1, A, V.T, flow)
            assert np.max(np.abs(bad[1] - expect)) > 1e-2
        batch = att.simulate_batch(np.array([[z1, z2]]), beta, dt, 1, A, V, flow)
        np.testing.assert_allclose(batch[0, 1], expect, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(beta=1e308), "beta too large.*scores"),
        (dict(beta=1e301), "beta too large.*scores"),
        (dict(A=np.full((3, 3), 1e300)), "A too large.*scores"),
        (dict(Z0=np.eye(3) + 1j), "Z0 must be real"),
        (dict(A=np.eye(3) * (1 + 1j)), "A must be real"),
        (dict(V=[[1j, 0, 0], [0, 1, 0], [0, 0, 1]]), "V must be real"),
    ],
)
def test_huge_or_complex_input_names_the_real_reason(kwargs, match):
    args = dict(Z0=np.array([[1.0, 0.2, 0.0], [0.1, 1.0, 0.3], [0.0, 0.4, 1.0]]), beta=1.0, dt=0.1, steps=3)
    args.update(kwargs)
    for f in (att.simulate, att.simulate_reference):
        with pytest.raises(ValueError, match=match):
            f(**args)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_huge_V_and_huge_or_tiny_tokens_are_computed(flow):
    """V = 1e308 I and token entries of 1e200 or 1e-200 (which used to report 'dt too large'
    or return zeros) give the map, by its scale invariances: V = sI with dt is V = I with s*dt;
    a token's length does not matter."""
    rng = np.random.default_rng(4)
    Z0, A = rng.standard_normal((5, 3)), rng.standard_normal((3, 3))
    for f in (att.simulate, att.simulate_reference):
        ref = f(Z0, 2.0, 0.1, 6, A, None, flow)
        np.testing.assert_allclose(f(Z0 * 1e200, 2.0, 0.1, 6, A, None, flow), ref, atol=1e-14)
        np.testing.assert_allclose(f(Z0 * 1e-200, 2.0, 0.1, 6, A, None, flow), ref, atol=1e-14)
        np.testing.assert_allclose(
            f(Z0, 2.0, 1e-300, 6, A, 1e299 * np.eye(3), flow), f(Z0, 2.0, 0.1, 6, A, None, flow), atol=1e-13
        )
        big = f(Z0, 2.0, 0.1, 3, A, 1e308 * np.eye(3), flow)
        np.testing.assert_allclose(big, f(Z0, 2.0, 1e307, 3, A, None, flow), atol=1e-13)
        assert np.all(np.isfinite(big))
        np.testing.assert_allclose(np.linalg.norm(big, axis=-1), 1.0, atol=1e-14)


def test_max_work_raises_the_bound_explicitly():
    Z0 = np.ones((10, 3)) + np.eye(10, 3)
    with pytest.raises(ValueError, match="max_work"):
        att.simulate(Z0, 1.0, 0.1, 1000, max_work=1e4)
    assert att.simulate(Z0, 1.0, 0.1, 2, max_work=1e4).shape == (3, 10, 3)
    with pytest.raises(ValueError, match="steps"):
        att.simulate(Z0, 1.0, 0.1, 10**10 // 300 + 1, record_every=10**9)  # default bound: 1e10
    assert att.simulate_batch(Z0[None], 1.0, 0.1, 400, record_every=400, max_work=2e5).shape == (1, 2, 10, 3)
