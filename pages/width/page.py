"""Page: Width — lazy training and the frozen kernel.

What it computes: docs/constructions.md, section “Width: lazy training and the frozen kernel”.
"""

from __future__ import annotations

import streamlit as st

from sim import width as W
from ui.kit.figures import show, show_pair
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.width import views as V
from pages.width import figures as F
from pages.width.predict import STEPS

SCHEMA = PageSchema.from_file(
    "width", steps=STEPS, options={"scaling": W.SCALINGS, "start": W.STARTS, "data": tuple(W.DATASETS)}
)


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    N, s, start, T, dt, data, seed = (v[k] for k in ("N", "scaling", "start", "T", "dt", "data", "seed"))
    run_key = (N, start, T, dt, data, seed)
    ctx.intro()
    ctx.section("statement")

    with ctx.guard():
        runs = {sc: V.run_data(N, sc, *run_key[1:]) for sc in W.SCALINGS}
        sweep = V.sweep_data(start, T, data, seed)
    d = runs[s]
    if d["raised"]:
        st.info(t("notes.dt_raised", dt=f"{d['dt_used']:.4g}", steps=d["steps"]))

    # ---- motion against width
    st.subheader(t("width.title"))
    ctx.metrics(
        [
            (t(f"metrics.slope_{key}"), V.fmt_slope(sweep["slope_" + key]))
            for key in ("lazy_param", "lazy_kernel", "mean_field_param", "mean_field_kernel")
        ]
    )
    show_pair(
        (F.motion_figure(t, v["N"], start, T, data, seed), "fig_motion"),
        (F.kernel_figure(t, v["N"], start, T, data, seed), "fig_kernel"),
    )
    ctx.md("width.body")

    # ---- training over time
    st.subheader(t("training.title"))
    ctx.metrics(
        [
            (t("metrics.loss_lazy"), f"{runs['lazy']['loss'][-1]:.3g}"),
            (t("metrics.loss_mean_field"), f"{runs['mean_field']['loss'][-1]:.3g}"),
            (t("metrics.kernel_shift", scaling=t(f"names.{s}")), V.fmt_number(d["kernel_shift"][-1], ".2e")),
            (t("metrics.ratio"), V.fmt_number(d["ratio"], ".2f")),
        ]
    )
    show_pair((F.loss_figure(t, *run_key), "fig_loss"), (F.residual_figure(t, N, s, *run_key[1:]), "fig_residual"))
    st.caption(t("metrics.caption", steps=d["steps"], h=f"{d['h']:.4g}", T=f"{T:g}"))
    st.markdown(t("training.body"))

    # ---- eigenvalues
    st.subheader(t("eigen.title"))
    c5, c6 = st.columns([3, 2])
    with c5:
        show(F.eigen_figure(t, *run_key), key="fig_eigen")
    with c6:
        st.markdown(t("eigen.body"))

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    lz, mf = runs["lazy"], runs["mean_field"]
    cols = {"N_sweep": sweep["N"]}
    for key in ("lazy_param", "lazy_kernel", "mean_field_param", "mean_field_kernel"):
        cols[f"{key}_shift_at_T"] = sweep[key]
    cols.update(
        {
            "t": lz["t"],
            "loss_lazy": lz["loss"],
            "loss_mean_field": mf["loss"],
            "frozen_loss_lazy": lz["frozen_loss"],
            "frozen_loss_mean_field": mf["frozen_loss"],
            f"bound_{s}": d["bound"],
            f"kernel_shift_{s}": d["kernel_shift"],
        }
    )
    for j, x in enumerate(d["xs"]):
        cols[f"residual_{s}_x={x:g}"] = d["residual"][:, j]
        cols[f"frozen_{s}_x={x:g}"] = d["frozen"][:, j]
    cols.update(
        {
            "eig_index": range(1, lz["eig0"].size + 1),
            "eig_K0": lz["eig0"],
            "eig_KT_lazy": lz["eig_end"],
            "eig_KT_mean_field": mf["eig_end"],
        }
    )
    ctx.csv_download("width.csv", cols)
    ctx.footer()


if __name__ == "__main__":
    render()
