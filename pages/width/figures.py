"""The width page's figures: the fitted scalings of motion and kernel drift, the loss, the
residual and the eigenvalues over training (their data: views.py)."""

from __future__ import annotations

import math

import numpy as np

from pages.width.views import EIG_FLOOR, SCALE_COLOR, SCALE_SYMBOL, SWEEP_NS, fmt_slope, run_data, sweep_data
from sim import width as W
from ui.kit.figures import (
    COLORS,
    SEQUENCE,
    band,
    cached_figure,
    exact_line,
    figure,
    line,
    log_ticks,
    markers,
    sim_markers,
    tall_legend,
    vline,
)


# --------------------------------------------------------------------------- drawing helpers
def _reference(fig, Ns, anchor_N, anchor_v, power, name, dash):
    """A grey reference line v = anchor_v * (N / anchor_N)^power."""
    Ns = np.asarray(Ns, dtype=float)
    exact_line(fig, Ns, anchor_v * (Ns / anchor_N) ** power, name, color=COLORS["ref"], line=dict(dash=dash, width=1.5))


def _no_motion_note(fig, t, values) -> None:
    """Log axes cannot show zeros: say so when some run did not move at all."""
    if np.any(np.asarray(values) <= 0):
        fig.add_annotation(
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
            text=t("fig.no_motion"),
            showarrow=False,
            bgcolor="rgba(255,255,255,0.85)",
        )


# --------------------------------------------------------------------------- figures
def _scalings_figure(t, d: dict, which: str, y_key: str, title_key: str, T, N):
    """Log-log against width: each scaling's ``which`` ("param" or "kernel") with its fitted slope;
    every width labelled, and a dotted line at the page's own width ``N``."""
    fig = figure(
        t("fig.x_width"),
        t(y_key),
        t(title_key, T=f"{T:g}"),
        log_x=True,
        log_y=True,
        xaxis=log_ticks(sorted({*SWEEP_NS, int(N)})),
        shapes=[vline(N, width=1.2, dash="dot")],
        annotations=[
            dict(
                x=math.log10(N),
                y=1,
                xref="x",
                yref="y domain",
                text=t("fig.your_N", N=N),
                showarrow=False,
                xanchor="left",
                yanchor="top",
                xshift=3,
            )
        ],
    )
    Ns = d["N"]
    for s in W.SCALINGS:
        sim_markers(
            fig,
            Ns,
            d[f"{s}_{which}"],
            t(f"fig.{s}_fit", slope=fmt_slope(d[f"slope_{s}_{which}"])),
            color=SCALE_COLOR[s],
            symbol=SCALE_SYMBOL[s],
        )
    return fig, Ns


@cached_figure
def motion_figure(t, N, start, T, data, seed):
    d = sweep_data(start, T, data, seed)
    fig, Ns = _scalings_figure(t, d, "param", "fig.y_param", "fig.motion_title", T, N)
    _reference(fig, Ns, Ns[0], d["lazy_param"][0], -0.5, t("fig.ref_half"), "dot")
    _reference(fig, Ns, Ns[0], d["mean_field_param"][0], 0.0, t("fig.ref_zero"), "dash")
    _no_motion_note(fig, t, [d[s + "_param"] for s in W.SCALINGS])
    return tall_legend(fig)


@cached_figure
def kernel_figure(t, N, start, T, data, seed):
    d = sweep_data(start, T, data, seed)
    fig, Ns = _scalings_figure(t, d, "kernel", "fig.y_kernel", "fig.kernel_title", T, N)
    lz = d["lazy_kernel"]
    _reference(fig, Ns, Ns[0], lz[0], -0.5, t("fig.ref_half_bound"), "dot")
    _reference(fig, Ns, Ns[0], lz[0], -1.0, t("fig.ref_one"), "dashdot")
    _reference(fig, Ns, Ns[0], d["mean_field_kernel"][0], 0.0, t("fig.ref_zero"), "dash")
    _no_motion_note(fig, t, [d[s + "_kernel"] for s in W.SCALINGS])
    return tall_legend(fig)


