r"""Inside a Transformer block: positions, normalisation, splitting, sinks (``docs/constructions.md``,
"Inside a block: positions, normalisation, splitting, sinks").

Five small, exact facts about the pieces of one block.

- Rotary positions (:func:`rope_similarity`, :func:`rope_largest_return`). With
  :math:`k` rotation planes of angular speeds :math:`\theta_j = b^{-(j-1)/k}`, the
  similarity of a vector with its own copy rotated by a distance :math:`N` is

  .. math:: \mathrm{sim}(N) = \frac1k \sum_{j=1}^{k} \cos(N\theta_j),

  (a vector with equal energy in every plane). ``sim(0) = 1``; at long distances
  ``sim`` comes back close to 1 at some ``N`` ("resonances"); how high these
  returns get is a property of the frequencies, computed here, not assumed.
- RMSNorm (:func:`rmsnorm_jacobian`, :func:`rmsnorm_gain`). For
  :math:`f(x) = x/r`, :math:`r = \sqrt{\lVert x\rVert^2/d + \varepsilon}`,

  .. math:: J = \frac1r\Big(I - \frac{x x^\top}{d\,r^2}\Big),

  symmetric, with eigenvalue :math:`1/r` on :math:`x^\perp` and
  :math:`\varepsilon/r^3` along :math:`x`. Its largest singular value is
  :math:`1/r` for :math:`d \ge 2` (and :math:`\varepsilon/r^3` for :math:`d=1`),
  so :math:`\varepsilon^{-1/2}` at :math:`x = 0`.
- Operator splitting (:func:`splitting_defect`, :func:`trotter_defect`). For
  linear fields :math:`A, B`, :math:`(e^{\alpha A}e^{\alpha B} - e^{\alpha B}e^{\alpha A})x/\alpha^2
  \to [A,B]x` and :math:`e^{\alpha A}e^{\alpha B} - e^{\alpha(A+B)} = \tfrac12\alpha^2[A,B] + O(\alpha^3)`.
- Permutation equivariance (:func:`attention`): softmax attention without positions
  and without a mask commutes with any permutation of the tokens.
- Attention sink (:func:`sink_mass`, :func:`sink_capacity`): a token whose score
  exceeds the :math:`N-1` others' by :math:`\Delta` gets the weight
  :math:`e^\Delta/(e^\Delta+N-1)`; it keeps at least a share :math:`c` iff
  :math:`N \le N_{\max} = 1 + \frac{1-c}{c}e^\Delta`.

Operator time here is the coefficient :math:`\alpha` of a linear field; it is not a
layer index, not training time and not a generation position. What this module does
NOT claim: that trained models show visible RoPE resonances, run at the RMSNorm
worst case, or have sinks *because of* the capacity formula; those are readings of
the source article, not consequences of these formulas.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from sim import _validate as _v

__all__ = [
    "rope_similarity",
    "rope_largest_return",
    "rope_window_extremes",
    "rmsnorm_jacobian",
    "rmsnorm_gain",
    "splitting_defect",
    "trotter_defect",
    "commutator_norm",
    "splitting_example",
    "attention",
    "sink_mass",
    "sink_capacity",
    "sink_example",
]

#: default bound on the elementary operations of one call (≈ a second or less on one core)
MAX_WORK = 5.0e7
K_MAX = 4096  # rotation planes
BASE_MAX = 1.0e9  # RoPE base
N_ABS_MAX = 1.0e9  # |N| for RoPE: phases N θ stay accurate to ~1e-7 rad
D_MAX = 4096  # vector dimension (RMSNorm, attention)
X_ABS_MAX = 1.0e100  # entries of x (so ‖x‖² cannot overflow)
EPS_MAX = 1.0e100
SPLIT_D_MAX = 256  # matrices of the splitting functions
ALPHA_NORM_MAX = 50.0  # α·(‖A‖+‖B‖): e^{50} ≈ 5e21 keeps products finite
N_ALPHAS_MAX = 10_000
TOKENS_MAX = 10_000  # n for attention
BETA_MAX = 1.0e6
DELTA_MAX = 700.0  # |Δ| (e^Δ finite)
SINK_N_MAX = 1.0e300
SEED_MAX = 2**63 - 1


def _work(what: str, work: float, max_work) -> None:
    if max_work == math.inf:  # an explicit "no bound" from a caller that bounds the work itself
        return
    cap = _v.real("max_work", max_work, 0.0, lo_open=True)
    if work > cap:
        raise ValueError(
            f"{what} needs about {work:.3g} operations, above max_work={cap:.3g}; use fewer points or raise max_work"
        )


def _vector(name: str, value, max_size: int) -> np.ndarray:
    """A finite real scalar or 1-D array, returned as a 1-D array."""
    if np.iscomplexobj(value):
        raise ValueError(f"{name} must be real, got a complex array")
    arr = _v.finite_array(name, value, max_size=max_size)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-dimensional, got shape {arr.shape}")
    return np.atleast_1d(arr)


def _real_array(name: str, value, **kw) -> np.ndarray:
    if np.iscomplexobj(value):
        raise ValueError(f"{name} must be real, got a complex array")
    return _v.finite_array(name, value, **kw)


# --------------------------------------------------------------------------- rotary positions
def _rope_freqs(k: int, base: float) -> np.ndarray:
    return base ** (-np.arange(k, dtype=np.float64) / k)


def rope_similarity(N, k, base=10000.0, *, max_work=MAX_WORK) -> np.ndarray:
    r"""RoPE self-similarity at distance :math:`N`.

    .. math:: \mathrm{sim}(N) = \frac1k\sum_{j=1}^{k}\cos(N\theta_j),\qquad
              \theta_j = b^{-(j-1)/k}.

    Parameters
    ----------
    N : float or array_like
        Distances (token positions apart), :math:`|N| \le 10^9`; need not be integers.
    k : int
        Number of rotation planes (head dimension / 2), :math:`1 \le k \le 4096`.
    base : float, optional
        The RoPE base :math:`b`, :math:`1 \le b \le 10^9` (10000 as in RoPE).
    max_work : float, optional
        Bound on ``len(N) * k``.

    Returns
    -------
    numpy.ndarray
        ``sim(N)``, shape ``(len(N),)`` (a scalar ``N`` gives shape ``(1,)``), values in [-1, 1].
    """
    k = _v.integer("k", k, 1, K_MAX)
    base = _v.real("base", base, 1.0, BASE_MAX)
    N = _vector("N", N, max_size=10**8)
    if N.size and np.max(np.abs(N)) > N_ABS_MAX:
        raise ValueError(f"N must satisfy |N| <= {N_ABS_MAX:g} (larger phases N·θ lose accuracy)")
    _work("rope_similarity", float(N.size) * k, max_work)
    th = _rope_freqs(k, base)
    out = np.empty(N.size)
    step = max(1, int(2**20 // k))  # chunks of about a million cosines
    for s in range(0, N.size, step):
        out[s : s + step] = np.cos(np.outer(N[s : s + step], th)).mean(axis=1)
    return out


RANGE_MAX = 2**22  # distances in one rope_similarity_range / rope_window_extremes call
_RANGE_CHUNK = 2**18  # distances per block of the fast evaluation (bounds its memory)


def _rope_range(n_from: int, n_to: int, th: np.ndarray) -> np.ndarray:
    """sim(N) for the integers N = n_from … n_to by angle addition, N = N0 + m (m < B):
    cos(Nθ) = cos(N0θ)cos(mθ) - sin(N0θ)sin(mθ), so a block of distances is two matrix
    products of (N0, θ) by (θ, m) tables: (Q + B)·k cosines and sines instead of Q·B·k.
    Arguments validated by the caller."""
    n = n_to - n_from + 1
    k = th.size
    B = int(min(n, max(16, math.isqrt(n) + 1)))
    m = np.arange(B, dtype=np.float64)
    cm, sm = np.cos(np.outer(th, m)), np.sin(np.outer(th, m))  # (k, B)
    out = np.empty(n)
    rows = max(1, _RANGE_CHUNK // B)
    for q0 in range(0, -(-n // B), rows):
        q = np.arange(q0, min(q0 + rows, -(-n // B)), dtype=np.float64)
        a = np.outer(n_from + q * B, th)  # (Q, k) phases N0·θ
        # einsum, not @: no BLAS threads (under load OpenBLAS's spinning threads waste the CPU)
        blk = (np.einsum("qk,kb->qb", np.cos(a), cm) - np.einsum("qk,kb->qb", np.sin(a), sm)).ravel()
        s = q0 * B
        out[s : s + blk.size] = blk[: n - s]
    out /= k
    return out


def _rope_range_error(n_to: int, k: int) -> float:
    """A bound on |fast - direct| for distances <= n_to: each way rounds the phases N·θ_j
    (|N θ_j| <= n_to, θ_1 = 1 the fastest plane), to ≤ n_to·2^-53 each, and sums k terms."""
    return 4.0 * (abs(n_to) + k + 8) * 2.0**-52


def _range_args(k, n_from, n_to, base, max_work, what):
    k = _v.integer("k", k, 1, K_MAX)
    base = _v.real("base", base, 1.0, BASE_MAX)
    n_from = _v.integer("n_from", n_from, 0, int(N_ABS_MAX))
    n_to = _v.integer("n_to", n_to, n_from, int(N_ABS_MAX))
    if n_to - n_from + 1 > RANGE_MAX:
        raise ValueError(f"n_to - n_from + 1 must be <= {RANGE_MAX} (one array of that many distances)")
    _work(what, float(n_to - n_from + 1) * k, max_work)
    return k, n_from, n_to, base


def _pick(sim_fast, N0, edges, k, base, sign):
    """Per window [edges[i], edges[i+1]) of distances: the first distance where the direct
    ``sign * sim`` is largest, and that direct value. The fast values can be off by ``eps``,
    so every distance within ``2 eps`` of its window's fast extreme is a candidate and the
    direct formula decides among the candidates (the true extreme is always one of them)."""
    eps = _rope_range_error(int(edges[-1]) - 1, k)
    y = sign * sim_fast
    starts = edges[:-1] - N0
    top = np.maximum.reduceat(y, starts)
    win = np.repeat(np.arange(starts.size), np.diff(edges))
    idx = np.flatnonzero(y >= top[win] - 2.0 * eps)
    val = sign * rope_similarity((N0 + idx).astype(np.float64), k, base, max_work=math.inf)
    w = win[idx]
    order = np.lexsort((idx, -val, w))  # per window: largest value, then smallest N
    first = order[np.r_[True, w[order][1:] != w[order][:-1]]]
    return (N0 + idx[first]).astype(np.float64), sign * val[first]


def rope_window_extremes(k, edges, base=10000.0, *, max_work=MAX_WORK) -> tuple[np.ndarray, ...]:
    r"""The largest and the smallest ``sim(N)`` in each window of integer distances.

    Windows are :math:`[e_i, e_{i+1})` for consecutive ``edges``. The result is that of a
    brute-force search with :func:`rope_similarity` (the first distance on ties): the
    extremes are located with :func:`rope_similarity_range` and every candidate within its
    error bound is re-evaluated with the direct sum.

    Parameters
    ----------
    k : int
        Rotation planes, :math:`1 \le k \le 4096`.
    edges : array_like of int
        Strictly increasing, :math:`e_0 \ge 0`, at most :data:`RANGE_MAX` distances in all.
    base : float, optional
        RoPE base.
    max_work : float, optional
        Bound on ``(e_last - e_0) * k``.

    Returns
    -------
    (hi_N, hi_sim, lo_N, lo_sim) : tuple of numpy.ndarray
        Each of shape ``(len(edges) - 1,)``.
    """
    e = _v.finite_array("edges", edges, ndim=1, max_size=RANGE_MAX)
    if e.size < 2 or np.any(e != np.round(e)) or np.any(np.diff(e) <= 0) or e[0] < 0:
        raise ValueError("edges must be at least two strictly increasing integers >= 0")
    e = e.astype(np.int64)
    k, n_from, n_to, base = _range_args(k, int(e[0]), int(e[-1]) - 1, base, max_work, "rope_window_extremes")
    fast = _rope_range(n_from, n_to, _rope_freqs(k, base))
    hx, hy = _pick(fast, n_from, e, k, base, 1.0)
    lx, ly = _pick(fast, n_from, e, k, base, -1.0)
    return hx, hy, lx, ly


def rope_largest_return(k, n_from, n_to, base=10000.0, *, max_work=MAX_WORK) -> tuple[float, int]:
    r"""The largest value of ``sim(N)`` over the integer distances :math:`n_{from} \le N \le n_{to}`.

    Exactly the brute-force maximum of :func:`rope_similarity` over the window (first distance
    on ties), found with :func:`rope_window_extremes` (blocks of at most :data:`RANGE_MAX`).

    Parameters
    ----------
    k : int
        Number of rotation planes.
    n_from, n_to : int
        The window of distances, :math:`1 \le n_{from} \le n_{to} \le 10^9`.
    base : float, optional
        RoPE base.
    max_work : float, optional
        Bound on ``(n_to - n_from + 1) * k``.

    Returns
    -------
    (float, int)
        :math:`\max_N \mathrm{sim}(N)` and the first distance where it is attained.
    """
    k = _v.integer("k", k, 1, K_MAX)
    n_from = _v.integer("n_from", n_from, 1, int(N_ABS_MAX))
    n_to = _v.integer("n_to", n_to, n_from, int(N_ABS_MAX))
    _work("rope_largest_return", float(n_to - n_from + 1) * k, max_work)
    best, arg = -2.0, n_from
    for s in range(n_from, n_to + 1, RANGE_MAX):
        e = min(s + RANGE_MAX, n_to + 1)
        hx, hy, _, _ = rope_window_extremes(k, [s, e], base, max_work=math.inf)
        if hy[0] > best:
            best, arg = float(hy[0]), int(hx[0])
    return best, arg


# --------------------------------------------------------------------------- RMSNorm
def _rms_args(x, eps, max_work):
    x = _vector("x", x, max_size=D_MAX)
    if x.size == 0:
        raise ValueError("x must have at least one entry")
    if np.max(np.abs(x)) > X_ABS_MAX:
        raise ValueError(f"x must have entries with |x_i| <= {X_ABS_MAX:g}")
    eps = _v.real("eps", eps, 0.0, EPS_MAX)
    d = x.size
    r = math.sqrt(float(x @ x) / d + eps)
    if r == 0.0 or not math.isfinite(1.0 / r):
        raise ValueError(
            "x is (numerically) 0 and eps is 0: x/r is singular at the origin (RMSNorm needs eps > 0 there)"
        )
    return x, eps, d, r


def rmsnorm_jacobian(x, eps, *, max_work=MAX_WORK) -> np.ndarray:
    r"""Jacobian of RMSNorm :math:`x \mapsto x/r`, :math:`r = \sqrt{\lVert x\rVert^2/d + \varepsilon}`.

    .. math:: J = \frac1r\Big(I - \frac{x x^\top}{d\,r^2}\Big).

    Parameters
    ----------
    x : array_like, shape (d,)
        The input vector, :math:`1 \le d \le 4096`, :math:`|x_i| \le 10^{100}`.
    eps : float
        :math:`0 \le \varepsilon \le 10^{100}`; ``eps = 0`` is allowed only for :math:`x \ne 0`.
    max_work : float, optional
        Bound on :math:`d^2`.

    Returns
    -------
    numpy.ndarray
        ``J``, shape ``(d, d)``, symmetric.
    """
    x, eps, d, r = _rms_args(x, eps, max_work)
    _work("rmsnorm_jacobian", float(d) ** 2, max_work)
    u = x / r  # the output; J = (I - u uᵀ/d) / r
    J = -np.outer(u, u) / (d * r)
    J[np.diag_indices(d)] += 1.0 / r
    if not np.all(np.isfinite(J)):
        raise ValueError("the Jacobian overflows for this x and eps (r is too small)")
    return J


def rmsnorm_gain(x, eps) -> float:
    r"""Largest singular value of :func:`rmsnorm_jacobian` (its Lipschitz constant at ``x``).

    .. math:: \sigma_{\max}(J) = \frac1r \ (d \ge 2),\qquad \frac{\varepsilon}{r^3}\ (d = 1),

    so :math:`\varepsilon^{-1/2}` at :math:`x = 0` for every :math:`d`.

    Parameters
    ----------
    x : array_like, shape (d,)
    eps : float
        As in :func:`rmsnorm_jacobian`.

    Returns
    -------
    float
    """
    x, eps, d, r = _rms_args(x, eps, MAX_WORK)
    g = 1.0 / r if d >= 2 else (eps / r) / (r * r)
    if not math.isfinite(g):
        raise ValueError("the gain overflows for this x and eps (r is too small)")
    return g


# --------------------------------------------------------------------------- operator splitting
def _split_args(A, B, x, alphas, max_work):
    A = _real_array("A", A, ndim=2)
    d = A.shape[0]
    if A.shape != (d, d) or not 1 <= d <= SPLIT_D_MAX:
        raise ValueError(f"A must be square with 1 <= d <= {SPLIT_D_MAX}, got shape {A.shape}")
    B = _real_array("B", B, shape=(d, d))
    x = _real_array("x", x, shape=(d,))
    al = _vector("alphas", alphas, max_size=N_ALPHAS_MAX)
    if al.size and np.min(al) <= 0.0:
        raise ValueError("alphas must be > 0 (the defect is divided by alpha²)")
    scale = np.linalg.norm(A, 2) + np.linalg.norm(B, 2)
    if al.size and np.max(al) * scale > ALPHA_NORM_MAX:
        raise ValueError(
            f"alphas must satisfy alpha·(‖A‖+‖B‖) <= {ALPHA_NORM_MAX:g} "
            f"(here alpha <= {ALPHA_NORM_MAX / scale:.3g}), else e^(alpha A) overflows"
        )
    _work("splitting", 60.0 * al.size * (2 * d) ** 3, max_work)
    return A, B, x, al, d


def _expm1(M: np.ndarray) -> np.ndarray:
    r""":math:`e^{M} - I`, accurate also when :math:`\lVert M\rVert` is tiny.

    From one ``expm`` of the block matrix :math:`[[M, I], [0, 0]]`, whose top-right block is
    :math:`\varphi_1(M) = \int_0^1 e^{sM}ds`; then :math:`e^M - I = M\varphi_1(M)`.
    """
    d = M.shape[0]
    big = np.zeros((2 * d, 2 * d))
    big[:d, :d] = M
    big[:d, d:] = np.eye(d)
    return M @ expm(big)[:d, d:]


def splitting_defect(A, B, x, alphas, *, max_work=MAX_WORK) -> np.ndarray:
    r"""Normalised defect of the two orders of a splitting step.

    .. math:: \delta(\alpha) = \frac{\lVert (e^{\alpha A}e^{\alpha B} - e^{\alpha B}e^{\alpha A})x\rVert}
              {\alpha^2} \xrightarrow[\alpha\to0]{} \lVert [A,B]x\rVert,
              \qquad [A,B] = AB - BA.

    Computed as :math:`(PQ - QP)x` with :math:`P = e^{\alpha A} - I`, :math:`Q = e^{\alpha B} - I`
    (an exact identity) and :math:`P, Q` from ``scipy.linalg.expm`` without cancellation, so the
    result keeps full relative accuracy as :math:`\alpha \to 0`.

    Parameters
    ----------
    A, B : array_like, shape (d, d)
        The two linear fields, :math:`1 \le d \le 256`.
    x : array_like, shape (d,)
    alphas : array_like
        Step sizes :math:`\alpha > 0` with :math:`\alpha(\lVert A\rVert + \lVert B\rVert) \le 50`.
    max_work : float, optional
        Bound on the matrix work (about :math:`60\,(2d)^3` per :math:`\alpha`).

    Returns
    -------
    numpy.ndarray
        :math:`\delta(\alpha)` for each ``alpha``.
    """
    A, B, x, al, d = _split_args(A, B, x, alphas, max_work)
    out = np.empty(al.size)
    for i, a in enumerate(al):
        P, Q = _expm1(a * A), _expm1(a * B)
        out[i] = np.linalg.norm(P @ (Q @ x) - Q @ (P @ x)) / a**2
    return out


def trotter_defect(A, B, x, alphas, *, max_work=MAX_WORK) -> np.ndarray:
    r"""Error of one Lie–Trotter step against the exact flow of :math:`A + B`.

    .. math:: \epsilon(\alpha) = \lVert (e^{\alpha A}e^{\alpha B} - e^{\alpha(A+B)})x\rVert
              = \tfrac12\alpha^2\lVert [A,B]x\rVert + O(\alpha^3).

    Computed as :math:`(P + Q + PQ - R)x` with :math:`P, Q` as in :func:`splitting_defect` and
    :math:`R = e^{\alpha(A+B)} - I`; relative accuracy about :math:`10^{-16}/\alpha`.

    Parameters
    ----------
    A, B, x, alphas, max_work
        As in :func:`splitting_defect`.

    Returns
    -------
    numpy.ndarray
        :math:`\epsilon(\alpha)` for each ``alpha`` (not divided by :math:`\alpha^2`).
    """
    A, B, x, al, d = _split_args(A, B, x, alphas, max_work)
    out = np.empty(al.size)
    for i, a in enumerate(al):
        P, Q, R = _expm1(a * A), _expm1(a * B), _expm1(a * (A + B))
        out[i] = np.linalg.norm((P - R) @ x + Q @ x + P @ (Q @ x))
    return out


def commutator_norm(A, B, x) -> float:
    r""":math:`\lVert [A,B]x\rVert = \lVert (AB - BA)x\rVert`, the limit of :func:`splitting_defect`.

    Parameters
    ----------
    A, B : array_like, shape (d, d)
        The two generators.
    x : array_like, shape (d,)
        The vector.

    Returns
    -------
    float
        :math:`\lVert (AB - BA)x\rVert_2`.
    """
    A, B, x, _, _ = _split_args(A, B, x, [], MAX_WORK)
    return float(np.linalg.norm(A @ (B @ x) - B @ (A @ x)))


def splitting_example(d, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Two random linear fields and a unit vector: :math:`A, B` with i.i.d.
    :math:`N(0, 1/d)` entries (typically not commuting), :math:`x` uniform on :math:`S^{d-1}`.

    Parameters
    ----------
    d : int
        Dimension, :math:`2 \le d \le 256`.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (A, B, x)
    """
    d = _v.integer("d", d, 2, SPLIT_D_MAX)
    rng = np.random.default_rng(_v.integer("seed", seed, 0, SEED_MAX))
    A = rng.standard_normal((d, d)) / math.sqrt(d)
    B = rng.standard_normal((d, d)) / math.sqrt(d)
    x = rng.standard_normal(d)
    return A, B, x / np.linalg.norm(x)


