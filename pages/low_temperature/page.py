"""Page: Low temperature — concentration, then drift.

What it computes: docs/constructions.md, section “Low temperature: concentration, then drift”.
"""

from __future__ import annotations

import math

import streamlit as st

from ui.kit.figures import show_pair
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.low_temperature import views as vw
from pages.low_temperature import figures as fw
from pages.low_temperature.predict import STEPS

SCHEMA = PageSchema.from_file("low_temperature", steps=STEPS, options={"model": vw.MODELS})


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    ctx.intro()
    ctx.section("statement")
    key = (v["model"], v["gap"], v["log10_beta"], v["n"], v["seeds"], v["T"], v["dt"])
    rkey = (v["model"], v["gap"], v["n"], v["seeds"], v["dt"])
    with ctx.guard():
        d = vw.lowtemp_data(*key)
        r = vw.rate_data(*rkey)
    ctx.md(f"model.{v['model']}", info=True)

    betas = d["betas"]
    w_end = d["w2"][:, :, -1].mean(axis=1)
    if v["model"] == "axis":
        more = [
            (t("metrics.k_mean", beta=f"{b:.4g}"), f"{k.mean():.2f}")
            for b, k in ((betas[0], d["k"][0]), (betas[-1], d["k"][-1]))
        ]
    else:
        more = [
            (t("metrics.mu"), ", ".join(f"{x:.3g}" for x in d["mu"])),
            (t("metrics.log_beta", beta=f"{betas[-1]:.4g}"), f"{math.log(betas[-1]):.2f}"),
        ]
    ctx.metrics(
        [
            (t("metrics.w2_min", beta=f"{betas[-1]:.4g}"), f"{d['w2'][-1].mean(0).min():.3f}"),
            (t("metrics.w2_end", beta=f"{betas[-1]:.4g}"), f"{w_end[-1]:.3f}"),
            *more,
        ]
    )
    st.caption(
        t(
            "metrics.caption",
            layers=d["steps"],
            dt=f"{d['dt']:.4g}",
            tau=f"{d['steps'] * d['dt']:.3g}",
            n=v["n"],
            seeds=v["seeds"],
            betas=", ".join(f"{b:.4g}" for b in betas),
        )
    )
    if d["dt"] != v["dt"]:
        st.caption(t("metrics.dt_raised", dt=f"{d['dt']:.4g}"))

    show_pair((fw.scene_figure(t, *key), "fig_scene"), (fw.w2_figure(t, *key), "fig_w2"))
    ctx.section("concentration")
    if v["model"] == "axis":
        st.caption(
            t(
                "fig.k_caption",
                ks=" · ".join(f"β = {b:.4g}: k = {', '.join(str(k) for k in d['k'][i])}" for i, b in enumerate(betas)),
            )
        )

    show_pair((fw.dist_figure(t, *key), "fig_dist"), (fw.rate_figure(t, *rkey), "fig_rate"))
    st.caption(t("fig.rate_caption", C=f"{r['C']:.3g}", depth=f"{r['depth']:.3g}"))
    ctx.section("zero_temperature")
    ctx.section("drift")

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download("low_temperature.csv", vw.csv_columns(d, r))
    ctx.footer()


if __name__ == "__main__":
    render()
