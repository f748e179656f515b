"""Non-normal growth: the figure builders of pages/nonnormal/page.py (their data: pages/nonnormal/views.py)."""

from __future__ import annotations

import math

import numpy as np

from ui.kit.figures import (
    COLORS,
    SEQUENCE,
    Frozen,
    animation,
    cached_figure,
    exact_line,
    figure,
    line,
    point,
)
from pages.nonnormal.views import (
    CIRCLE,
    FRAMES,
    N_DIRS,
    flow_data,
    kappa_data,
)


# --------------------------------------------------------------------------- figures
#: the house legend (ui.kit.figures.figure) moved below the plot, for builders that
#: pass their whole layout to figure(...) in one call (no validated update_layout afterwards)
_HOUSE_LEGEND = {"orientation": "h", "xanchor": "left", "x": 0.0, "bgcolor": "rgba(255,255,255,0.6)"}
#: figure(...) entries that put the legend below the plot (unvalidated, at creation)
_LOW = {"legend": {**_HOUSE_LEGEND, "y": -0.3, "yanchor": "top"}, "margin": {"t": 50}}


def _ellipse_figure(d: dict, t, lang_s: str) -> Frozen:
    # One figure(...) call with the whole layout and plain trace dicts: update_layout validated the
    # 61 slider steps of the animation on every rebuild, and go.Scatter each trace.
    lim = 1.08 * max(d["peak"], float(np.abs(d["ellipse"]).max()), 1.0)
    th = np.linspace(0.0, 2 * np.pi, CIRCLE)
    colors = [SEQUENCE[k % len(SEQUENCE)] for k in range(N_DIRS)] * 2

    names = (t("fig.image_ellipse"), t("fig.image_points"), t("fig.major_axis"))
    first = (
        dict(mode="lines", line=dict(color=COLORS["exact"], width=2.5)),
        dict(mode="markers", marker=dict(color=colors, size=9, symbol="circle")),
        dict(mode="lines", line=dict(color=COLORS["bound"], width=3)),
    )

    def moving(k):
        """Plain dicts (no per-frame validation): validating 61 frames would be paid on every rerun."""
        # float32 on the wire: half the bytes of the 61 frames, ~1e-7 relative (far below a pixel)
        e, p, a = d["ellipse"][k].astype(np.float32), d["pts"][k].astype(np.float32), d["axis"][k]
        return [
            dict(type="scatter", x=e[:, 0], y=e[:, 1]),
            dict(type="scatter", x=p[:, 0], y=p[:, 1]),
            dict(type="scatter", x=[0.0, a[0]], y=[0.0, a[1]]),
        ]

    start = int(np.argmin(np.abs(d["sf"] - min(1.0, d["sf"][-1]))))
    data = [line(np.cos(th), np.sin(th), t("fig.unit_circle"), COLORS["ref"], 1.5, "dot", hoverinfo="skip")]
    data += [dict(tr, name=name, **style) for tr, style, name in zip(moving(start), first, names)]
    frames = [dict(data=moving(k), traces=[1, 2, 3], name=f"{d['sf'][k]:.3f}") for k in range(FRAMES)]
    fig = figure(
        t("fig.x1"),
        t("fig.x2"),
        t("fig.ellipse_title"),
        data,
        height=730,
        hovermode="closest",
        xaxis={"range": [-lim, lim]},
        yaxis={"range": [-lim, lim], "scaleanchor": "x", "scaleratio": 1},
        # the read-out sits at the right end of the slider, clear of the play/pause buttons
        **animation(
            [f"{s:.3f}" for s in d["sf"]],
            [f"{s:.2f}" for s in d["sf"]],
            t("fig.play"),
            t("fig.pause"),
            lang_s,
            duration=70,
            redraw=False,
            y=-0.2,
            slider_x=0.42,
            active=start,
            currentvalue=dict(xanchor="right"),
            ticklen=0,
            minorticklen=0,
            font=dict(size=1, color="rgba(0,0,0,0)"),
        ),
        legend={**_HOUSE_LEGEND, "orientation": "v", "y": 1.02, "yanchor": "bottom"},
        margin=dict(l=60, r=20, t=140, b=120),
    )
    return Frozen(fig, frames=frames)


@cached_figure(max_entries=16)
def ellipse_figure(t, M: float, s_max: float):
    """The animated ellipse (61 frames): built once per (M, s_max, language) and shared."""
    return _ellipse_figure(flow_data(M, s_max), t, t("fig.s_prefix"))


