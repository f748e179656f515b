"""Inside a block: cached data for pages/block/page.py (its figures: figures.py).

What it computes: docs/constructions.md, section “Inside a block: positions, normalisation, splitting, sinks”.
"""

from __future__ import annotations

import numpy as np

from sim import block as bk
from ui.kit.figures import COLORS
from ui.kit.compute import cached

ROPE_BASE = 10000.0
ROPE_KS = (1, 2, 4, 8, 16, 32, 64)  # planes in the largest-return sweep
ROPE_FIT_FROM = 8  # the slope is fitted over k >= this
ROPE_BINS = 320  # log-spaced distance windows in the long-range plot
NORM_EPS_SHIFTS = (-3.0, 0.0, 3.0)  # decades around the chosen ε
NORM_RHO = np.logspace(-9.0, 3.0, 241)  # ‖x‖ grid of the gain plot
NORM_EPS = np.logspace(-14.0, 1.0, 151)  # ε grid at x = 0
SPLIT_ALPHAS = np.logspace(-4.0, 0.0, 17)
PERM_D = 4  # token dimension of the permutation panel
PERM_FLOOR = 1e-17  # zeros are drawn at this height on the log axis
SINK_GAP_FACTORS = (0.5, 1.0, 1.5)  # several gaps around the chosen Δ
SINK_MARKER_NS = (2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)
COLS3 = (COLORS["sa"], COLORS["usa"], COLORS["bound"])
SYMS3 = ("circle", "square", "diamond")


def _slope(x, y) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# --------------------------------------------------------------------------- RoPE
def rope_curve_ks(k: int) -> tuple[int, ...]:
    """The few k drawn over the long range: k, 4k and 16k rotation planes."""
    return (k, 4 * k, 16 * k)


def _envelope_edges(n_to: int, bins: int) -> np.ndarray:
    """The log-spaced windows of distances 1 … n_to of the long-range plot."""
    edges = np.unique(np.round(np.logspace(0.0, np.log10(n_to + 1.0), bins + 1)).astype(int))
    edges = edges[(edges >= 1) & (edges <= n_to + 1)]
    if edges[-1] != n_to + 1:
        edges = np.append(edges, n_to + 1)
    return edges


@cached
def rope_curve(kk: int, n_to: int) -> tuple[np.ndarray, ...]:
    """Per log-spaced window of distances: the (N, sim) of its largest and of its smallest value
    (the brute-force window extremes of the direct sum, bk.rope_window_extremes)."""
    return bk.rope_window_extremes(kk, _envelope_edges(n_to, ROPE_BINS), ROPE_BASE)


@cached
def rope_returns(n_from: int, n_to: int) -> tuple[list, list]:
    """The largest return beyond n_from for every k of ROPE_KS (does not depend on the page's k)."""
    heights, where = [], []
    for kk in ROPE_KS:
        h, at = bk.rope_largest_return(kk, n_from, n_to, ROPE_BASE)
        heights.append(h), where.append(at)
    return heights, where


@cached
def rope_data(k: int, n_from: int, n_to: int) -> dict:
    """Long-range sim(N) envelopes for a few k, and the largest return beyond n_from against k."""
    curves = {kk: rope_curve(kk, n_to) for kk in rope_curve_ks(k)}
    heights, where = rope_returns(n_from, n_to)
    ks, heights = np.array(ROPE_KS, dtype=float), np.array(heights)
    # a log-log fit needs positive heights (a very short window can have a negative maximum)
    fit = (ks >= ROPE_FIT_FROM) & (heights > 0)
    out = {
        "curves": curves,
        "ks": ks,
        "heights": heights,
        "where": np.array(where, dtype=float),
        "slope": None,
        "fit_line": None,
        "half_line": None,
    }
    if fit.sum() >= 2:
        slope = _slope(ks[fit], heights[fit])
        # the least-squares line through the fitted points, drawn over the fitted k only (further left it
        # would climb above 1, which no similarity reaches)
        icpt = float(np.mean(np.log(heights[fit]) - slope * np.log(ks[fit])))
        out |= {
            "slope": slope,
            "fit_ks": ks[fit],
            "fit_line": np.exp(icpt) * ks[fit] ** slope,
            "half_line": heights[fit][0] * (ks[fit] / ks[fit][0]) ** -0.5,
        }
    return out