# --------------------------------------------------------------------------- attention
def attention(Z, A, V, beta, causal=False, positions=None, *, max_work=MAX_WORK) -> np.ndarray:
    r"""One softmax attention output per token.

    .. math:: u_i = \sum_j \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}\, V z_j,\qquad
              s_{ij} = \beta\langle y_i, A y_j\rangle,\quad y = Z + \text{positions},

    with :math:`j \le i` only when ``causal``. Positions enter the scores only; the values
    are :math:`V z_j`. Without positions and without the mask,
    :math:`u(\pi Z) = \pi\,u(Z)` for every permutation :math:`\pi` of the rows.

    Parameters
    ----------
    Z : array_like, shape (n, d)
        Tokens (rows), :math:`n \le 10^4`, :math:`d \le 4096`; not required to be unit vectors.
    A, V : array_like, shape (d, d)
        Score and value matrices (any real matrices, not necessarily symmetric).
    beta : float
        Inverse temperature, :math:`0 \le \beta \le 10^6`.
    causal : bool, optional
        Token ``i`` attends only to ``j <= i``.
    positions : array_like, shape (n, d), optional
        Position vectors added to the tokens before the scores.
    max_work : float, optional
        Bound on :math:`n^2 d + n d^2`.

    Returns
    -------
    numpy.ndarray
        ``u``, shape ``(n, d)``.
    """
    Z = _real_array("Z", Z, ndim=2)
    n, d = Z.shape
    if not (1 <= n <= TOKENS_MAX and 1 <= d <= D_MAX):
        raise ValueError(f"Z must have 1..{TOKENS_MAX} rows and 1..{D_MAX} columns, got {Z.shape}")
    A = _real_array("A", A, shape=(d, d))
    V = _real_array("V", V, shape=(d, d))
    beta = _v.real("beta", beta, 0.0, BETA_MAX)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    _work("attention", float(n) * n * d + float(n) * d * d, max_work)
    Y = Z if positions is None else Z + _real_array("positions", positions, shape=(n, d))
    with np.errstate(over="ignore", invalid="ignore"):
        S = beta * (Y @ (Y @ A.T).T)  # S[i, j] = β ⟨y_i, A y_j⟩
    if not np.all(np.isfinite(S)):
        raise ValueError("the scores beta·<y_i, A y_j> overflow: tokens, A or beta are too large")
    if causal:
        S[np.triu_indices(n, 1)] = -np.inf
    S -= S.max(axis=1, keepdims=True)
    W = np.exp(S)
    W /= W.sum(axis=1, keepdims=True)
    return W @ (Z @ V.T)


