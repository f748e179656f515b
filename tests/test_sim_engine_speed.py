"""Tests of the symmetric-score path of sim.attention (one exponential per pair when A = A^T):
against the NumPy reference in float64, both of its branches, serial, parallel and batched."""
import numpy as np
import pytest

from sim import attention as att


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
        assert att._symmetric(A)
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
    att._run_serial(Z, 2.0, 0.1, 9, A, V, flow == "USA", 3, a)
    att._run_serial_sym(Z, 2.0, 0.1, 9, A, V, flow == "USA", 3, b)
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
    assert (top.max() - top.min() > att._SYM_GAP) == (scale > 1.0)
    out = att.simulate(Z0, beta, 0.01, 6, A, np.eye(3), flow)
    ref = att.simulate_reference(Z0, beta, 0.01, 6, A, np.eye(3), flow)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("nchunks", [1, 2, 3, 7])
def test_parallel_symmetric_kernel_any_chunking(nchunks):
    Z0, A, V = _sym_system(31, 23, 3)
    Z = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    a = np.empty((4, 23, 3))
    b = np.empty((4, 23, 3))
    att._run_serial_sym(Z, 2.0, 0.1, 6, A, V, False, 2, a)
    att._run_parallel_sym(Z, 2.0, 0.1, 6, A, V, False, 2, b, nchunks)
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
    assert att._symmetric(A)
    A[0, 1] += 1e-15
    assert not att._symmetric(A)
