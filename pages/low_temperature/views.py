"""Data adapters of the page "Low temperature: concentration, then drift" (§9); its figures: figures.py.

The adapters (``@cached``) call :mod:`sim.low_temperature` and return small dicts of arrays;
the builders of figures.py read them.
"""

from __future__ import annotations

import math

import numpy as np

from sim import attention as att
from sim import low_temperature as lt
from ui.kit.figures import COLORS
from ui.kit.compute import cached

MODELS = ("axis", "plane", "drift")
#: the three inverse temperatures of a view: 10^(L-2), 10^(L-1), 10^L
BETA_FACTORS = (0.01, 0.1, 1.0)
BETA_COLORS = (COLORS["other"], COLORS["accent"], COLORS["sa"])
#: recorded depths per run (one exact W2 = one optimal assignment, O(n^3), each) ...
RECORDS = 21
#: ... fewer (not below MIN_RECORDS) when records * n^3 summed over all runs would exceed this
ASSIGN_BUDGET = 1.5e8
MIN_RECORDS = 11
#: bound on layers * n^2 summed over all runs of a view : see ``plan``
PAIR_BUDGET = 2e7
#: depth of the beta sweep, and its grid of beta
RATE_DEPTH = 1.0
RATE_LOG_BETAS = tuple(np.linspace(0.0, 4.0, 7))
#: the value matrix of the "drift" model (its dominant eigenvector is e1)
DRIFT_V = (1.0, 0.9, 0.5)


def matrices(model: str, gap: float) -> tuple[np.ndarray, np.ndarray]:
    r"""(B, V) of a model, with :math:`S = VB^\top` symmetric and spectral gap ``gap``.

    - ``axis``:  B = I, V = diag(1, 1-γ, 1-γ): Π sends every token to ±e₁;
    - ``plane``: B = I, V = diag(1, 1, 1-γ): Π sends tokens to the great circle z₃ = 0;
    - ``drift``: B = diag(1, (1+γ)/0.9, 1), V = diag(1, 0.9, 0.5): S = diag(1, 1+γ, 0.5), so Π
      sends tokens to ±e₂, while V's own dominant eigenvector is e₁.
    """
    if model == "axis":
        return np.eye(3), np.diag([1.0, 1.0 - gap, 1.0 - gap])
    if model == "plane":
        return np.eye(3), np.diag([1.0, 1.0, 1.0 - gap])
    if model == "drift":
        return np.diag([1.0, (1.0 + gap) / DRIFT_V[1], 1.0]), np.diag(DRIFT_V)
    raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def plan(T: float, dt: float, n: int, runs: int) -> tuple[int, float]:
    """Layers and step actually used: round(T/dt) layers of dt, unless that exceeds the work
    budget; then fewer layers of a larger step reach the same depth T."""
    steps = max(1, round(T / dt))
    cap = max(1, int(PAIR_BUDGET / (runs * n * n)))
    if steps > cap:
        return cap, T / cap
    return steps, dt


def records(n: int, runs: int, steps: int) -> int:
    """Recorded depths per run: RECORDS, fewer for large views (ASSIGN_BUDGET), at most steps + 1."""
    fit = int(ASSIGN_BUDGET / (runs * float(n) ** 3))
    return min(max(MIN_RECORDS, min(RECORDS, fit)), steps + 1)


def _zero_maps(n, B, V, steps, dt, seeds, layers) -> np.ndarray:
    """The zero-temperature layer map from every seed's start at the given layers, shape
    (seeds, len(layers), n, d). It does not depend on β; each token moves on its own, so all
    seeds' tokens go through one call (stacked rows)."""
    Z0 = np.concatenate([lt.start_tokens(n, B.shape[0], s) for s in range(seeds)])
    zt = lt.zero_temperature_map(Z0, B, V, dt, steps)[layers]
    return zt.reshape(len(layers), seeds, n, -1).swapaxes(0, 1)


def _runs(n, beta, B, V, steps, dt, seed, record, zero):
    """One run and its RMS distance to the zero-temperature layer map ``zero[seed]`` (from
    :func:`_zero_maps`) at the recorded layers (lt.rms_distance of each pair, vectorised)."""
    r = lt.run(n, beta, B, V, steps * dt, dt, seed, record=record)
    D = r["Z"] - zero[seed]
    return r, np.sqrt(np.einsum("kij,kij->k", D, D) / n)


