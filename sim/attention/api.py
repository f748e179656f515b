"""The public functions of :mod:`sim.attention`: validate, pick a kernel, run it.

Each function checks its arguments (:mod:`sim.attention.validation`), then either runs the plain
NumPy reference (while the kernels are still compiling at server start, :mod:`sim._ready`) or
the compiled kernel that :func:`_choose_kernel` picks (:mod:`sim.attention.kernels`,
:mod:`sim.attention.lanes`); every kernel is tested equal to the reference.
"""

from __future__ import annotations

import numba
import numpy as np

from sim import _interrupt, _ready
from sim.attention import kernels as _k
from sim.attention.lanes import F32_SCORE_MAX, LANES_SCORE_MAX, run_lanes
from sim.attention.reference import simulate_reference, simulate_reference_float32
from sim.attention.validation import MAX_WORK, _check_output, _check_size, _normalise_rows, _prepare, _prepare_batch

__all__ = ["simulate", "simulate_batch", "simulate_batch_float32", "warm"]

#: below this many tokens one thread is faster than a parallel region per layer
PARALLEL_MIN_N = 256
#: the lanes kernel (systems in SIMD lanes) is chosen for at least this many systems of at most
#: LANES_MAX_N tokens: a block is padded to a full set of lanes, so for fewer systems the
#: per-system kernel is faster (the crossover was measured on one thread at n = 32);
#: LANES_MAX_N = 64 is not tuned (for larger n the per-system kernels vectorise over tokens)
LANES_MIN_B = 32
LANES_MAX_N = 64


def _symmetric(A) -> bool:
    """True when A = A^T exactly (then one exponential serves both tokens of a pair)."""
    return bool(np.array_equal(A, A.T))


def _choose_kernel(B: int, n: int, beta: float, A, threads: int) -> str:
    """The one place that picks the compiled path (every path is tested against the reference).

    One system (``B = 0``, :func:`simulate`): "serial_sym" / "serial" below PARALLEL_MIN_N tokens
    or on one thread, else "parallel_sym" / "parallel" (over tokens). Many systems
    (:func:`simulate_batch`): "lanes" (systems in SIMD lanes) for a symmetric A with
    beta |A|_2 <= LANES_SCORE_MAX, B >= LANES_MIN_B and n <= LANES_MAX_N, else "batch_sym" /
    "batch" (parallel over systems, one system per thread at a time).
    """
    sym = _symmetric(A)
    if B == 0:
        kind = "serial" if n < PARALLEL_MIN_N or threads == 1 else "parallel"
        return kind + ("_sym" if sym else "")
    if sym and B >= LANES_MIN_B and n <= LANES_MAX_N and beta * np.linalg.norm(A, 2) <= LANES_SCORE_MAX:
        return "lanes"
    return "batch_sym" if sym else "batch"


