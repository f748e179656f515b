"""Inside a block: the figure builders of pages/block/page.py (their data: pages/block/views.py)."""

from __future__ import annotations

import numpy as np

from ui.kit.figures import COLORS, cached_figure, figure, hline, line, log_ticks, markers, tall_legend, vline
from pages.block.views import COLS3, PERM_FLOOR, SYMS3, norm_data, perm_data, rope_data, sink_data, split_data


# --------------------------------------------------------------------------- RoPE
@cached_figure
def rope_curve_figure(t, k, n_from, n_to):
    d = rope_data(k, n_from, n_to)
    data = []
    for (kk, (hx, hy, lx, ly)), col in zip(d["curves"].items(), COLS3):
        data += [
            line(hx, hy, t("fig.rope_k", k=kk), col, width=1.6, legendgroup=str(kk)),
            line(lx, ly, t("fig.rope_k_low", k=kk), col, width=0.8, legendgroup=str(kk), showlegend=False),
        ]
    fig = figure(
        t("fig.x_distance"),
        t("fig.y_sim"),
        t("fig.rope_title"),
        data,
        log_x=True,
        shapes=[vline(n_from, width=1.2, dash="dash")],
        yaxis={"range": [-1.05, 1.05]},
    )
    # the groups only link each band's two lines: laid out as groups they took a row each and hit the title
    fig.update_layout(legend_traceorder="normal")
    return tall_legend(fig)


@cached_figure
def rope_peak_figure(t, k, n_from, n_to):
    d = rope_data(k, n_from, n_to)
    data = [markers(d["ks"], d["heights"], t("fig.peak_measured"))]
    if d["slope"] is not None:
        data += [
            line(d["fit_ks"], d["fit_line"], t("fig.peak_fit", s=f"{d['slope']:.2f}"), width=1.5),
            line(d["fit_ks"], d["half_line"], t("fig.peak_half"), COLORS["ref"], width=1.5, dash="dot"),
        ]
    return tall_legend(
        figure(
            t("fig.x_k"),
            t("fig.y_peak", lo=n_from, hi=n_to),
            t("fig.peak_title"),
            data,
            log_x=True,
            log_y=True,
            xaxis=log_ticks(d["ks"]),
            yaxis=log_ticks([0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]),
        )
    )


# --------------------------------------------------------------------------- RMSNorm
@cached_figure
def norm_rho_figure(t, d, log_eps):
    n = norm_data(d, log_eps)
    data = []
    for i, ((eps, g), col, sym) in enumerate(zip(n["gain"].items(), COLS3, SYMS3)):
        data += [
            line(n["rho"], g, t("fig.gain_eps", eps=f"{eps:.0e}"), col),
            markers(n["rho_marks"], n["svd"][eps], t("fig.gain_svd", eps=f"{eps:.0e}"), col, sym, showlegend=i == 0),
        ]
    return tall_legend(figure(t("fig.x_norm"), t("fig.y_gain"), t("fig.norm_title", d=d), data, log_x=True, log_y=True))


@cached_figure
def norm_eps_figure(t, d, log_eps):
    n = norm_data(d, log_eps)
    return tall_legend(
        figure(
            t("fig.x_eps"),
            t("fig.y_gain0"),
            t("fig.eps_title"),
            [
                line(n["eps"], n["gain0"], t("fig.gain0_exact")),
                markers(n["eps_marks"], n["svd0"], t("fig.gain0_svd", s=f"{n['slope0']:.6f}")),
            ],
            log_x=True,
            log_y=True,
            shapes=[vline(10.0**log_eps, width=1.2, dash="dash")],
        )
    )


# --------------------------------------------------------------------------- splitting
def _split_figure(t, d, seed, keys: tuple[str, str, str, str], exact: str, measured: str, log_y: bool = False):
    """A splitting panel against alpha (:func:`views.split_data`): the entry ``exact`` as the line (a
    number: a constant line), the entry ``measured`` as markers; ``keys``: the y title, the title
    and the two legend entries."""
    s = split_data(d, seed)
    x, (y, title, exact_name, measured_name) = s["alphas"], keys
    data = [
        line(x, np.broadcast_to(s[exact], x.shape).copy(), t(exact_name)),
        markers(x, s[measured], t(measured_name)),
    ]
    return tall_legend(figure(t("fig.x_alpha"), t(y), t(title), data, log_x=True, log_y=log_y))


@cached_figure
def split_defect_figure(t, d, seed):
    keys = ("fig.y_defect", "fig.defect_title", "fig.commutator", "fig.defect")
    return _split_figure(t, d, seed, keys, "limit", "defect")


@cached_figure
def split_trotter_figure(t, d, seed):
    keys = ("fig.y_trotter", "fig.trotter_title", "fig.half_commutator", "fig.trotter")
    return _split_figure(t, d, seed, keys, "half", "trotter", log_y=True)


# --------------------------------------------------------------------------- permutation
@cached_figure
def perm_figure(t, n, beta, pos, seed):
    p = perm_data(n, beta, pos, seed)
    data = [
        markers(p["slot"], np.maximum(g, PERM_FLOOR), t(f"fig.perm_{case}"), col, sym)
        for (case, g), col, sym in zip(p["gaps"].items(), COLS3, SYMS3)
    ]
    return tall_legend(
        figure(
            t("fig.x_slot"),
            t("fig.y_gap"),
            t("fig.perm_title"),
            data,
            log_y=True,
            shapes=[hline(PERM_FLOOR, width=1.2, dash="dot")],
        )
    )


# --------------------------------------------------------------------------- sink
@cached_figure
def sink_figure(t, delta, share):
    s = sink_data(delta, share)
    lines, marks, shapes = [], [], [hline(share, width=1.2, dash="dot")]
    for i, ((g, m), col, sym) in enumerate(zip(s["mass"].items(), COLS3, SYMS3)):
        lines.append(line(s["N"], m, t("fig.mass_exact", delta=f"{g:g}"), col))
        marks.append(
            markers(s["marker_N"], s["layer"][g], t("fig.mass_layer", delta=f"{g:g}"), col, sym, showlegend=i == 0)
        )
        shapes.append(vline(s["nmax"][g], col, width=1.2, dash="dash"))
    data = lines + marks  # the legend: the three gaps, then the one entry for every marker set
    return tall_legend(
        figure(
            t("fig.x_tokens"),
            t("fig.y_mass"),
            t("fig.sink_title", c=f"{share:g}"),
            data,
            log_x=True,
            log_y=True,
            shapes=shapes,
        )
    )
