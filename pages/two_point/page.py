"""Page: Two points — normalised (SA) vs unnormalised (USA) attention.

What it computes: docs/constructions.md, section “Two points: SA versus USA (normalised vs unnormalised attention)”.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.kit.figures import show, show_pair
from ui.kit.numbers import fmt
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.two_point.views import (
    angle_figure,
    energy_figure,
    error_figure,
    simplex_data,
    simplex_figure,
    time_figure,
    two_point_data,
)
from pages.two_point.predict import STEPS

SCHEMA = PageSchema.from_file("two_point", steps=STEPS)
SIMPLEX = ("n_simplex", "rho0")  # drive only the simplex section: its sliders are in it, not in the sidebar


def render() -> None:
    ctx = setup(SCHEMA, placed=SIMPLEX)
    t, v = ctx.t, ctx.values
    ctx.intro()
    ctx.section("statement")
    with ctx.guard():
        d = two_point_data(v["beta"], v["theta0"], v["horizon"], v["dt"])

    # one number style on the page (ui.kit.numbers.fmt, %g): 0.0574 beside 0.02854, not 5.74e-02
    ctx.metrics(
        [
            (t("metrics.sa_final"), fmt(d["SA"]["exact"][-1], 4)),
            (t("metrics.usa_final"), fmt(d["USA"]["exact"][-1], 4)),
            (t("metrics.sa_gap"), fmt(d["SA"]["gap"], 3)),
            (t("metrics.usa_gap"), fmt(d["USA"]["gap"], 3)),
        ],
        t("metrics.caption", layers=d["steps"], dt=v["dt"], tau=f"{d['tau_end']:g}"),
    )

    key = (v["beta"], v["theta0"], v["horizon"], v["dt"])
    c1, c2 = st.columns(2)
    with c1:
        show(angle_figure(t, *key), key="fig_angle")
    with c2:
        show(time_figure(t, *key), key="fig_time")
        st.caption(t("timechange.residual", gap=f"{fmt(d['retime_gap'], 2)} rad"))
    ctx.section("timechange")

    show_pair((energy_figure(t, *key), "fig_energy"), (error_figure(t, *key), "fig_error"))
    st.markdown(t("energy.body"))
    ctx.section("discrete")
    sl = {f: " → ".join("—" if not np.isfinite(s) else f"{s:.2f}" for s in d["slopes"][f]) for f in ("SA", "USA")}
    st.caption(t("metrics.slopes", sa=sl["SA"], usa=sl["USA"], dte=f"{d['dte']:.3g}"))

    # drawn only while open (opening it is one rerun): closed, it costs no simulation and no figure
    with st.expander(t("simplex.title"), key="_two_point_simplex_open", on_change="rerun") as box:
        ctx.controls(SIMPLEX)  # drawn closed too (cheap): a slider not drawn would lose its value
        if box.open:
            st.markdown(t("simplex.body"))
            with ctx.guard():
                simplex_data(v["beta"], v["n_simplex"], v["rho0"], v["horizon"], v["dt"])
            show(simplex_figure(t, v["beta"], v["n_simplex"], v["rho0"], v["horizon"], v["dt"]), key="fig_simplex")

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download(
        "two_point.csv",
        {
            "tau": d["fine"],
            "theta_SA_exact": d["SA"]["exact"],
            "theta_USA_exact": d["USA"]["exact"],
            "E_SA_exact": d["SA"]["E_exact"],
            "E_USA_exact": d["USA"]["E_exact"],
            "tau_layer_SA": d["SA"]["tau"],
            "theta_SA_layer_map": d["SA"]["sim"],
            "E_SA_layer_map": d["SA"]["E_sim"],
            "tau_layer_USA": d["USA"]["tau"],
            "theta_USA_layer_map": d["USA"]["sim"],
            "E_USA_layer_map": d["USA"]["E_sim"],
            "tau_SA_of_USA": d["retimed"][0],
            "theta_USA_retimed": d["retimed"][1],
            "dt": d["dts"],
            "error_SA": d["err"]["SA"],
            "error_USA": d["err"]["USA"],
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
