"""Bounds on the arguments and work of :mod:`sim.depth_sum`, and the checks that raise
``ValueError`` naming the argument.
"""

from __future__ import annotations

from sim import _validate as _v


#: largest alpha accepted (L^{-alpha} for alpha > 2 adds nothing to the lesson)
ALPHA_MAX = 2.0
#: largest depth accepted by the exact (closed-form) functions
L_MAX_EXACT = 10**7
#: bound on trials * L for the Gaussian sums (normals drawn)
MAX_SUM_WORK = 40_000_000
#: bound on the entries of the sample paths (trials * (L + 1)) drawn at once
MAX_PATH_OUTPUT = 4_000_000
#: bound on trials * L * L for the covariance identity
MAX_COV_WORK = 400_000_000
#: largest depth for the covariance identity (an L x L matrix)
L_MAX_COV = 1024
#: bound on trials * L * width**2 for the residual network (normals drawn)
MAX_RESIDUAL_WORK = 100_000_000
#: largest depth for the residual network Monte Carlo (alpha = 0 grows like 2^{L/2})
L_MAX_RESIDUAL = 512
#: largest width for the residual network Monte Carlo
WIDTH_MAX = 1024
#: float64 entries drawn per block (keeps memory at ≈ 16 MB whatever the sizes)
_BLOCK = 2**21
#: largest seed (numpy accepts any non-negative int; we keep it in int64)
SEED_MAX = 2**63 - 1


# --------------------------------------------------------------------------- validation
def _alpha(alpha):
    return _v.real("alpha", alpha, 0.0, ALPHA_MAX)


def _depth(L, hi=L_MAX_EXACT):
    return _v.integer("L", L, 1, hi)


def _sigma(sigma):
    return _v.real("sigma", sigma, 0.0, 1e6, lo_open=True)


def _rho(rho, L):
    rho = _v.real("rho", rho, -1.0, 1.0)
    if L > 1 and rho < -1.0 / (L - 1) * (1.0 + 1e-12):
        raise ValueError(
            f"rho must be >= -1/(L-1) = {-1.0 / (L - 1):.6g} for L = {L}: L equally "
            f"correlated terms cannot all be that negatively correlated (the covariance "
            f"matrix (1-rho) I + rho 11^T has eigenvalue 1+(L-1)rho < 0), got {rho}"
        )
    return rho


def _mu(mu):
    return _v.real("mu", mu, -1e6, 1e6)


def _trials(trials, lo=2):
    return _v.integer("trials", trials, lo)


def _seed(seed):
    return _v.integer("seed", seed, 0, SEED_MAX)


def _draws(L, trials, seed, hi, lo_trials=2):
    """Depth ``L`` (at most ``hi``), ``trials`` (at least ``lo_trials``) and ``seed`` of a run of draws."""
    return _depth(L, hi), _trials(trials, lo_trials), _seed(seed)


def _scales(alpha, sigma, rho, L):
    """``alpha``, ``sigma`` and ``rho`` (for depth ``L``): what rescales drawn pieces into sums."""
    return _alpha(alpha), _sigma(sigma), _rho(rho, L)


def _check_work(what: str, work: float, cap: float, hint: str):
    if work > cap:
        raise ValueError(f"{what} = {work:.3g} exceeds the bound {cap:.3g}: {hint}")
