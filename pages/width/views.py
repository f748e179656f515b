"""Data adapters and figure builders of the page "Width: lazy training and the frozen kernel".

Compute goes through :mod:`sim.width` only; each adapter is ``@cached`` and returns a small dict of
arrays, each builder is a ``@cached_figure`` with the signature ``(t, *params)``.

Drawn with :mod:`ui.kit.figures` only (the bound around the frozen-kernel prediction is a ``band``).
"""

from __future__ import annotations

import math

import numpy as np

from sim import width as W
from ui.kit.compute import cached
from ui.kit.figures import (
    COLORS,
)

RECORD = 41  # recorded training times per run (markers)
PAGE_WORK = 600_000  # steps * N * M of one run on the page at most
SWEEP_NS = (16, 32, 64, 128, 256, 512)  # widths of the log-log sweep
SWEEP_DT = (0.05, 0.1)  # its RK4 step, smallest and largest (each tested
SWEEP_WORK = 1_250_000  # within 1 % of a fine step); steps*M*sum(N)*2 at most
EIG_FLOOR = 1e-12  # eigenvalues below this (relative) are drawn as "0"
SCALE_COLOR = {"lazy": COLORS["sa"], "mean_field": COLORS["usa"]}
SCALE_SYMBOL = {"lazy": "circle", "mean_field": "square"}


def step_for(N: int, T: float, dt: float, M: int) -> float:
    """The RK4 step bound the page uses: ``dt``, raised when one run would exceed ``PAGE_WORK``."""
    k = max(1, math.ceil(T / (RECORD - 1) / dt - 1e-9))
    k_max = max(1, int(PAGE_WORK // (N * M * (RECORD - 1))))
    return dt if k <= k_max else T / ((RECORD - 1) * k_max)


def sweep_step(T: float, M: int) -> float:
    """The sweep's RK4 step: ``SWEEP_DT[0]``, raised up to ``SWEEP_DT[1]`` to keep ``SWEEP_WORK``."""
    steps_max = max(1, int(SWEEP_WORK // (M * sum(SWEEP_NS) * len(W.SCALINGS))))
    return min(max(SWEEP_DT[0], T / steps_max), SWEEP_DT[1], T)


def _start(start: str, N: int, seed: int):
    return (W.paired_init if start == "paired" else W.random_init)(N, seed)


def _ratio(gap, bound, r0_norm) -> float:
    """Largest gap / bound over the records where the bound is above rounding (else NaN)."""
    ok = bound > 1e-9 * r0_norm
    return float(np.max(gap[ok] / bound[ok])) if np.any(ok) else float("nan")


@cached
def run_data(N: int, scaling: str, start: str, T: float, dt: float, data: str, seed: int) -> dict:
    """One training run at width N (the records of ``sim.width.train_from``) and the step used."""
    xs, ys = W.dataset(data)
    h_max = step_for(N, T, dt, xs.size)
    w, a = _start(start, N, seed)
    res = W.train_from(w, a, scaling, T, h_max, xs, ys, record=RECORD)
    gap = np.linalg.norm(res["residual"] - res["frozen"], axis=1)
    out = {
        k: res[k]
        for k in (
            "t",
            "loss",
            "param_shift",
            "kernel_shift",
            "residual",
            "frozen",
            "bound",
            "eig0",
            "eig_end",
            "steps",
            "h",
        )
    }
    out.update(
        xs=xs,
        ys=ys,
        dt_used=h_max,
        raised=h_max > dt,
        gap=gap,
        frozen_loss=0.5 * np.sum(res["frozen"] ** 2, axis=1),
        ratio=_ratio(gap, res["bound"], np.linalg.norm(res["residual"][0])),
    )
    return out


@cached
def sweep_data(start: str, T: float, data: str, seed: int) -> dict:
    """Parameter and kernel motion at time T against the widths ``SWEEP_NS``, with fitted slopes."""
    xs, ys = W.dataset(data)
    h = sweep_step(T, xs.size)
    sw = W.width_sweep(SWEEP_NS, T, h, seed, xs, ys, start=start)
    out = dict(sw, h=h)
    for key in ("lazy_param", "lazy_kernel", "mean_field_param", "mean_field_kernel"):
        v = sw[key]
        out["slope_" + key] = W.slope(sw["N"], v) if np.all(v > 0) else float("nan")
    return out


def fmt_slope(v: float) -> str:
    return "—" if not math.isfinite(v) else f"{v:+.2f}".replace("-", "−")


def fmt_number(v: float, spec: str) -> str:
    return "—" if not math.isfinite(v) else format(v, spec)