def rope_band_tops(k: int, n_from: int, n_to: int) -> dict:
    """For each band of the long-range plot (k, 4k, 16k planes): the highest point of its thick
    line right of the dashed line (distances from n_from on), i.e. what the plot shows there."""
    out = {}
    for kk, (hx, hy, _lx, _ly) in rope_data(k, n_from, n_to)["curves"].items():
        right = hy[hx >= n_from]
        out[kk] = float(right.max()) if right.size else float("nan")
    return out


# --------------------------------------------------------------------------- RMSNorm
def norm_eps_values(log_eps: float) -> tuple[float, ...]:
    return tuple(10.0 ** (log_eps + s) for s in NORM_EPS_SHIFTS)


def _largest_sv(J: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvalsh(J))))  # J is symmetric


@cached
def norm_data(d: int, log_eps: float) -> dict:
    """Gain 1/r against ‖x‖ for several ε (closed form) and σ_max of the Jacobian at a few points."""
    u = np.random.default_rng(0).standard_normal(d)
    u /= np.linalg.norm(u)
    marks = NORM_RHO[::40]
    out = {"rho": NORM_RHO, "rho_marks": marks, "gain": {}, "svd": {}}
    for eps in norm_eps_values(log_eps):
        out["gain"][eps] = np.array([bk.rmsnorm_gain(r * u, eps) for r in NORM_RHO])
        out["svd"][eps] = np.array([_largest_sv(bk.rmsnorm_jacobian(r * u, eps)) for r in marks])
    out["eps"] = NORM_EPS
    out["gain0"] = np.array([bk.rmsnorm_gain(np.zeros(d), e) for e in NORM_EPS])
    out["eps_marks"] = NORM_EPS[::25]
    out["svd0"] = np.array([_largest_sv(bk.rmsnorm_jacobian(np.zeros(d), e)) for e in out["eps_marks"]])
    out["slope0"] = _slope(out["eps_marks"], out["svd0"])
    eps = 10.0**log_eps
    out["gain_at_eps"] = bk.rmsnorm_gain(np.zeros(d), eps)
    out["knee"] = float(np.sqrt(d * eps))  # ‖x‖ where ‖x‖²/d = ε
    return out


# --------------------------------------------------------------------------- splitting
@cached
def split_data(d: int, seed: int) -> dict:
    A, B, x = bk.splitting_example(d, seed)
    lim = bk.commutator_norm(A, B, x)
    # the work bound of the page's hard limit split_d <= 32 (60·(2d)³ per α; sim's default stops at d = 18)
    work = 60.0 * SPLIT_ALPHAS.size * (2 * 32) ** 3
    return {
        "alphas": SPLIT_ALPHAS,
        "defect": bk.splitting_defect(A, B, x, SPLIT_ALPHAS, max_work=work),
        "limit": lim,
        "trotter": bk.trotter_defect(A, B, x, SPLIT_ALPHAS, max_work=work),
        "half": 0.5 * SPLIT_ALPHAS**2 * lim,
    }


# --------------------------------------------------------------------------- permutation
def perm_positions(n: int, scale: float) -> np.ndarray:
    """Sinusoidal position vectors of slots 0..n-1 (frequencies 1 and 1/100), times ``scale``."""
    i = np.arange(n, dtype=np.float64)[:, None]
    w = np.array([1.0, 0.01])
    return scale * np.concatenate([np.sin(i * w), np.cos(i * w)], axis=1)