@cached
def lowtemp_data(model: str, gap: float, log10_beta: float, n: int, seeds: int, T: float, dt: float) -> dict:
    """W2 to Π♯ρ₀ and the distance to the zero-temperature flow over depth, for three β and
    ``seeds`` seeds; the tokens of seed 0 at the largest β for the 3-D scene."""
    B, V = matrices(model, gap)
    S = lt.check_pair(B, V)
    runs = len(BETA_FACTORS) * seeds
    steps, dt_used = plan(T, dt, n, runs)
    record = records(n, runs, steps)
    betas = 10.0**log10_beta * np.array(BETA_FACTORS)
    out = {
        "betas": betas,
        "steps": steps,
        "dt": dt_used,
        "n": n,
        "seeds": seeds,
        "model": model,
        "w2": np.empty((betas.size, seeds, record)),
        "dist": np.empty((betas.size, seeds, record)),
        "k": np.full((betas.size, seeds), -1, dtype=np.int64),
    }
    zero = _zero_maps(n, B, V, steps, dt_used, seeds, np.rint(np.linspace(0.0, steps, record)).astype(np.int64))
    for b, beta in enumerate(betas):
        for s in range(seeds):
            r, dist = _runs(n, beta, B, V, steps, dt_used, s, record, zero)
            out["w2"][b, s], out["dist"][b, s] = r["w2"], dist
            if model == "axis":
                out["k"][b, s] = lt.pole_imbalance(r["Z"][0], r["Z"][-1], S)
            if b == betas.size - 1 and s == 0:
                mid = int(np.argmin(np.abs(r["t"] - math.log(beta)))) if math.log(beta) < r["t"][-1] else None
                out["scene"] = {
                    "start": r["Z"][0],
                    "end": r["Z"][-1],
                    "target": r["target"],
                    "mid": None if mid is None else r["Z"][mid],
                    "t_mid": None if mid is None else float(r["t"][mid]),
                    "t_end": float(r["t"][-1]),
                }
    out["t"] = r["t"]
    Q1, mu = lt.dominant_basis(S)
    out["Q1"], out["mu"] = Q1, mu
    wv, Qv = np.linalg.eig(V)  # V's own dominant direction (the conjecture)
    out["v_axis"] = np.real(Qv[:, int(np.argmax(np.real(wv)))])
    return out


@cached
def rate_data(model: str, gap: float, n: int, seeds: int, dt: float) -> dict:
    """Distance to the zero-temperature layer map at depth RATE_DEPTH over a grid of β."""
    B, V = matrices(model, gap)
    betas = 10.0 ** np.array(RATE_LOG_BETAS)
    steps, dt_used = plan(RATE_DEPTH, dt, n, betas.size * seeds)
    zero = _zero_maps(n, B, V, steps, dt_used, seeds, np.array([steps]))[:, 0]
    # what lt.run(n, beta, B, V, steps * dt_used, dt_used, s, record=2) does to the tokens (one
    # engine call from lt.start_tokens), without its two W2 assignments, which this panel does not use
    starts = [lt.start_tokens(n, B.shape[0], s) for s in range(seeds)]
    d = np.array(
        [
            [
                np.sqrt(
                    np.mean(
                        np.sum(
                            (
                                att.simulate(starts[s], beta, dt_used, steps, A=B, V=V, flow="SA", record_every=steps)[
                                    -1
                                ]
                                - zero[s]
                            )
                            ** 2,
                            axis=1,
                        )
                    )
                )
                for s in range(seeds)
            ]
            for beta in betas
        ]
    )
    mean = d.mean(axis=1)
    rate = np.sqrt(np.log(betas + 1.0) / betas)
    C = float(np.max(mean / rate))  # the smallest multiple of the rate above every point
    return {
        "betas": betas,
        "mean": mean,
        "lo": d.min(axis=1),
        "hi": d.max(axis=1),
        "rate": rate,
        "C": C,
        "depth": steps * dt_used,
        "dt": dt_used,
    }


def csv_columns(d: dict, r: dict) -> dict:
    """The plotted data, one column per curve (ragged columns are padded by the CSV writer)."""
    cols = {"tau": d["t"]}
    for b, beta in enumerate(d["betas"]):
        tag = f"beta={beta:.6g}"
        w, D = d["w2"][b], d["dist"][b]
        cols |= {
            f"W2_mean[{tag}]": w.mean(0),
            f"W2_min[{tag}]": w.min(0),
            f"W2_max[{tag}]": w.max(0),
            f"dist_zero_T_mean[{tag}]": D.mean(0),
            f"dist_zero_T_min[{tag}]": D.min(0),
            f"dist_zero_T_max[{tag}]": D.max(0),
        }
        if d["model"] == "axis":
            cols[f"k_per_seed[{tag}]"] = d["k"][b]
    cols |= {
        "beta_sweep": r["betas"],
        f"dist_at_tau={r['depth']:.3g}_mean": r["mean"],
        "dist_min": r["lo"],
        "dist_max": r["hi"],
        "C*sqrt(log(beta+1)/beta)": r["C"] * r["rate"],
    }
    return cols
