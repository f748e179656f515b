"""Data adapters and figures of the page "Low temperature: concentration, then drift" (§9).

The adapters (``@cached``) call :mod:`sim.low_temperature` and return small dicts of arrays;
the builders (``@cached_figure``, signature ``(t, *params)``) read them and draw with the
shared vocabulary of :mod:`ui.kit.figures` (the seeds' spread is a ``band``, the 3-D scene a
``figure3d`` around ``sphere_wire``).
"""
from __future__ import annotations

import math

import numpy as np

from sim import attention as att
from sim import low_temperature as lt
from ui.kit.figures import (COLORS, band, cached_figure, figure, figure3d, line, markers, sphere_wire,
                            tall_legend, typed, vline)
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
def lowtemp_data(model: str, gap: float, log10_beta: float, n: int, seeds: int, T: float,
                 dt: float) -> dict:
    """W2 to Π♯ρ₀ and the distance to the zero-temperature flow over depth, for three β and
    ``seeds`` seeds; the tokens of seed 0 at the largest β for the 3-D scene."""
    B, V = matrices(model, gap)
    S = lt.check_pair(B, V)
    runs = len(BETA_FACTORS) * seeds
    steps, dt_used = plan(T, dt, n, runs)
    record = records(n, runs, steps)
    betas = 10.0 ** log10_beta * np.array(BETA_FACTORS)
    out = {"betas": betas, "steps": steps, "dt": dt_used, "n": n, "seeds": seeds, "model": model,
           "w2": np.empty((betas.size, seeds, record)), "dist": np.empty((betas.size, seeds, record)),
           "k": np.full((betas.size, seeds), -1, dtype=np.int64)}
    zero = _zero_maps(n, B, V, steps, dt_used, seeds, np.rint(np.linspace(0.0, steps, record)).astype(np.int64))
    for b, beta in enumerate(betas):
        for s in range(seeds):
            r, dist = _runs(n, beta, B, V, steps, dt_used, s, record, zero)
            out["w2"][b, s], out["dist"][b, s] = r["w2"], dist
            if model == "axis":
                out["k"][b, s] = lt.pole_imbalance(r["Z"][0], r["Z"][-1], S)
            if b == betas.size - 1 and s == 0:
                mid = int(np.argmin(np.abs(r["t"] - math.log(beta)))) if math.log(beta) < r["t"][-1] else None
                out["scene"] = {"start": r["Z"][0], "end": r["Z"][-1], "target": r["target"],
                                "mid": None if mid is None else r["Z"][mid],
                                "t_mid": None if mid is None else float(r["t"][mid]),
                                "t_end": float(r["t"][-1])}
    out["t"] = r["t"]
    Q1, mu = lt.dominant_basis(S)
    out["Q1"], out["mu"] = Q1, mu
    wv, Qv = np.linalg.eig(V)                      # V's own dominant direction (the conjecture)
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
    d = np.array([[np.sqrt(np.mean(np.sum((att.simulate(starts[s], beta, dt_used, steps, A=B, V=V, flow="SA",
                                                                 record_every=steps)[-1] - zero[s]) ** 2, axis=1)))
                   for s in range(seeds)] for beta in betas])
    mean = d.mean(axis=1)
    rate = np.sqrt(np.log(betas + 1.0) / betas)
    C = float(np.max(mean / rate))                 # the smallest multiple of the rate above every point
    return {"betas": betas, "mean": mean, "lo": d.min(axis=1), "hi": d.max(axis=1), "rate": rate,
            "C": C, "depth": steps * dt_used, "dt": dt_used}


# --------------------------------------------------------------------------- figures
def _beta_label(beta: float) -> str:
    return f"β = {beta:.4g}"


@cached_figure
def w2_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    x = d["t"]
    data = []
    for b, beta in enumerate(d["betas"]):
        col = BETA_COLORS[b]
        w = d["w2"][b]
        data += [*band(x, w.min(axis=0), w.max(axis=0), _beta_label(beta), col, alpha=0.15),
                 line(x, w.mean(axis=0), t("fig.w2_mean", beta=_beta_label(beta)), col, width=2, dash="dash")]
        plateau = np.mean(np.sqrt(4.0 * d["k"][b] / n)) if model == "axis" else 0.0
        if plateau > 0:                              # k = 0 for every seed: no plateau (log axis)
            data.append(markers([x[-1]], [plateau], t("fig.k_marker", beta=_beta_label(beta)), col, symbol="x"))
    return tall_legend(figure(t("fig.x_depth"), t("fig.y_w2"), t("fig.w2_title"), data, log_y=True))


@cached_figure
def dist_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    x = d["t"][1:]                                   # the distance is 0 at τ = 0
    floor = 1e-16
    data, shapes = [], []
    for b, beta in enumerate(d["betas"]):
        col = BETA_COLORS[b]
        D = np.maximum(d["dist"][b][:, 1:], floor)
        data += [*band(x, D.min(axis=0), D.max(axis=0), _beta_label(beta), col, alpha=0.15),
                 line(x, D.mean(axis=0), t("fig.dist_mean", beta=_beta_label(beta)), col, width=2, dash="dash")]
        lb = math.log(beta)
        if 0.0 < lb < d["t"][-1]:
            shapes.append(vline(lb, col, dash="dot"))
    if shapes:                                       # what the dotted lines are, once
        data.append(line([None], [None], t("fig.log_beta_key"), COLORS["ref"], width=1, dash="dot"))
    return tall_legend(figure(t("fig.x_depth"), t("fig.y_dist"), t("fig.dist_title"), data, log_y=True,
                              shapes=shapes))


