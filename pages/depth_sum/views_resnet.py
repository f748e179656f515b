"""The depth_sum page's residual network: its energy over depth by Monte Carlo, the sweeps over L
and N (run on demand, point by point), one training step (their figures: figures_resnet.py)."""

from __future__ import annotations

import math

import numpy as np

from sim import depth_sum as ds
from ui.kit.compute import cached, sub_seed
from ui.kit.figures import thin
from pages.depth_sum.views import RES_BUDGET, RES_MIN_TRIALS, STEP_L, STEP_L_MARK, SWEEP_BUDGET, SWEEP_L, SWEEP_N


def _res_trials(L, N, trials, budget):
    return int(max(RES_MIN_TRIALS, min(trials, budget // (L * N * N))))


@cached
def residual(alpha, L, N, trials, seed) -> dict:
    n = _res_trials(L, N, trials, RES_BUDGET)
    m, se = ds.residual_energy_profile(alpha, L, N, n, sub_seed(seed, 6))
    ell = np.arange(L + 1)
    keep = thin(L + 1, 60)
    fine = np.linspace(0, L, 300)
    return {
        "ell": ell[keep],
        "mean": m[keep],
        "se": se[keep],
        "n": n,
        "fine": fine,
        "exact": (1.0 + float(L) ** (-2 * alpha)) ** fine,
        "final": float(m[-1]),
        "final_se": float(se[-1]),
        "final_exact": ds.residual_energy(alpha, L),
    }


@cached(max_entries=512)
def residual_point(alpha, L, N, trials, seed, tag) -> tuple:
    n = _res_trials(L, N, trials, SWEEP_BUDGET)
    m, se = ds.residual_energy_mc(alpha, L, N, n, sub_seed(seed, 7, tag, L, N))
    return m, se, n


@cached
def one_step_data(alpha, c) -> dict:
    f = np.array([ds.one_step(c, int(L))[0] for L in STEP_L])
    marks = {u: [ds.sgd_step(alpha, c, int(L), u) for L in STEP_L_MARK] for u in ("sgd", "sign")}
    return {
        "L": STEP_L,
        "f": f,
        "lin": 1.0 - c,
        "lim": math.exp(-c),
        "L_mark": np.array(STEP_L_MARK),
        "f_sgd": np.array([r["f_after"] for r in marks["sgd"]]),
        "f_sign": np.array([r["f_after"] for r in marks["sign"]]),
        "lin_sgd": np.array([r["f_linearised"] for r in marks["sgd"]]),
        "lr_sgd": np.array([r["lr"] for r in marks["sgd"]]),
        "lr_sign": np.array([r["lr"] for r in marks["sign"]]),
        "dw": np.array([r["dw"] for r in marks["sgd"]]),
    }


def _sweep_jobs(L, N):
    return [("L", x, x, N) for x in SWEEP_L] + [("N", x, L, x) for x in SWEEP_N]


def fill_sweep(alpha, L, N, trials, seed, progress=lambda fraction: None) -> None:
    """Compute (and cache) every point of the two residual sweeps; ``progress(fraction)`` after each."""
    jobs = _sweep_jobs(L, N)
    for i, (kind, _, LL, NN) in enumerate(jobs):
        residual_point(alpha, LL, NN, trials, seed, 0 if kind == "L" else 1)
        progress((i + 1) / len(jobs))


def _sweep_data(alpha, L, N, trials, seed) -> dict:
    res = {"L": [], "N": []}
    for kind, x, LL, NN in _sweep_jobs(L, N):
        res[kind].append((x, *residual_point(alpha, LL, NN, trials, seed, 0 if kind == "L" else 1)))
    out = {}
    for kind in ("L", "N"):
        arr = np.array(res[kind], dtype=float)
        out[kind] = arr[:, 0]
        out[f"{kind}_mean"], out[f"{kind}_se"], out[f"{kind}_n"] = arr[:, 1], arr[:, 2], arr[:, 3]
    out["N_sd"] = out["N_se"] * np.sqrt(out["N_n"])
    return out