# --------------------------------------------------------------------------- attention sink
def sink_mass(delta, N, *, max_work=MAX_WORK) -> np.ndarray:
    r"""Softmax weight of one token whose score exceeds the :math:`N - 1` others' by :math:`\Delta`.

    .. math:: c(N) = \frac{e^\Delta}{e^\Delta + N - 1} = \frac{1}{1 + (N-1)e^{-\Delta}}.

    Parameters
    ----------
    delta : float
        Score gap :math:`\Delta`, :math:`|\Delta| \le 700`.
    N : float or array_like
        Numbers of tokens, :math:`1 \le N \le 10^{300}` (the sink included).
    max_work : float, optional
        Bound on ``len(N)``.

    Returns
    -------
    numpy.ndarray
        :math:`c(N)` in (0, 1] (may underflow to 0 for :math:`(N-1)e^{-\Delta} > 10^{308}`).
    """
    delta = _v.real("delta", delta, -DELTA_MAX, DELTA_MAX)
    N = _vector("N", N, max_size=10**8)
    if N.size and (np.min(N) < 1.0 or np.max(N) > SINK_N_MAX):
        raise ValueError(f"N must lie in [1, {SINK_N_MAX:g}] (the number of tokens, sink included)")
    _work("sink_mass", float(N.size), max_work)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + (N - 1.0) * math.exp(-delta))