def _run(Z, beta, dt, steps, A, V, usa, record_every, out):
    threads = numba.get_num_threads()
    kind = _choose_kernel(0, Z.shape[0], beta, A, threads)
    if kind.startswith("serial"):
        kernel, extra = (_k._run_serial_sym if kind == "serial_sym" else _k._run_serial), ()
    else:
        kernel = _k._run_parallel_sym if kind == "parallel_sym" else _k._run_parallel
        extra = (min(threads, Z.shape[0]),)
    n, d = Z.shape
    per = _chunk_layers(n, d, steps, record_every)
    if per >= steps:
        kernel(Z, beta, dt, steps, A, V, usa, record_every, out, *extra)
        return
    # In chunks of ``per`` layers (a multiple of record_every), a stopping point between two
    # (sim._interrupt): each chunk starts from the state the previous one recorded last, so the
    # kernel does the same operations in the same order as one call (tested bitwise).
    s0 = 0
    while s0 < steps:
        _interrupt.checkpoint()
        k = min(per, steps - s0)
        r0 = s0 // record_every
        kernel(
            Z if s0 == 0 else out[r0],
            beta,
            dt,
            k,
            A,
            V,
            usa,
            record_every,
            out[r0 : r0 + k // record_every + 1],
            *extra,
        )
        s0 += k


def _chunk_layers(n: int, d: int, steps: int, record_every: int) -> int:
    """Layers per chunk of a stoppable run: ``steps`` (one call) when no stopping hook is
    installed or the run is short, else about ``_interrupt.CHUNK_WORK`` of work, rounded to
    whole records."""
    if not _interrupt.active():
        return steps
    per = int(_interrupt.CHUNK_WORK // max(1, n * n * d))
    per = max(record_every, per - per % record_every)
    return steps if per >= steps else per


def _run_many(Zs, beta, dt, steps, A, V, usa, record_every, out):
    B, n, _ = Zs.shape
    kind = _choose_kernel(B, n, beta, A, numba.get_num_threads())
    if kind == "lanes":
        run_lanes(Zs, beta, dt, steps, A, V, usa, record_every, out)
    else:
        _k._run_batch(Zs, beta, dt, steps, A, V, usa, record_every, out, kind == "batch_sym")


def _simulate_many(Z0s, beta, dt, steps, A, V, flow, record_every, max_work, dtype):
    """:func:`simulate_batch` (float64) and :func:`simulate_batch_float32` (float32): check, then
    the NumPy reference while the kernels compile, else the kernels."""
    f32 = dtype == np.float32
    Z0s, beta, dt, steps, A, V, flow, record_every = _prepare_batch(
        Z0s, beta, dt, steps, A, V, flow, record_every, max_work
    )
    B, n, d = Z0s.shape
    if f32:
        _check_float32(A, beta)
    _check_size("Z0s", B, steps, n, d, record_every, max_work)
    Zs = _normalise_rows("Z0s", Z0s)
    out = np.empty((B, steps // record_every + 1, n, d), dtype)
    if not _ready.ready("attention"):  # kernels still compiling at server start (sim._ready)
        reference = simulate_reference_float32 if f32 else simulate_reference
        for b in range(B):
            out[b] = reference(Zs[b], beta, dt, steps, A, V, flow, record_every, max_work=max_work)
        return out
    if f32:
        run_lanes(Zs, beta, dt, steps, A, V, flow == "USA", record_every, out)
    else:
        _run_many(Zs, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def simulate(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *, max_work=MAX_WORK):
    r"""Run ``steps`` layers of the attention map from ``Z0``.

    Parameters
    ----------
    Z0 : array_like, shape (n, d)
        Initial tokens; each nonzero row is normalised onto :math:`S^{d-1}`.
    beta : float
        Inverse temperature :math:`\beta > 0`.
    dt : float
        Residual step :math:`\Delta > 0` (continuous depth advances by ``dt`` per layer).
    steps : int
        Number of layers, ``>= 0``; ``steps*n*n*d`` is capped at ``max_work``.
    A, V : array_like, shape (d, d), optional
        Query-key matrix :math:`A = Q^\top K` and value matrix; identity when omitted.
    flow : {"SA", "USA"}
        Softmax-normalised or unnormalised (``1/n``) attention.
    record_every : int
        Keep every ``record_every``-th layer (layer 0 is always kept).
    max_work : float, keyword-only
        Bound on ``steps*n*n*d`` (default ``MAX_WORK`` = 1e10, a few seconds); raise it to
        allow a longer run.

    Returns
    -------
    ndarray, shape (steps // record_every + 1, n, d)
        ``out[r]`` is the configuration after ``r*record_every`` layers.

    Raises
    ------
    ValueError
        Naming the argument for invalid input (complex entries included), naming ``beta`` (or
        ``A``) when :math:`\beta\lVert A\rVert_2 > 10^{300}` (the scores would not be floats),
        and naming ``dt`` if some :math:`z_i + \Delta u_i` is exactly 0 (possible only for V
        with negative directions). Any finite ``V`` and any row scale of ``Z0`` work.

    Notes
    -----
    .. math::

        z_i^{+} = \frac{z_i + \Delta u_i}{\lVert z_i + \Delta u_i\rVert},\quad
        u_i = \sum_j w_{ij} V z_j .

    The score is :math:`\langle z_i, A z_j\rangle = z_i^\top A z_j` and the value is
    :math:`V z_j` (matrix times vector; neither matrix is transposed).
    """
    if not _ready.ready("attention"):  # kernels still compiling at server start (sim._ready)
        return simulate_reference(Z0, beta, dt, steps, A, V, flow, record_every, max_work=max_work)
    Z, beta, dt, steps, A, V, flow, record_every = _prepare(Z0, beta, dt, steps, A, V, flow, record_every, max_work)
    n, d = Z.shape
    out = np.empty((steps // record_every + 1, n, d))
    _run(Z, beta, dt, steps, A, V, flow == "USA", record_every, out)
    return _check_output(out)


def simulate_batch(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *, max_work=MAX_WORK):
    """Run :func:`simulate` on ``B`` independent systems.

    Parameters
    ----------
    Z0s : array_like, shape (B, n, d)
        The initial tokens of each system.
    beta, dt, steps, A, V, flow, record_every, max_work
        As in :func:`simulate`; ``B*steps*n*n*d`` is capped at ``max_work``.

    Returns
    -------
    ndarray, shape (B, steps // record_every + 1, n, d)
    """
    return _simulate_many(Z0s, beta, dt, steps, A, V, flow, record_every, max_work, np.float64)


def _check_float32(A, beta):
    """The float32 kernel's conditions: A symmetric; beta |A|_2 <= F32_SCORE_MAX, or
    <= LANES_SCORE_MAX when A is a positive multiple of the identity (every row's largest term is
    then its diagonal term, 1)."""
    if not _symmetric(A):
        raise ValueError(
            "A must be symmetric (A = A^T) for the float32 path: its kernel computes one "
            "exponential per pair of tokens; use simulate_batch for a general A"
        )
    d = A.shape[0]
    scalar = d > 0 and A[0, 0] > 0.0 and np.array_equal(A, A[0, 0] * np.eye(d))
    bound = LANES_SCORE_MAX if scalar else F32_SCORE_MAX
    score = beta * float(np.linalg.norm(A, 2))
    if score > bound:
        raise ValueError(
            f"beta too large for the float32 path: beta*||A||_2 = {score:.3g} > {bound:g} "
            f"({'A a multiple of I' if scalar else 'general symmetric A'}); beyond it the "
            "float32 weights could underflow: use simulate_batch (float64)"
        )


def simulate_batch_float32(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=1, *, max_work=MAX_WORK):
    r""":func:`simulate_batch` in float32: the lanes kernel compiled for float32.

    For callers that need no float64 accuracy (cluster counts at a threshold; the hemisphere
    page's phase diagram). Same layer map and formulas as :func:`simulate_batch` (one
    exponential per pair of tokens). Rounding is float32 (unit roundoff 6e-8) in every score,
    exponential (:func:`sim.attention.fast_exp_float32`, about 1 ulp) and sum, so trajectories
    differ from the float64 ones by about 1e-6 after a few layers, more where the dynamics
    amplify differences (near a saddle).

    Parameters
    ----------
    Z0s, beta, dt, steps, A, V, flow, record_every, max_work
        As in :func:`simulate_batch`, with two more conditions: ``A`` symmetric, and
        :math:`\beta\lVert A\rVert_2 \le` ``F32_SCORE_MAX`` = 25, or :math:`\le 140` when ``A``
        is a positive multiple of the identity (the default): beyond that the float32 weights
        could underflow.

    Returns
    -------
    ndarray of float32, shape (B, steps // record_every + 1, n, d)

    Raises
    ------
    ValueError
        As :func:`simulate_batch`, and when a condition above fails.
    """
    return _simulate_many(Z0s, beta, dt, steps, A, V, flow, record_every, max_work, np.float32)


def warm() -> None:
    r"""Compile (or load from the on-disk cache) every kernel the public functions call, on tiny
    inputs and with the argument types they pass (see :mod:`sim.warm`).

    Returns
    -------
    None
    """
    rng = np.random.default_rng(0)
    for d in (2, 3, 4):
        Z = rng.standard_normal((4, d))
        out = np.empty((2, 4, d))
        Zn = Z / np.linalg.norm(Z, axis=1, keepdims=True)
        I = np.eye(d)
        for usa in (False, True):
            _k._run_serial(Zn, 1.0, 0.1, 1, I, I, usa, 1, out)
            _k._run_parallel(Zn, 1.0, 0.1, 1, I, I, usa, 1, out, 2)
            _k._run_serial_sym(Zn, 1.0, 0.1, 1, I, I, usa, 1, out)
            _k._run_parallel_sym(Zn, 1.0, 0.1, 1, I, I, usa, 1, out, 2)
        simulate_batch(Z[None], 1.0, 0.1, 1)
        simulate_batch(Z[None], 1.0, 0.1, 1, A=Z.T @ Z)
        Zs = np.repeat(Zn[None], 2, axis=0)
        for dtype in (np.float64, np.float32):
            for usa in (False, True):
                run_lanes(Zs, 1.0, 0.1, 1, I, I, usa, 1, np.empty((2, 2, 4, d), dtype))
