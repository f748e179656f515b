"""Hemisphere clustering: cached runs for pages/hemisphere/page.py (its figures: figures.py).

What it computes: docs/constructions.md, section “Hemisphere clustering”.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sim import hemisphere as hs
from sim.attention import simulate
from ui.kit.figures import thin
from ui.kit.compute import cached

MAX_LAYERS = 4000  # layers per simulation on this page
MAX_WORK = 1.5e9  # layers * n^2 * d per simulation (about a second here at worst)
RECORDS = 400  # recorded layers per run (curves), at most
STATS_WORK = 1e8  # records * n^2 * d for the cluster counts of the contrast run
DIAM_POINTS = 80  # layers at which the diameter is computed and drawn (ends included)
FRAMES = 48  # animation frames per 3-D figure
LINE_POINTS = 6_000  # trajectory points drawn per 3-D figure (all tokens together)
LINE_MAX = 100  # ... and at most this many per token
THRESHOLD = 0.999  # two tokens are in one cluster when <z_i, z_j> > THRESHOLD
#: phase-diagram sizes: systems B and number of beta values (protocol: n=32, d=2, dt=0.1, T=30);
#: "paper" is the authors' full protocol (2048 x 90, work 1.13e11 > MAX_PHASE_WORK, hence its own
#: max_work) in float32: a long run on the one thread a heavy job gets (bench/engine.py, table 5)
PHASE_SIZES = {
    "small": dict(B=32, n_betas=18),
    "medium": dict(B=128, n_betas=24),
    "large": dict(B=256, n_betas=46),
    "paper": dict(B=2048, n_betas=90, precision="float32", max_work=1.2e11),
}


def phase_job(size: str):
    """The heavy job of one phase-diagram size: ``fn(progress=...)`` -> :class:`sim.hemisphere.PhaseDiagram`."""
    return functools.partial(hs.phase_diagram, **PHASE_SIZES[size])


def _layers(horizon: float, dt: float, n: int, d: int) -> tuple[int, float]:
    """Number of layers and the step actually used (Δ is enlarged if the work would be too big)."""
    steps = max(1, int(round(horizon / dt)))
    cap = max(1, min(MAX_LAYERS, int(MAX_WORK / (n * n * d))))
    if steps > cap:
        return cap, horizon / cap
    return steps, dt


def _run(Z0, beta, horizon, dt, A):
    n, d = Z0.shape
    steps, dt_used = _layers(horizon, dt, n, d)
    records = max(50, min(RECORDS, int(STATS_WORK // (n * n * d))))  # pair statistics stay bounded
    every = max(1, -(-steps // records))
    traj = simulate(Z0, beta, dt_used, steps, A=A, record_every=every)
    tau = np.arange(traj.shape[0]) * every * dt_used
    rest = steps - (traj.shape[0] - 1) * every  # the last layer is always a record: the values
    if rest:  # "at the end" are at layer `steps`, not before it
        last = simulate(traj[-1], beta, dt_used, rest, A=A, record_every=rest)[-1:]
        traj, tau = np.concatenate([traj, last]), np.append(tau, steps * dt_used)
    w = np.eye(d)[-1]
    P = np.eye(3) if d == 3 else hs.projection_basis(d, w)  # displayed coordinates: (.., .., <w, z>)
    kf = thin(traj.shape[0], FRAMES)
    kl = thin(traj.shape[0], max(2, min(LINE_MAX, LINE_POINTS // n)))
    return {
        "traj": traj,
        "tau": tau,
        "steps": steps,
        "dt": dt_used,
        "w": w,
        "frames": (traj[kf] @ P.T).astype(np.float32),
        "frame_tau": tau[kf],
        "lines": (traj[kl] @ P.T).astype(np.float32),
    }


#: the page parameters of the hemisphere run, in the order ``hemi_data`` takes them
HP = ("n", "d", "beta", "horizon", "dt", "cap", "A", "A_seed", "seed")
#: the page parameters of the contrast run, in the order ``contrast_data`` takes them
CP = ("n", "d", "contrast_beta", "contrast_horizon", "dt", "A", "A_seed", "seed")


def hemi_args(v: dict) -> tuple:
    """The hemisphere run's arguments (``HP``) from the page's values."""
    return tuple(v[k] for k in HP)


def contrast_args(v: dict) -> tuple:
    """The contrast run's arguments (``CP``) from the page's values."""
    return tuple(v[k] for k in CP)


@cached
def hemi_data(n, d, beta, horizon, dt, cap, A_kind, A_seed, seed) -> dict:
    """The hemisphere run: tokens uniform on a cap around w = e_d."""
    A = hs.random_matrix(d, A_kind, A_seed)
    Z0 = hs.cap_uniform(n, d, math.radians(cap), seed=seed)
    out = _run(Z0, beta, horizon, dt, A)
    traj = out.pop("traj")
    out["rmin"] = hs.min_projection(traj, out["w"])
    # the diameter (an O(n^2) pass per layer) only at the layers drawn, first and last included
    k = thin(traj.shape[0], DIAM_POINTS)
    out["diam_tau"] = out["tau"][k]
    out["diam"] = hs.pair_stats(traj[k], THRESHOLD).diameter
    # the best hemisphere (a linear programme) is shown only for caps beyond 90°
    out["margin"] = hs.hemisphere_direction(Z0)[1] if cap >= 90 else None
    return out


@cached
def contrast_data(n, d, beta, horizon, dt, A_kind, A_seed, seed) -> dict:
    """The contrast run: tokens uniform on the whole sphere."""
    A = hs.random_matrix(d, A_kind, A_seed)
    Z0 = hs.sphere_uniform(n, d, seed=seed + 1)
    out = _run(Z0, beta, horizon, dt, A)
    traj = out.pop("traj")
    out["clusters"] = hs.cluster_count(traj, THRESHOLD)  # = pair_stats(...).clusters, faster
    out["labels"] = hs.cluster_labels(traj[-1], THRESHOLD)
    return out
