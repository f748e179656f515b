"""Tests of the symmetric-score path of sim.attention (one exponential per pair when A = A^T):
against the NumPy reference in float64, both of its branches, serial, parallel and batched."""

import numpy as np
import pytest

from sim import attention as att
from sim.attention import api, kernels as K, lanes


def _sym_system(seed, n, d, scale=1.0):
    rng = np.random.default_rng(seed)
    Z0 = rng.standard_normal((n, d))
    M = rng.standard_normal((d, d))
    return Z0, scale * (M + M.T) / 2, rng.standard_normal((d, d))


CASES = [  # (seed, n, d, beta, dt, steps, identity A and V)
    (0, 1, 2, 1.0, 0.1, 5, True),
    (1, 2, 3, 9.0, 0.1, 20, True),
    (2, 32, 2, 4.0, 0.1, 30, True),
    (3, 33, 3, 2.0, 0.05, 25, False),
    (4, 19, 5, 1.5, 0.2, 12, False),
    (5, 40, 1, 2.0, 0.1, 8, False),
]


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("case", CASES)
def test_symmetric_path_matches_reference(case, flow):
    seed, n, d, beta, dt, steps, ident = case
    Z0, A, V = _sym_system(seed, n, d)
    if ident:
        A, V = None, None
    else:
        assert api._symmetric(A)
    out = att.simulate(Z0, beta, dt, steps, A, V, flow, record_every=2)
    ref = att.simulate_reference(Z0, beta, dt, steps, A, V, flow, record_every=2)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_symmetric_kernel_equals_per_row_kernel(flow):
    """The two serial kernels on the same symmetric A: same layers to rounding."""
    Z0, A, V = _sym_system(7, 29, 3)
    Z = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    a = np.empty((4, 29, 3))
    b = np.empty((4, 29, 3))
    K._run_serial(Z, 2.0, 0.1, 9, A, V, flow == "USA", 3, a)
    K._run_serial_sym(Z, 2.0, 0.1, 9, A, V, flow == "USA", 3, b)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("scale", [1.0, 400.0])
def test_symmetric_path_both_branches(flow, scale):
    """scale 400: the row shifts beta|A z_i| spread over more than _SYM_GAP, so layers take the
    per-row fallback; both give the reference."""
    Z0, A, V = _sym_system(11, 24, 3, scale)
    beta = 1.5
    Z = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    top = beta * np.linalg.norm(Z @ A, axis=1)
    assert (top.max() - top.min() > K._SYM_GAP) == (scale > 1.0)
    out = att.simulate(Z0, beta, 0.01, 6, A, np.eye(3), flow)
    ref = att.simulate_reference(Z0, beta, 0.01, 6, A, np.eye(3), flow)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("nchunks", [1, 2, 3, 7])
def test_parallel_symmetric_kernel_any_chunking(nchunks):
    Z0, A, V = _sym_system(31, 23, 3)
    Z = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    a = np.empty((4, 23, 3))
    b = np.empty((4, 23, 3))
    K._run_serial_sym(Z, 2.0, 0.1, 6, A, V, False, 2, a)
    K._run_parallel_sym(Z, 2.0, 0.1, 6, A, V, False, 2, b, nchunks)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_parallel_symmetric_path_matches_reference(flow):
    Z0, A, V = _sym_system(12, 300, 3)
    assert 300 >= att.PARALLEL_MIN_N
    out = att.simulate(Z0, 3.0, 0.1, 4, A, V, flow, record_every=2)
    ref = att.simulate_reference(Z0, 3.0, 0.1, 4, A, V, flow, record_every=2)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_batch_protocol_case_matches_reference(flow):
    """The phase-diagram case (n = 32, d = 2, A = V = I), batched, against the reference."""
    rng = np.random.default_rng(3)
    Z0s = rng.standard_normal((3, 32, 2))
    for beta in (0.1, 9.0):
        out = att.simulate_batch(Z0s, beta, 0.1, 60, flow=flow, record_every=20)
        for b in range(3):
            ref = att.simulate_reference(Z0s[b], beta, 0.1, 60, flow=flow, record_every=20)
            np.testing.assert_allclose(out[b], ref, rtol=0, atol=1e-10)


def test_symmetric_detection_is_exact():
    A = np.array([[1.0, 2.0], [2.0, 3.0]])
    assert api._symmetric(A)
    A[0, 1] += 1e-15
    assert not api._symmetric(A)


# --------------------------------------------------------------------------- lanes kernel
def _batch(seed, B, n, d):
    rng = np.random.default_rng(seed)
    Z0s = rng.standard_normal((B, n, d))
    M = rng.standard_normal((d, d))
    # V near I: a well-conditioned flow (a rotation-like V makes USA amplify rounding ~1e6-fold
    # in 24 layers, for every implementation alike)
    return Z0s, (M + M.T) / 2, np.eye(d) + 0.3 * rng.standard_normal((d, d))


