"""From tokens to a measure: cached data and figure builders for pages/measures/page.py.

What it computes: docs/constructions.md, section “From tokens to a measure: finite n, many heads”.

Drawn with :mod:`ui.kit.figures`; one drawing idea only this page has stays here: ``_paths`` (all token
paths as one line with gaps, also where a path wraps around the circle).
"""

from __future__ import annotations

import math

import numpy as np

from sim import measures as ms
from ui.kit.figures import COLORS, cached_figure, figure, heatmap, line, markers, thin, vline, vline_label
from ui.kit.compute import cached, sub_seed

N_REF = 1024  # tokens of the reference system
BINS = 90  # angle bins of the reference density (4° each)
MAX_TOKEN_LINES = 64  # token paths drawn (all tokens enter W₁)
SAMPLE_NS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
SAMPLE_TRIALS = 200
HEAD_N, HEAD_D = 32, 3  # tokens and dimension of the head panel
HEAD_TRIALS = 16
SIGMA_BAR = 2.0  # error bars: ± this many standard errors
THETA_LO = -0.5 * math.pi  # angles drawn in [−π/2, 3π/2): both bumps of ρ₀ (at 0 and π) inside


def _wrap(theta: np.ndarray) -> np.ndarray:
    return np.mod(theta - THETA_LO, 2 * math.pi) + THETA_LO


def head_grid(H: int) -> np.ndarray:
    """Powers of two below ``H``, and ``H``."""
    g = [2**k for k in range(0, 14) if 2**k < H]
    return np.array(g + [H])


# --------------------------------------------------------------------------- data
@cached
def stability_data(n: int, beta: float, depth: float, dt: float, seed: int) -> dict:
    """W₁ over depth with its bound, the token paths and the reference density (small arrays)."""
    r = ms.stability(n, beta, depth, dt, seed, n_ref=N_REF, max_records=101)
    t = r["t"]
    tau_star = math.log(math.pi / r["w1"][0]) / r["C"]
    # the bound is drawn up to where it reaches π (beyond, the diameter line says the same)
    fine = np.linspace(0.0, min(tau_star, t[-1]), 300)
    log_b = r["C"] * fine + math.log(r["w1"][0])
    edges = np.linspace(THETA_LO, THETA_LO + 2 * math.pi, BINS + 1)
    dens = np.stack([np.histogram(_wrap(th), bins=edges)[0] for th in r["theta_ref"]]) / (N_REF * (edges[1] - edges[0]))
    keep = thin(n, MAX_TOKEN_LINES)
    return {
        "t": t,
        "w1": r["w1"],
        "bound": r["bound"],
        "C": r["C"],
        "layers": r["layers"],
        "fine": fine,
        "bound_fine": np.where(log_b < math.log(math.pi), np.exp(np.minimum(log_b, 2.0)), math.pi),
        "tau_star": tau_star,
        "theta": _wrap(r["theta"][:, keep]),
        "centres": 0.5 * (edges[1:] + edges[:-1]),
        "density": dens,
    }


@cached
def sampling_data(seed: int) -> dict:
    """Monte-Carlo E W₁ against n (iid uniform angles) and the exact companions."""
    ns = np.array(SAMPLE_NS)
    res = [ms.sampling_error(int(k), SAMPLE_TRIALS, sub_seed(seed, i)) for i, k in enumerate(ns)]
    fine = np.unique(np.geomspace(ns[0], ns[-1], 60).round().astype(int))
    return {
        "n": ns,
        "mean": np.array([r[0] for r in res]),
        "se": np.array([r[1] for r in res]),
        "fine": fine,
        "fixed_shift": np.array([ms.fixed_shift_mean(int(k)) for k in fine]),
        "equispaced": np.array([ms.equispaced_w1(int(k)) for k in fine]),
    }


@cached
def heads_data(H: int, beta: float, seed: int) -> dict:
    """Head-average error against the head count, with the exact bound and large-H law."""
    Hs = head_grid(H)
    res = [ms.head_average_error(int(h), HEAD_TRIALS, seed, n=HEAD_N, d=HEAD_D, beta=beta) for h in Hs]
    th = ms.head_error_theory(HEAD_N, HEAD_D, beta, seed)
    fine = np.geomspace(1.0, float(Hs[-1]), 50)
    return {
        "H": Hs,
        "mean": np.array([r[0] for r in res]),
        "se": np.array([r[1] for r in res]),
        "fine": fine,
        "bound": th["bound"] / np.sqrt(fine),
        "asymptote": th["asymptote"] / np.sqrt(fine),
        "bound_c": th["bound"],
        "asymptote_c": th["asymptote"],
    }