def perm_setup(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """Unit tokens, non-symmetric A and V, and a permutation that moves the tokens."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, PERM_D))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    A = rng.standard_normal((PERM_D, PERM_D)) / np.sqrt(PERM_D)
    V = rng.standard_normal((PERM_D, PERM_D)) / np.sqrt(PERM_D)
    perm = rng.permutation(n)
    if n > 1 and np.all(perm == np.arange(n)):
        perm = np.roll(perm, 1)
    return Z, A, V, perm


@cached
def perm_data(n: int, beta: float, pos: float, seed: int) -> dict:
    """‖u_i(πZ) − (π u(Z))_i‖ per slot i, plain / with positions / with a causal mask."""
    Z, A, V, perm = perm_setup(n, seed)
    P = perm_positions(n, pos)
    gaps = {}
    for case, kw in (("plain", {}), ("positions", {"positions": P}), ("causal", {"causal": True})):
        gaps[case] = np.linalg.norm(
            bk.attention(Z[perm], A, V, beta, **kw) - bk.attention(Z, A, V, beta, **kw)[perm], axis=1
        )
    scale = float(np.linalg.norm(bk.attention(Z, A, V, beta), axis=1).max())
    return {"slot": np.arange(1, n + 1), "gaps": gaps, "perm": perm + 1, "scale": scale}


# --------------------------------------------------------------------------- sink
def sink_gaps(delta: float) -> tuple[float, ...]:
    return tuple(f * delta for f in SINK_GAP_FACTORS)


@cached
def sink_data(delta: float, share: float) -> dict:
    """c(N) for several gaps (closed form), the same weight read off a causal softmax layer, N_max."""
    gaps = sink_gaps(delta)
    nmax = {g: bk.sink_capacity(g, share) for g in gaps}
    top = max(1e3, 100.0 * max(nmax.values()))
    N = np.logspace(0.0, min(np.log10(top), 12.0), 300)
    out = {
        "N": N,
        "mass": {},
        "layer": {},
        "nmax": nmax,
        "marker_N": np.array(SINK_MARKER_NS, dtype=float),
        # the gap that keeps the share c among 1000 tokens: c(1000) = c  <=>  Δ = ln(999 c/(1-c))
        "gap_for_1000": float(np.log(share / (1.0 - share) * 999.0)),
    }
    for g in gaps:
        out["mass"][g] = bk.sink_mass(g, N)
        weights = []
        for m in SINK_MARKER_NS:
            Z, A, V = bk.sink_example(g, m)
            weights.append(bk.attention(Z, A, V, 1.0, causal=True)[-1, 2])
        out["layer"][g] = np.array(weights)
    return out


def csv_columns(v: dict) -> dict:
    """The plotted data of every panel, one column per curve (ragged columns are padded)."""
    r = rope_data(v["rope_k"], v["rope_from"], v["rope_to"])
    n = norm_data(v["norm_d"], v["log_eps"])
    s = split_data(v["split_d"], v["split_seed"])
    p = perm_data(v["perm_n"], v["perm_beta"], v["perm_pos"], v["perm_seed"])
    k = sink_data(v["sink_delta"], v["sink_share"])
    cols = {}
    for kk, curves in r["curves"].items():  # (N, sim) at the high and the low end
        cols |= dict(zip((f"rope_k{kk}_{c}" for c in ("N_high", "sim_high", "N_low", "sim_low")), curves, strict=True))
    cols |= {"rope_k": r["ks"], "rope_largest_return": r["heights"], "rope_return_at_N": r["where"]}
    cols["norm_x"] = n["rho"]
    for eps, g in n["gain"].items():
        cols[f"gain_eps{eps:.0e}"] = g
    cols |= {"eps_at_x0": n["eps"], "gain_at_x0": n["gain0"]}
    cols |= {
        "alpha": s["alphas"],
        "splitting_defect": s["defect"],
        "commutator_norm": [s["limit"]],
        "trotter_error": s["trotter"],
        "half_alpha2_commutator": s["half"],
    }
    cols |= {"slot": p["slot"], "permuted_slot_source": p["perm"]}
    cols |= {f"gap_{case}": g for case, g in p["gaps"].items()}
    cols["sink_N"] = k["N"]
    for g, m in k["mass"].items():
        cols[f"sink_mass_delta{g:g}"] = m
    cols |= {f"N_max_delta{g:g}": [x] for g, x in k["nmax"].items()}
    return cols
