"""The rotation page's figures: the cloud with its drift arrows, the swept area, the angle sweep and
the feed-forward field (their data: views.py)."""

from __future__ import annotations

import numpy as np

from ui.kit.figures import COLORS, cached_figure, equal_axes, figure, heatmap, line, markers, tall_legend
from pages.rotation.views import FFN_BOX, GRID, ffn_data, ou_data, sweep_data


# --------------------------------------------------------------------------- figures
def arrows(X: np.ndarray, U: np.ndarray, length: float) -> np.ndarray:
    """Arrows from the points X along U (longest = ``length``), as one NaN-separated polyline.

    Drawing helper (ui.kit.figures has none for vector fields): shaft plus a two-stroke head."""
    n = np.linalg.norm(U, axis=1)
    scale = length / n.max() if n.max() > 0 else 0.0
    V = U * scale
    tip = X + V
    back = -0.3 * V
    side = 0.18 * np.column_stack([-V[:, 1], V[:, 0]])
    nan = np.full_like(X, np.nan)
    seg = np.stack([X, tip, nan, tip + back + side, tip, tip + back - side, nan], axis=1)
    return seg.reshape(-1, 2)


@cached_figure
def cloud_figure(t, angle, kappa, noise_ratio, dt, T, seed):
    d = ou_data(angle, kappa, noise_ratio, dt, T, seed)
    c, b = d["cloud"], d["box"]
    A = arrows(d["grid"], d["J"], 0.9 * 2 * b / (GRID - 1))
    current = t("fig.current") if np.abs(d["J"]).max() > 0 else t("fig.current_zero")
    fig = figure(
        t("fig.x1"),
        t("fig.x2"),
        t("fig.cloud_title"),
        [
            markers(c[:, 0], c[:, 1], t("fig.cloud"), size=3, opacity=0.35),
            line(d["ellipse"][:, 0], d["ellipse"][:, 1], t("fig.ellipse")),
            line(A[:, 0], A[:, 1], current, COLORS["black"], width=1.2),
        ],
        height=480,
        hovermode="closest",
        **equal_axes(b),
    )
    return tall_legend(fig)


@cached_figure
def area_figure(t, angle, kappa, noise_ratio, dt, T, seed):
    d = ou_data(angle, kappa, noise_ratio, dt, T, seed)
    te = np.array([0.0, d["T_end"]])
    fig = figure(
        t("fig.x_time"),
        t("fig.y_area"),
        t("fig.area_title"),
        [
            line(te, d["rate"] * te, t("fig.area_exact")),
            markers(d["t_area"], d["area"], t("fig.area_sim"), COLORS["exact"]),
            line(te, 0.0 * te, t("fig.area0_exact"), COLORS["usa"], dash="dot"),
            markers(d["t_area0"], d["area0"], t("fig.area0_sim"), COLORS["usa"], symbol="square"),
        ],
        height=480,
    )
    return tall_legend(fig)


@cached_figure
def sweep_figure(t, kappa, noise_ratio, seed):
    s = sweep_data(kappa, noise_ratio, seed)
    fig = figure(
        t("fig.x_angle"),
        t("fig.y_rate"),
        t("fig.sweep_title"),
        [
            line(s["fine"], s["exact"], t("fig.rate_exact")),
            markers(s["angles"], s["mc"], t("fig.rate_mc"), error=2 * s["se"], error_y={"thickness": 1.2}),
        ],
    )
    return tall_legend(fig)


@cached_figure
def ffn_figure(t, blend, seed):
    d = ffn_data(blend, seed)
    zmax, s = max(d["max_curl"], 1e-12), d["stream"]
    fig = figure(
        t("fig.x1_ffn"),
        t("fig.x2_ffn"),
        t("fig.ffn_title"),
        [
            heatmap(
                d["g"],
                d["g"],
                d["curl"],
                t("fig.curl"),
                "RdBu_r",
                zmin=-zmax,
                zmax=zmax,
                bar=t("fig.curl"),
                hover=t("fig.curl") + " %{z:.3g}",
                colorbar=dict(title=dict(text=t("fig.curl"), side="top")),
            ),  # above the bar, not on its 0 tick
            line(s[:, 0], s[:, 1], t("fig.stream"), COLORS["black"], width=1.2),
        ],
        height=480,
        hovermode="closest",
        **equal_axes(FFN_BOX),
    )
    return tall_legend(fig)