# --------------------------------------------------------------------------- drawing helpers
def _mc(x, y, se, name: str) -> dict:
    """Monte Carlo means (open markers) with ±SIGMA_BAR standard-error bars."""
    return markers(x, y, name, size=8, error=SIGMA_BAR * np.asarray(se), error_y=dict(thickness=1.2, width=4))


def _paths(theta: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All token paths as one line with gaps (also where a path wraps around the circle)."""
    xs, ys = [], []
    for k in range(theta.shape[1]):
        y = theta[:, k].copy()
        jump = np.abs(np.diff(y)) > math.pi
        x = t.astype(float)
        if jump.any():
            cut = np.flatnonzero(jump) + 1
            y = np.insert(y, cut, np.nan)
            x = np.insert(x, cut, np.nan)
        xs += [x, [np.nan]]
        ys += [y, [np.nan]]
    return np.concatenate(xs), np.concatenate(ys)


# --------------------------------------------------------------------------- figures
def _shade_top(density: np.ndarray) -> float:
    pos = density[density > 0]
    return float(np.quantile(pos, 0.95)) if pos.size else 1.0


@cached_figure
def tokens_figure(t, n, beta, depth, dt, seed):
    s = stability_data(n, beta, depth, dt, seed)
    x, y = _paths(s["theta"], s["t"])
    # one legend entry (a heatmap has none) is not shown: no legend rows to reserve under the title
    return figure(
        t("fig.x_depth"),
        t("fig.y_angle"),
        t("fig.tokens_title"),
        height=425,
        margin=dict(t=60),
        data=[
            # the reference, shaded: a stronger blue, saturated at the 95th percentile of the positive density
            # (a few concentrated bins would otherwise leave everything else nearly white)
            heatmap(
                s["t"],
                s["centres"],
                s["density"].T,
                t("fig.reference"),
                [[0, "#FFFFFF"], [0.08, "#DCE8F4"], [1, "#3F7CB8"]],
                zmin=0.0,
                zmax=_shade_top(s["density"]),
                hover="τ=%{x:.3g}<br>θ=%{y:.3g}<br>ρ=%{z:.3g}",
            ),
            line(
                x, y, t("fig.tokens", n=n), COLORS["sim"], width=1.2, dash="dash", connectgaps=False, hoverinfo="skip"
            ),
        ],
        xaxis=dict(range=[0, s["t"][-1]]),
        yaxis=dict(
            range=[THETA_LO, THETA_LO + 2 * math.pi],
            tickvals=[-math.pi / 2, 0, math.pi / 2, math.pi, 3 * math.pi / 2],
            ticktext=["−π/2", "0", "π/2", "π", "3π/2"],
        ),
    )


@cached_figure
def w1_figure(t, n, beta, depth, dt, seed):
    s = stability_data(n, beta, depth, dt, seed)
    k = thin(s["t"].size, 60)
    return figure(
        t("fig.x_depth"),
        t("fig.y_w1"),
        t("fig.w1_title"),
        log_y=True,
        data=[
            line(s["fine"], s["bound_fine"], t("fig.bound"), COLORS["bound"]),
            line([0, s["t"][-1]], [math.pi, math.pi], t("fig.diameter"), COLORS["ref"], width=1.5, dash="dot"),
            markers(s["t"][k], s["w1"][k], t("fig.w1_sim")),
        ],
    )


def _mc_loglog(t, d: dict, x: str, keys: tuple, curves: tuple, **kw):
    """A log-log figure of a Monte Carlo mean against a size (``d[x]``, ``d["mean"]``, ``d["se"]``)
    beside closed forms over ``d["fine"]``: ``curves`` are ``(entry, legend key, colour)``; ``keys``
    the x title, the y title, the title and the Monte Carlo legend."""
    x_title, y_title, title, mc = keys
    data = [line(d["fine"], d[entry], t(name), color) for entry, name, color in curves]
    data.append(_mc(d[x], d["mean"], d["se"], t(mc)))
    return figure(t(x_title), t(y_title), t(title), data, log_x=True, log_y=True, **kw)


@cached_figure
def sampling_figure(t, n, seed):
    keys = ("fig.x_n", "fig.y_w1_mean", "fig.sampling_title", "fig.sampling_sim")
    curves = (("fixed_shift", "fig.fixed_shift", COLORS["exact"]), ("equispaced", "fig.equispaced", COLORS["ref"]))
    notes = [vline_label(n, t("fig.your_n"))]
    return _mc_loglog(t, sampling_data(seed), "n", keys, curves, shapes=[vline(n)], annotations=notes)


@cached_figure
def heads_figure(t, H, beta, seed):
    keys = ("fig.x_heads", "fig.y_head_err", "fig.heads_title", "fig.head_sim")
    curves = (("bound", "fig.head_bound", COLORS["bound"]), ("asymptote", "fig.head_asymptote", COLORS["exact"]))
    return _mc_loglog(t, heads_data(H, beta, seed), "H", keys, curves)