@cached_figure
def response_figure(t, M: float, s_max: float):
    f = flow_data(M, s_max)
    data = []
    for j, ang in enumerate(f["angles"]):
        is_e2 = abs(ang - np.pi / 2) < 1e-9
        data.append(
            line(
                f["s"],
                f["resp"][j],
                t("fig.resp_e2") if is_e2 else t("fig.resp_dir", deg=f"{math.degrees(ang):.0f}"),
                color=SEQUENCE[j % len(SEQUENCE)],
                width=3.5 if is_e2 else 1.5,
            )
        )
    # Both labels sit in a band above every curve, at the right end, with a thin leader to their
    # point: next to the points they covered the curves around the peak.
    top = max(float(np.max(f["norm"])), f["peak"], 1.0)
    s_txt = 0.98 * s_max
    note = dict(
        showarrow=True,
        arrowhead=0,
        arrowwidth=1,
        arrowcolor="#666",
        axref="x",
        ayref="y",
        bgcolor="rgba(255,255,255,0.85)",
        xanchor="right",
        yanchor="middle",
    )
    notes = [
        dict(
            x=f["s_star"],
            y=f["peak"],
            ax=s_txt,
            ay=1.26 * top,
            text=t("fig.peak_text", s=f"{f['s_star']:.3f}", v=f"{f['peak']:.3f}"),
            **note,
        )
    ]
    if s_max >= 1.0:
        notes.append(
            dict(
                x=1.0,
                y=f["e2_at_1"],
                ax=s_txt,
                ay=1.12 * top,
                text=t("fig.at_s1_text", v=f"{f['e2_at_1']:.3f}"),
                **note,
            )
        )
    # eleven entries: the house legend above the plot (rows under the title, scrolling on a phone);
    # a column to the right of the plot left it ~50 px wide at 390 px. The whole layout in one
    # figure(...) call: no validated update_* afterwards.
    fig = figure(
        t("fig.x_s"),
        t("fig.y_norm"),
        t("fig.response_title"),
        data,
        height=580,
        yaxis={"range": [0.0, 1.34 * top]},
        annotations=notes,
    )
    exact_line(fig, f["s"], f["norm"], t("fig.envelope"), color=COLORS["black"])
    exact_line(fig, f["s"], f["eig"], t("fig.eig_only"), color=COLORS["ref"], line=dict(dash="dot"))
    fig.add_trace(point([f["s_star"]], [f["peak"]], t("fig.peak")))
    if s_max >= 1.0:
        fig.add_trace(point([1.0], [f["e2_at_1"]], t("fig.at_s1"), COLORS["accent"], "diamond", 11))
        fig.add_trace(
            point(
                [1.0],
                [abs(M) / math.e],
                t("fig.m_over_e"),
                COLORS["accent"],
                "line-ew-open",
                marker=dict(line=dict(width=3, color=COLORS["accent"])),
            )
        )
    return fig


@cached_figure
def kappa_s_figure(t, M: float, eps: float, s_max: float):
    k = kappa_data(M, eps, s_max)
    fig = figure(t("fig.x_s_short"), t("fig.y_norm"), t("fig.kappa_title", eps=f"{eps:g}"), log_y=True, **_LOW)
    exact_line(fig, k["s"], k["norm_eps"], t("fig.norm_eps"), color=COLORS["exact"])
    exact_line(fig, k["s"], k["bound"], t("fig.kappa_bound"), color=COLORS["bound"])
    fig.add_trace(line(k["s"], k["norm_jordan"], t("fig.norm_jordan"), color=COLORS["other"], width=1.5, dash="dash"))
    exact_line(fig, k["s"], k["eig"], t("fig.eig_only"), color=COLORS["ref"], line=dict(dash="dot"))
    return fig


@cached_figure
def kappa_eps_figure(t, M: float, eps: float, s_max: float):
    k = kappa_data(M, eps, s_max)
    fig = figure(t("fig.x_eps"), t("fig.y_kappa"), t("fig.kappa_eps_title"), log_x=True, log_y=True, **_LOW)
    exact_line(fig, k["eps_sweep"], k["kappa_sweep"], t("fig.kappa_curve"), color=COLORS["bound"])
    exact_line(fig, k["eps_sweep"], k["sup_sweep"], t("fig.sup_curve"), color=COLORS["exact"])
    fig.add_trace(point([eps, eps], [k["kappa"], k["sup_eps"]], t("fig.your_eps"), symbol="x", size=10))
    return fig