LANES_CASES = [  # (seed, B, n, d, beta, dt, steps, record_every); B = 70: a full and a padded block
    (41, 70, 32, 2, 4.0, 0.1, 24, 8),
    (42, 70, 17, 3, 2.0, 0.05, 12, 5),
    (43, 33, 9, 5, 1.5, 0.2, 7, 3),
    (44, 64, 2, 1, 3.0, 0.1, 6, 2),
]


@pytest.mark.parametrize("flow", ["SA", "USA"])
@pytest.mark.parametrize("case", LANES_CASES)
def test_lanes_kernel_matches_reference(case, flow):
    """Systems in SIMD lanes, general symmetric A and general V: every system, every recorded
    layer equals the NumPy reference (1e-10), including the copies that pad the last block."""
    seed, B, n, d, beta, dt, steps, rec = case
    Z0s, A, V = _batch(seed, B, n, d)
    assert api._choose_kernel(B, n, beta, A, 2) == "lanes"
    out = att.simulate_batch(Z0s, beta, dt, steps, A, V, flow, record_every=rec)
    for b in sorted({0, 1, B // 2, B - 2, B - 1}):
        ref = att.simulate_reference(Z0s[b], beta, dt, steps, A, V, flow, record_every=rec)
        np.testing.assert_allclose(out[b], ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("flow", ["SA", "USA"])
def test_lanes_kernel_equals_per_system_kernel(flow):
    """The phase-diagram case (A = V = I, n = 32, d = 2): the lanes kernel and the per-system
    symmetric kernel give the same layers to rounding, on all 96 systems."""
    Z0s, _, _ = _batch(45, 96, 32, 2)
    Zs = Z0s / np.linalg.norm(Z0s, axis=2, keepdims=True)
    a = np.empty((96, 4, 32, 2))
    b = np.empty((96, 4, 32, 2))
    I2 = np.eye(2)
    lanes.run_lanes(Zs, 9.0, 0.1, 30, I2, I2, flow == "USA", 10, a)
    K._run_batch(Zs, 9.0, 0.1, 30, I2, I2, flow == "USA", 10, b, True)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_choose_kernel_dispatch():
    I2 = np.eye(2)
    nonsym = np.array([[1.0, 0.5], [0.0, 1.0]])
    assert api._choose_kernel(2048, 32, 9.0, I2, 1) == "lanes"
    assert api._choose_kernel(2048, 32, 9.0, nonsym, 2) == "batch"  # A != A^T
    assert api._choose_kernel(2048, 32, 200.0, I2, 2) == "batch_sym"  # beta|A| > 140
    assert api._choose_kernel(att.LANES_MIN_B - 1, 32, 1.0, I2, 2) == "batch_sym"
    assert api._choose_kernel(64, att.LANES_MAX_N + 1, 1.0, I2, 2) == "batch_sym"
    assert api._choose_kernel(0, 32, 1.0, I2, 2) == "serial_sym"
    assert api._choose_kernel(0, 300, 1.0, nonsym, 2) == "parallel"
    assert api._choose_kernel(0, 300, 1.0, nonsym, 1) == "serial"


def test_lanes_bound_keeps_symmetric_form_valid():
    """With beta |A|_2 <= _LANES_SCORE_MAX every shift q_i <= 70, so the spread of top and the
    gaps top_i - s_ii are <= 280 < _SYM_GAP: the lanes kernel needs no per-layer fallback."""
    assert 2 * att.LANES_SCORE_MAX <= K._SYM_GAP
    Z0s, A, V = _batch(46, 40, 8, 3)
    A = A * (att.LANES_SCORE_MAX / 3.0 / np.linalg.norm(A, 2))  # beta |A|_2 = 140 exactly-ish
    assert api._choose_kernel(40, 8, 3.0, A, 2) == "lanes"
    out = att.simulate_batch(Z0s, 3.0, 0.01, 5, A, V, "USA")
    for b in (0, 39):
        ref = att.simulate_reference(Z0s[b], 3.0, 0.01, 5, A, V, "USA")
        np.testing.assert_allclose(out[b], ref, rtol=0, atol=1e-10)


def test_vector_exp_within_one_ulp():
    """The engine's exp (shifter rounding, degree-11 polynomial) is at most 1 ulp from np.exp over
    the whole range it is used on, and overflows only from 1023.5 ln 2 on (documented)."""
    rng = np.random.default_rng(8)
    x = np.concatenate(
        [np.linspace(-708.0, 709.4, 400_001), rng.uniform(-40.0, 0.0, 200_000), rng.uniform(-1e-6, 1e-6, 1000)]
    )
    ref = np.exp(x)
    ulp = np.abs(att.fast_exp(x) - ref) / np.spacing(ref)
    assert ulp.max() <= 1.0
    assert np.isinf(att.fast_exp(np.array([709.45]))[0])
    assert att.fast_exp(np.array([-708.5]))[0] == 0.0