@cached_figure
def loss_figure(t, N, start, T, dt, data, seed):
    fig = figure(t("fig.x_time"), t("fig.y_loss"), t("fig.loss_title", N=N), log_y=True)
    for s in W.SCALINGS:
        d = run_data(N, s, start, T, dt, data, seed)
        exact_line(
            fig,
            d["t"],
            d["frozen_loss"],
            t(f"fig.{s}_frozen_loss"),
            color=SCALE_COLOR[s],
            line=dict(width=2 if s == "lazy" else 1.5, dash="solid"),
        )
        sim_markers(fig, d["t"], d["loss"], t(f"fig.{s}_loss"), color=SCALE_COLOR[s], symbol=SCALE_SYMBOL[s])
    return tall_legend(fig, columns=1)  # two columns overlap on a phone


@cached_figure
def residual_figure(t, N, scaling, start, T, dt, data, seed):
    d = run_data(N, scaling, start, T, dt, data, seed)
    # the legend below the plot, set at creation (a validated update_layout afterwards cost ms)
    fig = figure(
        t("fig.x_time"),
        t("fig.y_residual"),
        t("fig.residual_title", scaling=t(f"names.{scaling}"), N=N),
        height=520,
        margin={"t": 50},
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -0.2,
            "xanchor": "left",
            "x": 0.0,
            "bgcolor": "rgba(255,255,255,0.6)",
        },
    )
    for m, x in enumerate(d["xs"]):
        col, group = SEQUENCE[m % len(SEQUENCE)], f"x{m}"
        fr = d["frozen"][:, m]
        fig.add_traces(
            band(d["t"], fr - d["bound"], fr + d["bound"], t("fig.band", x=f"{x:g}"), col, legendgroup=group)
        )
        exact_line(fig, d["t"], fr, t("fig.frozen", x=f"{x:g}"), color=col, legendgroup=group, showlegend=False)
        sim_markers(fig, d["t"], d["residual"][:, m], t("fig.trained", x=f"{x:g}"), color=col, legendgroup=group)
    # what the line styles mean, once (each data point has its own colour)
    fig.add_traces(
        [
            line([None], [None], t("fig.key_frozen"), COLORS["ref"]),
            line([None], [None], t("fig.key_band"), "rgba(127,127,127,0.3)", width=10),
        ]
    )
    return fig


@cached_figure
def eigen_figure(t, N, start, T, dt, data, seed):
    runs = {s: run_data(N, s, start, T, dt, data, seed) for s in W.SCALINGS}
    lam0 = runs["lazy"]["eig0"]
    floor = EIG_FLOOR * max(lam0[0], 1e-300)
    k = np.arange(1, lam0.size + 1)
    # traces, axis and note in one figure(...) call (validated update_xaxes / add_annotation cost ms)
    data = [line(k, np.maximum(lam0, floor), t("fig.eig0"), COLORS["black"])]
    data += [
        markers(k, np.maximum(d["eig_end"], floor), t(f"fig.{s}_eig_end"), SCALE_COLOR[s], SCALE_SYMBOL[s])
        for s, d in runs.items()
    ]
    data.append(
        line(
            [0.7, lam0.size + 0.3],
            [1.0 / T, 1.0 / T],
            t("fig.one_over_T"),
            COLORS["bound"],
            line=dict(dash="dot", width=1.5),
        )
    )
    notes = (
        [
            dict(
                x=lam0.size,
                y=math.log10(floor),
                text=t("fig.zero_note"),
                showarrow=False,
                xanchor="right",
                yanchor="bottom",
                yshift=6,
            )
        ]
        if np.any(lam0 < floor)
        else ()
    )
    fig = figure(
        t("fig.x_index"),
        t("fig.y_eig"),
        t("fig.eig_title", T=f"{T:g}"),
        data,
        log_y=True,
        annotations=notes,
        xaxis={"dtick": 1, "range": [0.6, lam0.size + 0.4]},
    )
    return tall_legend(fig)
