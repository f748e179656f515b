"""Page: Rotation without equilibrium — SGD's stationary current and the FFN's curl.

What it computes: docs/constructions.md, section “Rotation without equilibrium: SGD and the FFN”.
"""

from __future__ import annotations

import streamlit as st

from ui.kit.figures import show, show_pair
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.rotation import views as vr
from pages.rotation import figures as fr
from pages.rotation.predict import STEPS

SCHEMA = PageSchema.from_file("rotation", steps=STEPS)


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    ctx.intro()

    # ---- SGD near a minimum: the Ornstein–Uhlenbeck model
    ctx.section("sgd")
    okey = (v["angle"], v["kappa"], v["noise_ratio"], v["dt"], v["T"], v["seed"])
    with ctx.guard():
        d = vr.ou_data(*okey)
    rate, se = d["mc"]
    ctx.metrics(
        [
            (t("metrics.rate_exact"), f"{d['rate']:.4f}"),
            (t("metrics.rate_scheme"), f"{d['rate_dt']:.4f}"),
            (t("metrics.rate_mc"), f"{rate:.4f} ± {se:.4f}"),
            (t("metrics.rate_mc0"), f"{d['mc0'][0]:.4f} ± {d['mc0'][1]:.4f}"),
        ],
        t("metrics.caption", steps=d["steps"], dt=v["dt"], T=f"{d['T_end']:g}"),
        per_row=2,
    )  # two rows: "rate ± error" does not fit a quarter width
    show_pair((fr.cloud_figure(t, *okey), "fig_cloud"), (fr.area_figure(t, *okey), "fig_area"))
    with ctx.guard():
        s = vr.sweep_data(v["kappa"], v["noise_ratio"], v["seed"])
    show(fr.sweep_figure(t, v["kappa"], v["noise_ratio"], v["seed"]), key="fig_sweep")
    ctx.section("sgd_notice")

    # ---- the FFN's curl
    ctx.section("ffn")
    with ctx.guard():
        f = vr.ffn_data(v["blend"], v["seed"])
    c1, c2 = st.columns([3, 2])  # a square picture: the metrics beside it, not a wide empty plot
    with c2:
        ctx.metrics(
            [(t("metrics.asym"), f"{f['asym']:.3f}"), (t("metrics.max_curl"), f"{f['max_curl']:.4g}")], stacked=True
        )
    with c1:
        show(fr.ffn_figure(t, v["blend"], v["seed"]), key="fig_ffn")

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download(
        "rotation.csv",
        {
            "t": d["t_area"],
            "area_sim": d["area"],
            "area_exact_mean": d["rate"] * d["t_area"],
            "t_balanced": d["t_area0"],
            "area_sim_balanced": d["area0"],
            "cloud_x1": d["cloud"][:, 0],
            "cloud_x2": d["cloud"][:, 1],
            "ellipse_x1": d["ellipse"][:, 0],
            "ellipse_x2": d["ellipse"][:, 1],
            "angle_deg": s["fine"],
            "rate_exact": s["exact"],
            "angle_mc_deg": s["angles"],
            "rate_mc": s["mc"],
            "rate_mc_stderr": s["se"],
            "curl_grid": f["g"],
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