def sink_capacity(delta, c) -> float:
    r"""Largest number of tokens among which the sink keeps at least the share :math:`c`.

    .. math:: N_{\max} = 1 + \frac{1-c}{c}\,e^{\Delta},\qquad
              c(N) \ge c \iff N \le N_{\max}.

    Parameters
    ----------
    delta : float
        Score gap :math:`\Delta`, :math:`|\Delta| \le 700`.
    c : float
        Share, :math:`0 < c \le 1`.

    Returns
    -------
    float
        :math:`N_{\max}` (real-valued; the integer capacity is its floor).
    """
    delta = _v.real("delta", delta, -DELTA_MAX, DELTA_MAX)
    c = _v.real("c", c, 0.0, 1.0, lo_open=True)
    with np.errstate(over="ignore"):
        val = 1.0 + (1.0 - c) / c * math.exp(delta)
    if not math.isfinite(val):
        raise ValueError(f"N_max overflows for delta={delta} and c={c}: choose a smaller gap or a larger share")
    return val


def sink_example(delta, N, beta=1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Tokens, :math:`A` and :math:`V` of a causal attention layer whose last token puts exactly the
    weight :func:`sink_mass` ``(delta, N)`` on token 0.

    In :math:`\mathbb R^3`: the sink :math:`z_0 = (0, \Delta/\beta, 1)`, the query (last token)
    :math:`(1, 0, 0)`, the others :math:`(a_j, 0, 0)`; :math:`A = e_1 e_2^\top` so the query's scores are
    :math:`\beta\langle q, A z_j\rangle = \beta z_{j,2}` (:math:`\Delta` for the sink, 0 for all
    others), and :math:`V = e_3 e_3^\top` so the third coordinate of the query's output is the weight
    on the sink.

    Parameters
    ----------
    delta : float
        Score gap, :math:`|\Delta| \le 700`.
    N : int
        Number of tokens, :math:`2 \le N \le 10^4`.
    beta : float, optional
        Inverse temperature, :math:`\beta > 0`.

    Returns
    -------
    (Z, A, V)
    """
    delta = _v.real("delta", delta, -DELTA_MAX, DELTA_MAX)
    N = _v.integer("N", N, 2, TOKENS_MAX)
    beta = _v.real("beta", beta, 0.0, BETA_MAX, lo_open=True)
    Z = np.zeros((N, 3))
    Z[0] = (0.0, delta / beta, 1.0)
    Z[1:-1, 0] = np.linspace(-1.0, 1.0, N - 2) if N > 2 else 0.0
    Z[-1] = (1.0, 0.0, 0.0)
    A = np.zeros((3, 3))
    A[0, 1] = 1.0
    V = np.zeros((3, 3))
    V[2, 2] = 1.0
    return Z, A, V
