"""Page: Coordinates, metrics and limits — what a change of description keeps.

What it computes: docs/constructions.md, section “Coordinates, metrics and limits: what a change of language keeps”.
"""

from __future__ import annotations

import math

import streamlit as st

from sim import coordinates as co
from ui.kit.figures import show, show_pair
from ui.kit.numbers import fmt
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.coordinates import views as vc
from pages.coordinates.predict import STEPS, steps_for

SCHEMA = PageSchema.from_file("coordinates", steps=STEPS, options={"pair": tuple(vc.PAIRS)})


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    ctx.steps = steps_for(v)  # at a start that meets the saddle: a question that has an answer there
    ctx.intro()

    # ---- part 1: one function, two metrics
    ctx.section("metric")
    mkey = (v["a0"], v["b0"], v["y"], v["horizon"], v["dt"])
    with ctx.guard():
        d = vc.metric_data(*mkey)
    gaps = [g for g in d["gap"].values() if g is not None]
    end_pb = d["theta"]["pullback"][-1]
    ctx.metrics(
        [
            (t("metrics.theta_euclidean"), f"{d['theta']['euclidean'][-1]:.4g}"),
            (t("metrics.theta_pullback"), "—" if math.isnan(end_pb) else f"{end_pb:.4g}"),
            (t("metrics.c"), f"{d['c']:.4g}"),
            (t("metrics.step_gap"), fmt(max(gaps), 3) if gaps else "—"),
        ],
        t("metrics.caption", steps=d["steps"], dt=v["dt"], t_end=f"{d['t_end']:g}"),
    )
    if d["saddle"] is not None:
        st.info(t("notes.saddle", t_s=f"{d['saddle']:.3g}"))
    for metric in co.METRICS:
        if d["iter"][metric] is None and not (metric == "pullback" and d["saddle"] is not None):
            st.info(t(f"notes.no_steps_{metric}", dt=v["dt"]))
    show_pair((vc.theta_figure(t, *mkey), "fig_theta"), (vc.ab_figure(t, *mkey), "fig_ab"))
    ctx.section("metric_notice")

    # ---- part 2: a limit that forgets the area
    ctx.section("limit")
    with ctx.guard():
        L = vc.loop_data(v["n"], v["pair"])
    ctx.metrics(
        [
            (t("metrics.area", n=v["n"]), f"{L['area_n']:.6f}"),
            (t("metrics.err_limit", n=v["n"]), f"{L['err_limit'][list(L['ns']).index(v['n'])]:.4g}"),
            (t("metrics.gap_limit_y0"), f"{L['gap_limit_y0']:.4g}"),
            (t("metrics.slope_fit"), "—" if L["slope"] is None else f"{L['slope']:.3f}"),
        ],
        t(f"pairs.{v['pair']}"),
    )
    show_pair((vc.loops_figure(t, v["n"], v["pair"]), "fig_loops"), (vc.area_figure(t, v["n"], v["pair"]), "fig_area"))
    show(vc.endpoint_figure(t, v["n"], v["pair"]), key="fig_endpoint")

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    cols = {
        "t": d["t"],
        "theta_euclidean_exact": d["theta"]["euclidean"],
        "theta_pullback_exact": d["theta"]["pullback"],
        "a_exact": d["ab"][:, 0],
        "b_exact": d["ab"][:, 1],
    }
    for m_ in co.METRICS:
        arr = d["iter"][m_]
        if arr is not None:
            cols.update(
                {
                    f"t_steps_{m_}": arr[:, 0],
                    f"a_steps_{m_}": arr[:, 1],
                    f"b_steps_{m_}": arr[:, 2],
                    f"theta_steps_{m_}": arr[:, 3],
                }
            )
    cols.update(
        {
            "n_area": L["area_ns"],
            "levy_area_numeric": L["areas"],
            "n": L["ns"],
            "err_to_limit": L["err_limit"],
            "err_to_y0": L["err_y0"],
        }
    )
    ctx.csv_download("coordinates.csv", cols)
    ctx.footer()


if __name__ == "__main__":
    render()
