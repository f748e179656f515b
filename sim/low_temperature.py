r"""Low temperature: concentration near :math:`\Pi_\sharp\rho_0`, then drift (``docs/constructions.md``,
"Low temperature: concentration, then drift").

Tokens :math:`z_i\in S^{d-1}` follow the normalised attention (SA) layer map of
:mod:`sim.attention` with :math:`A = B = Q^\top K` (invertible) and value matrix :math:`V`,
where :math:`S = VB^\top` is symmetric with a spectral gap :math:`\mu_1 > \mu_2`.

As :math:`\beta\to\infty` the softmax average of a measure with full support concentrates
on the maximiser :math:`y^\ast = B^\top z/\lVert B^\top z\rVert` of
:math:`y\mapsto\langle z, By\rangle`, so each token moves by the *zero-temperature* field

.. math::

    \dot z = P_z\,\frac{S z}{\lVert B^\top z\rVert},\qquad P_z = I - zz^\top ,

a time-changed Oja flow :math:`z(t) = e^{s(t)S}z_0/\lVert e^{s(t)S}z_0\rVert`,
:math:`\dot s = 1/\lVert B^\top z\rVert`. It converges to the projection

.. math::

    \Pi(z) = \frac{P_1 z}{\lVert P_1 z\rVert},

:math:`P_1` the orthogonal projector onto the eigenspace of the largest eigenvalue
:math:`\mu_1` of :math:`S`. The source's theorem bounds, for finite :math:`\beta`,

.. math::

    W_2(\rho^\beta_t, \Pi_\sharp\rho_0) \lesssim
    \sqrt{\frac{\log(\beta+1)}{\beta}}\,e^{C_1 t} + e^{-ct}

(unknown constants): first the tokens gather near :math:`\Pi_\sharp\rho_0`
(:math:`t\lesssim\log\beta`), later the finite-temperature error may take over.

Functions: :func:`projection` (:math:`\Pi`), :func:`w2` (exact :math:`W_2` of two uniform
empirical measures, by an optimal assignment), :func:`run` (n tokens, the SA layer map,
:math:`W_2(\rho_t, \Pi_\sharp\rho_0)` over depth), the zero-temperature flow
(:func:`zero_temperature_flow`, exact up to a numerically integrated time change) and its layer map
(:func:`zero_temperature_map`, the same first-order step as the engine), and
:func:`pole_imbalance` (the number k of tokens that end at the "wrong" pole).

What this does not claim: the theorem is about the mean-field measure (infinitely many
tokens with a density) and gives a bound with unknown constants, not a prediction of the
curve; for n tokens :math:`W_2` settles near :math:`\sqrt{4k/n}` (one-dimensional
eigenspace) with a k that depends on the seed. The late drift towards the dominant
eigenspace of V itself is a numerical observation and a conjecture of the source, not a
theorem.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment

from sim import _validate as _v
from sim import attention as _att

__all__ = [
    "projection",
    "w2",
    "run",
    "start_tokens",
    "zero_temperature_map",
    "pole_imbalance",
    "dominant_basis",
    "check_pair",
    "MAX_WORK",
    "W2_MAX_WORK",
]

#: default bound on the work of :func:`run`: steps*n*n*d (layers) + record*n**3 (assignments)
MAX_WORK = 2e10
#: default bound on n**3 for one :func:`w2` (the assignment is O(n^3) at worst)
W2_MAX_WORK = 1e10
#: run() records the whole trajectory in one engine call (and builds the W2 cost matrices of all
#: records at once) when that array has at most this many numbers
_ONE_CALL_MAX = 4_000_000
#: eigenvalues within this (relative to max(1, max|mu|)) of mu_1 span the dominant eigenspace
EIG_TOL = 1e-9
#: a matrix is "symmetric" when ||S - S^T||_F <= SYM_TOL * max(1, ||S||_F)
SYM_TOL = 1e-10
#: a row with ||P_1 z|| <= NULL_TOL * ||z|| has no projection (Pi is undefined there)
NULL_TOL = 1e-12
#: B with a condition number above this is treated as singular
MAX_COND = 1e12
MAX_D = 64
MAX_N = 100_000


# --------------------------------------------------------------------------- validation
def _square(name: str, M, d: int | None = None) -> np.ndarray:
    M = _v.finite_array(name, M, ndim=2)
    if M.shape[0] != M.shape[1] or M.shape[0] < 1:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}")
    if d is not None and M.shape[0] != d:
        raise ValueError(f"{name} must have shape ({d}, {d}), got {M.shape}")
    if M.shape[0] > MAX_D:
        raise ValueError(f"{name} is {M.shape[0]}x{M.shape[0]}; at most {MAX_D}x{MAX_D} is supported")
    return M


def _symmetric(name: str, S: np.ndarray, why: str = "") -> np.ndarray:
    asym = np.linalg.norm(S - S.T)
    if asym > SYM_TOL * max(1.0, np.linalg.norm(S)):
        raise ValueError(f"{name} must be symmetric{why}: ||{name} - {name}^T|| = {asym:.3g}")
    return 0.5 * (S + S.T)


def check_pair(B, V) -> np.ndarray:
    r"""Validate the pair (B, V) of the construction and return :math:`S = VB^\top` (symmetrised).

    B must be square, finite and invertible (condition number below ``MAX_COND``); V finite
    with the same shape; :math:`VB^\top` symmetric (relative tolerance ``SYM_TOL``), which is
    the hypothesis under which the zero-temperature flow is a gradient-like Oja flow with the
    limit :math:`\Pi`. Raises ``ValueError`` saying which condition fails.

    Parameters
    ----------
    B, V : array_like, shape (d, d)
        Key and value matrices.

    Returns
    -------
    ndarray, shape (d, d)
        :math:`S = \tfrac12(VB^\top + BV^\top)`.
    """
    B = _square("B", B)
    d = B.shape[0]
    if d < 2:
        raise ValueError("B must be at least 2x2: the tokens live on the sphere S^{d-1}, d >= 2")
    V = _square("V", V, d)
    cond = np.linalg.cond(B)
    if not np.isfinite(cond) or cond > MAX_COND:
        raise ValueError(
            f"B must be invertible (the construction needs B = Q^T K invertible); "
            f"its condition number is {cond:.3g} > {MAX_COND:.0e}"
        )
    return _symmetric("V B^T", V @ B.T, " (the zero-temperature limit Pi needs it)")


def _tokens(name: str, Z, d: int | None = None) -> np.ndarray:
    Z = _v.finite_array(name, Z, ndim=2)
    n, dd = Z.shape
    if n < 1 or dd < 2:
        raise ValueError(f"{name} must have shape (n, d) with n >= 1 and d >= 2, got {Z.shape}")
    if d is not None and dd != d:
        raise ValueError(f"{name} must have {d} columns (the size of B and V), got {dd}")
    if n > MAX_N:
        raise ValueError(f"{name} has {n} rows; at most {MAX_N} tokens are supported")
    return Z


def dominant_basis(S) -> tuple[np.ndarray, np.ndarray]:
    r"""Orthonormal basis of the dominant eigenspace of a symmetric S, and all eigenvalues.

    Returns ``(Q1, mu)``: ``Q1`` of shape (d, m) with :math:`P_1 = Q_1Q_1^\top`, where m is the
    multiplicity of :math:`\mu_1` (eigenvalues within ``EIG_TOL * max(1, max|mu|)`` of the
    largest count as equal), and ``mu`` the eigenvalues in decreasing order.

    Parameters
    ----------
    S : array_like, shape (d, d)
        Symmetric matrix.
    """
    S = _symmetric("S", _square("S", S))
    mu, Q = np.linalg.eigh(S)
    tol = EIG_TOL * max(1.0, float(np.max(np.abs(mu))))
    dom = mu >= mu[-1] - tol
    return Q[:, dom], mu[::-1].copy()


# --------------------------------------------------------------------------- projection
def projection(Z, S) -> np.ndarray:
    r"""The limit map of the zero-temperature flow, row by row.

    .. math::

        \Pi(z) = \frac{P_1 z}{\lVert P_1 z\rVert},

    :math:`P_1` the orthogonal projector onto the eigenspace of the largest eigenvalue of the
    symmetric matrix S.

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Points (rows need not be unit vectors: :math:`\Pi` is invariant under positive scaling).
    S : array_like, shape (d, d)
        Symmetric matrix (e.g. :math:`VB^\top`).

    Returns
    -------
    ndarray, shape (n, d)
        Unit rows :math:`\Pi(z_i)` in the dominant eigenspace.

    Raises
    ------
    ValueError
        If S is not symmetric, a row is zero, or a row has :math:`P_1 z = 0` (up to
        ``NULL_TOL`` relative to its norm): :math:`\Pi` is undefined there (the flow from such a
        point never reaches the dominant eigenspace).
    """
    Z = _tokens("Z", Z)
    S = _square("S", S, Z.shape[1])
    Q1, _ = dominant_basis(S)
    nz = np.linalg.norm(Z, axis=1)
    if np.any(nz == 0):
        raise ValueError(f"Z row {int(np.argmin(nz))} is zero: Pi(z) needs z != 0")
    P = (Z @ Q1) @ Q1.T
    npz = np.linalg.norm(P, axis=1)
    bad = npz <= NULL_TOL * nz
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"Z row {i} has P1 z = 0 (it is orthogonal to the dominant eigenspace of S): "
            "Pi(z) = P1 z / ||P1 z|| is undefined there"
        )
    return P / npz[:, None]


# --------------------------------------------------------------------------- W2
def w2(X, Y, *, max_work: float = W2_MAX_WORK) -> float:
    r"""Exact 2-Wasserstein distance between the uniform empirical measures of the rows.

    .. math::

        W_2\Big(\tfrac1n\sum_i\delta_{x_i}, \tfrac1n\sum_j\delta_{y_j}\Big)^2
        = \min_{\sigma\in S_n}\frac1n\sum_i \lVert x_i - y_{\sigma(i)}\rVert^2 ,

    (Euclidean distance in :math:`\mathbb R^d`; for equal weights an optimal plan is a
    permutation, Birkhoff–von Neumann). The permutation is found by
    ``scipy.optimize.linear_sum_assignment``; the value is then summed from the matched
    differences (no cancellation).

    Parameters
    ----------
    X, Y : array_like, shape (n, d)
        The two point clouds (same n and d).
    max_work : float
        Bound on :math:`n^3` (the assignment costs :math:`O(n^3)` at worst).

    Returns
    -------
    float
    """
    X = _v.finite_array("X", X, ndim=2)
    Y = _v.finite_array("Y", Y, ndim=2)
    if X.shape != Y.shape:
        raise ValueError(
            f"X and Y must have the same shape (same number of points, same d), got {X.shape} and {Y.shape}"
        )
    n, d = X.shape
    if n < 1 or d < 1:
        raise ValueError(f"X and Y must hold at least one point, got shape {X.shape}")
    max_work = _v.real("max_work", max_work, 1.0)
    if float(n) ** 3 > max_work:
        raise ValueError(
            f"X has {n} points: the exact assignment costs ~n^3 = {float(n) ** 3:.3g} "
            f"> max_work = {max_work:.3g}; raise max_work or use fewer points"
        )
    return _w2(X, Y)


def _w2_many(Xs: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """:func:`_w2` of every ``Xs[r]`` against ``Y``: the cost matrices in one array operation,
    then one assignment each."""
    scale = np.maximum(np.maximum(np.abs(Xs).max(axis=(1, 2)), float(np.max(np.abs(Y)))), 1e-300)
    X = Xs / scale[:, None, None]
    Ys = Y[None] / scale[:, None, None]
    C = (
        np.einsum("rid,rid->ri", X, X)[:, :, None]
        + np.einsum("rjd,rjd->rj", Ys, Ys)[:, None, :]
        - 2.0 * np.einsum("rid,rjd->rij", X, Ys)
    )
    np.maximum(C, 0.0, out=C)
    out = np.empty(Xs.shape[0])
    for r in range(Xs.shape[0]):
        rows, cols = linear_sum_assignment(C[r])
        diff = X[r, rows] - Ys[r, cols]
        out[r] = scale[r] * math.sqrt(float(np.einsum("ij,ij->", diff, diff)) / Xs.shape[1])
    return out


def _w2(X: np.ndarray, Y: np.ndarray) -> float:
    """:func:`w2` of validated float arrays of equal shape (n >= 1): no checks, for loops of many."""
    scale = max(float(np.max(np.abs(X))), float(np.max(np.abs(Y))), 1e-300)
    Xs, Ys = X / scale, Y / scale  # no overflow in the squared distances
    C = (Xs * Xs).sum(1)[:, None] + (Ys * Ys).sum(1)[None, :] - 2.0 * (Xs @ Ys.T)
    rows, cols = linear_sum_assignment(np.maximum(C, 0.0))
    diff = Xs[rows] - Ys[cols]
    return float(scale * math.sqrt(float(np.einsum("ij,ij->", diff, diff)) / X.shape[0]))


# --------------------------------------------------------------------------- the run
def _start(n: int, d: int, seed: int) -> np.ndarray:
    Z0 = np.random.default_rng(seed).standard_normal((n, d))
    Z0 /= np.linalg.norm(Z0, axis=1, keepdims=True)
    return Z0


def start_tokens(n, d, seed) -> np.ndarray:
    r"""The initial tokens of :func:`run`: ``n`` standard Gaussian vectors of
    ``np.random.default_rng(seed)`` (shape (n, d)), each normalised, so uniform on
    :math:`S^{d-1}`.

    Parameters
    ----------
    n : int
        ``1 <= n <= MAX_N``.
    d : int
        ``2 <= d <= 4096``.
    seed : int
        ``>= 0``.

    Returns
    -------
    ndarray, shape (n, d)
    """
    n = _v.integer("n", n, 1, MAX_N)
    d = _v.integer("d", d, 2, 4096)
    seed = _v.integer("seed", seed, 0, 2**63 - 1)
    return _start(n, d, seed)


def run(n, beta, B, V, T, dt, seed, record=60, *, max_work: float = MAX_WORK) -> dict:
    r"""n tokens uniform on the sphere, the SA layer map at inverse temperature beta, and
    :math:`W_2(\rho_t, \Pi_\sharp\rho_0)` over depth.

    The tokens :math:`z_i(0)` are ``n`` standard Gaussian vectors of
    ``np.random.default_rng(seed)`` normalised (uniform on :math:`S^{d-1}`, d = ``B.shape[0]``).
    They follow ``steps = round(T / dt)`` layers of :func:`sim.attention.simulate` (SA) with
    :math:`A = B` and value matrix V:

    .. math::

        z_i^+ = \frac{z_i + \Delta u_i}{\lVert z_i + \Delta u_i\rVert},\quad
        u_i = \sum_j \frac{e^{\beta\langle z_i, Bz_j\rangle}}{\sum_k e^{\beta\langle z_i, Bz_k\rangle}}
        V z_j .

    Parameters
    ----------
    n : int
        Number of tokens, ``>= 1``.
    beta : float
        Inverse temperature, ``> 0``.
    B, V : array_like, shape (d, d)
        Query-key matrix (invertible) and value matrix, with :math:`VB^\top` symmetric.
    T : float
        Depth horizon ``> 0``; the run has ``steps = round(T / dt) >= 1`` layers.
    dt : float
        Residual step ``> 0``.
    seed : int
        Seed of the initial tokens, ``>= 0``.
    record : int
        Number of recorded depths, ``2 <= record <= steps + 1``: layers
        ``round(linspace(0, steps, record))`` (distinct, first and last included).
    max_work : float
        Bound on ``steps*n*n*d + record*n**3``.

    Returns
    -------
    dict
        ``"t"`` (record,): depths (layer index times dt); ``"w2"`` (record,):
        :math:`W_2(\rho_t, \Pi_\sharp\rho_0)` of the empirical measures; ``"Z"`` (record, n, d):
        the tokens; also ``"layers"`` (record,), ``"target"`` (n, d) :math:`=\Pi(z_i(0))`,
        ``"S"`` :math:`= VB^\top` and ``"steps"``.
    """
    S = check_pair(B, V)
    B = np.asarray(B, dtype=float)
    V = np.asarray(V, dtype=float)
    d = S.shape[0]
    n = _v.integer("n", n, 1, MAX_N)
    beta = _v.real("beta", beta, 0.0, lo_open=True)
    T = _v.real("T", T, 0.0, lo_open=True)
    dt = _v.real("dt", dt, 0.0, lo_open=True)
    seed = _v.integer("seed", seed, 0, 2**63 - 1)
    ratio = T / dt
    if not math.isfinite(ratio) or ratio > 1e9:
        raise ValueError(f"T / dt = {ratio:.3g} layers is too many (at most 1e9 before the work bound)")
    steps = int(round(ratio))
    if steps < 1:
        raise ValueError(f"T = {T} is less than half a step dt = {dt}: the run would have no layer")
    record = _v.integer("record", record, 2, steps + 1)
    max_work = _v.real("max_work", max_work, 1.0)
    work = float(steps) * n * n * d + float(record) * float(n) ** 3
    if work > max_work:
        raise ValueError(
            f"too much work: steps*n*n*d + record*n^3 = {work:.3g} > max_work = "
            f"{max_work:.3g} (steps = {steps}, n = {n}, d = {d}); fewer tokens, a "
            "shorter depth, a larger dt or fewer records"
        )
    Z0 = _start(n, d, seed)
    target = projection(Z0, S)
    layers = np.rint(np.linspace(0.0, steps, record)).astype(np.int64)
    g = math.gcd(*(int(x) for x in np.diff(layers)))
    if (steps // g + 1) * n * d <= _ONE_CALL_MAX:
        # one engine call recording every g-th layer (g divides every gap): the same layers as
        # a call per gap, without the per-call set-up of the engine 20 times over
        Zs = _att.simulate(
            Z0, beta, dt, steps, A=B, V=V, flow="SA", record_every=g, max_work=max(_att.MAX_WORK, max_work)
        )[layers // g]
        Zs[0] = Z0  # the start itself (the engine re-normalises it)
    else:  # long runs: a call per gap keeps only the records
        Zs = np.empty((record, n, d))
        Zs[0] = Z0
        for r in range(1, record):
            gr = int(layers[r] - layers[r - 1])
            Zs[r] = _att.simulate(Zs[r - 1], beta, dt, gr, A=B, V=V, flow="SA", record_every=gr)[-1]
    if float(n) ** 3 > max(W2_MAX_WORK, max_work):  # pragma: no cover - bounded by the work check above
        raise ValueError(f"{n} tokens: the exact assignment costs ~n^3 = {float(n) ** 3:.3g} > max_work")
    if record * n * n <= _ONE_CALL_MAX:  # the cost matrices of all records in one array
        w = _w2_many(Zs, target)
    else:
        w = np.array([_w2(Zs[r], target) for r in range(record)])
    return {"t": layers * dt, "w2": w, "Z": Zs, "layers": layers, "target": target, "S": S, "steps": steps}


# --------------------------------------------------------------------------- zero temperature
def _zero_prep(Z0, B, V):
    S = check_pair(B, V)
    Z0 = _tokens("Z0", Z0, S.shape[0])
    nz = np.linalg.norm(Z0, axis=1, keepdims=True)
    if np.any(nz == 0):
        raise ValueError("Z0 has a zero row: every token must be a nonzero vector")
    return Z0 / nz, np.asarray(B, dtype=float), S


def zero_temperature_map(Z0, B, V, dt, steps, record_every=1, *, max_work: float = MAX_WORK) -> np.ndarray:
    r"""The layer map of the zero-temperature field: the :math:`\beta\to\infty` limit of the
    engine's layer for a measure with full support.

    .. math::

        z^+ = \frac{z + \Delta\,Sz/\lVert B^\top z\rVert}{\lVert z + \Delta\,Sz/\lVert B^\top z\rVert\rVert}.

    Same first-order step as :func:`sim.attention.simulate`, so the distance between the two
    measures the temperature, not the discretisation. For B = I it is also the exact
    :math:`\beta\to\infty` limit of the n-token layer map (each token's largest score is its own).

    Returns an array of shape ``(steps // record_every + 1, n, d)``.

    Parameters
    ----------
    Z0 : array_like, shape (n, d)
        Unit tokens at depth 0.
    B, V : array_like, shape (d, d)
        Key and value matrices (:func:`check_pair`); :math:`S = VB^\top`.
    dt : float
        Step :math:`\Delta > 0` (depth per layer).
    steps : int
        Number of layers.
    record_every : int
        Keep every ``record_every``-th layer.
    max_work : float
        Bound on ``steps * n * d``.
    """
    Z, B, S = _zero_prep(Z0, B, V)
    dt = _v.real("dt", dt, 0.0, lo_open=True)
    steps = _v.integer("steps", steps, 0)
    record_every = _v.integer("record_every", record_every, 1)
    n, d = Z.shape
    max_work = _v.real("max_work", max_work, 1.0)
    if float(steps) * n * d * d > max_work:
        raise ValueError(f"steps*n*d*d = {float(steps) * n * d * d:.3g} > max_work = {max_work:.3g}")
    out = np.empty((steps // record_every + 1, n, d))
    out[0] = Z
    unit_speed = np.allclose(B @ B.T, np.eye(d), atol=1e-13, rtol=0)  # ||B^T z|| = 1 on the sphere
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for st in range(1, steps + 1):
            F = Z @ S
            if not unit_speed:
                ZB = Z @ B
                F /= np.sqrt(np.einsum("ij,ij->i", ZB, ZB))[:, None]
            Y = Z + dt * F
            Z = Y / np.sqrt(np.einsum("ij,ij->i", Y, Y))[:, None]
            if st % record_every == 0:
                out[st // record_every] = Z
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "dt too large: some z + dt*Sz/||B^T z|| vanished (S has an eigenvalue at or below -1/dt); use a smaller dt"
        )
    return out


def pole_imbalance(Z0, Z, S) -> int:
    r"""k = the net number of tokens that end at the "wrong" pole (one-dimensional eigenspace).

    When the dominant eigenspace of S is a line :math:`\mathbb R q`, :math:`\Pi_\sharp\rho_0`
    puts :math:`n_+ = \#\{\langle q, z_i(0)\rangle > 0\}` tokens at :math:`q` and the rest at
    :math:`-q`. If the final tokens sit at the poles with :math:`m_+` of them near :math:`q`,
    the optimal matching moves :math:`k = |m_+ - n_+|` tokens across (distance 2 each), so

    .. math::

        W_2 = \sqrt{4k/n}.

    Raises ``ValueError`` when the dominant eigenspace is not one-dimensional.

    Parameters
    ----------
    Z0 : array_like, shape (n, d)
        Tokens at depth 0.
    Z : array_like, shape (n, d)
        Tokens at the end.
    S : array_like, shape (d, d)
        Symmetric :math:`S = VB^\top`.

    Returns
    -------
    int
        :math:`k = |m_+ - n_+|`.
    """
    Z0 = _tokens("Z0", Z0)
    Z = _tokens("Z", Z, Z0.shape[1])
    if Z.shape != Z0.shape:
        raise ValueError(f"Z0 and Z must have the same shape, got {Z0.shape} and {Z.shape}")
    Q1, _ = dominant_basis(_square("S", S, Z0.shape[1]))
    if Q1.shape[1] != 1:
        raise ValueError(
            f"the dominant eigenspace of S has dimension {Q1.shape[1]}; "
            "k (tokens at the wrong pole) is defined only for a simple top eigenvalue"
        )
    q = Q1[:, 0]
    return abs(int(np.count_nonzero(Z @ q > 0)) - int(np.count_nonzero(Z0 @ q > 0)))