@cached_figure
def rate_figure(t, model, gap, n, seeds, dt):
    r = rate_data(model, gap, n, seeds, dt)
    # a seed's distance can reach rounding (~1e-16) at large β: the error bars then stretch the axis over
    # many decades, which the house tick rule (it sees the markers only) would label one by one
    ends = np.concatenate([r["lo"], r["hi"], r["C"] * r["rate"]])
    pos = ends[ends > 0]
    span = math.log10(pos.max() / pos.min()) if pos.size else 0.0
    return figure(t("fig.x_beta"), t("fig.y_dist_rate", depth=f"{r['depth']:.3g}"), t("fig.rate_title"), [
        line(r["betas"], r["C"] * r["rate"], t("fig.rate_line"), COLORS["bound"]),
        markers(r["betas"], r["mean"], t("fig.rate_sim"), error=(r["hi"] - r["mean"], r["mean"] - r["lo"]),
                error_y=dict(thickness=1)),
    ], log_x=True, log_y=True, yaxis=dict(dtick=math.ceil(span / 6)) if span > 7 else None)


#: parallels of the wireframe sphere (degrees): with the equator, where the "plane" model gathers
WIRE_LATITUDES = (-60, -30, 0, 30, 60)


def _xyz(P: np.ndarray) -> dict:
    return {c: typed(P[:, i], np.float32) for i, c in enumerate("xyz")}


def _scatter3d(xyz: dict, mode: str, name: str, **kw) -> dict:
    return {"type": "scatter3d", **xyz, "mode": mode, "name": name, **kw}


def _eigenspace(Q1: np.ndarray) -> np.ndarray:
    """Points drawing the dominant eigenspace: a diameter (1-D) or a great circle (2-D)."""
    if Q1.shape[1] == 1:
        return np.outer([-1.3, 1.3], Q1[:, 0])
    th = np.linspace(0.0, 2 * np.pi, 121)
    return np.outer(np.cos(th), Q1[:, 0]) + np.outer(np.sin(th), Q1[:, 1])


@cached_figure
def scene_figure(t, model, gap, log10_beta, n, seeds, T, dt):
    d = lowtemp_data(model, gap, log10_beta, n, seeds, T, dt)
    sc = d["scene"]
    marker = dict(size=4, line=dict(width=0))
    traces = [
        _scatter3d(sphere_wire(WIRE_LATITUDES, meridians=12, pole_gap=0.0, step=5.0), "lines", "sphere",
                   hoverinfo="skip", showlegend=False, line=dict(color="#D9E4EE", width=1.5)),
        _scatter3d(_xyz(_eigenspace(d["Q1"])), "lines", t("fig3d.eigenspace"),
                   line=dict(color=COLORS["bound"], width=6), hoverinfo="skip"),
    ]
    if model == "drift":
        traces.append(_scatter3d(_xyz(np.outer([-1.3, 1.3], d["v_axis"])), "lines", t("fig3d.v_axis"),
                                 hoverinfo="skip", line=dict(color=COLORS["usa"], width=5, dash="dash")))
    traces += [
        _scatter3d(_xyz(sc["start"]), "markers", t("fig3d.start"),
                   marker=dict(color=COLORS["ref"], opacity=0.45, **marker)),
        _scatter3d(_xyz(sc["target"]), "markers", t("fig3d.target"),
                   marker=dict(color=COLORS["bound"], symbol="diamond-open", size=6)),
    ]
    if sc["mid"] is not None:
        traces.append(_scatter3d(_xyz(sc["mid"]), "markers", t("fig3d.mid", tau=f"{sc['t_mid']:.3g}"),
                                 marker=dict(color=COLORS["other"], **marker)))
    traces.append(_scatter3d(_xyz(sc["end"]), "markers", t("fig3d.end", tau=f"{sc['t_end']:.3g}"),
                             marker=dict(color=COLORS["sa"], **{**marker, "size": 7})))
    ax = dict(range=[-1.35, 1.35], showbackground=False, gridcolor="#E5E5E5", zeroline=False,
              showticklabels=False)
    # legend below the scene: its 4-6 entries wrap on a narrow column and would run into the title
    return figure3d(
        traces, height=600, margin=dict(l=0, r=0, t=40, b=10),
        title=dict(text=t("fig3d.title", beta=_beta_label(d["betas"][-1])), x=0.0, xanchor="left",
                   font=dict(size=15)),
        legend=dict(orientation="h", yanchor="top", y=0.16, x=0.0),
        scene=dict(aspectmode="cube", domain=dict(x=[0.0, 1.0], y=[0.18, 1.0]), xaxis=dict(title=dict(text="z₁"), **ax),
                   yaxis=dict(title=dict(text="z₂"), **ax), zaxis=dict(title=dict(text="z₃"), **ax),
                   camera=dict(eye=dict(x=1.35, y=1.15, z=0.7))))


def csv_columns(d: dict, r: dict) -> dict:
    """The plotted data, one column per curve (ragged columns are padded by the CSV writer)."""
    cols = {"tau": d["t"]}
    for b, beta in enumerate(d["betas"]):
        tag = f"beta={beta:.6g}"
        w, D = d["w2"][b], d["dist"][b]
        cols |= {f"W2_mean[{tag}]": w.mean(0), f"W2_min[{tag}]": w.min(0), f"W2_max[{tag}]": w.max(0),
                 f"dist_zero_T_mean[{tag}]": D.mean(0), f"dist_zero_T_min[{tag}]": D.min(0),
                 f"dist_zero_T_max[{tag}]": D.max(0)}
        if d["model"] == "axis":
            cols[f"k_per_seed[{tag}]"] = d["k"][b]
    cols |= {"beta_sweep": r["betas"], f"dist_at_tau={r['depth']:.3g}_mean": r["mean"],
             "dist_min": r["lo"], "dist_max": r["hi"], "C*sqrt(log(beta+1)/beta)": r["C"] * r["rate"]}
    return cols
