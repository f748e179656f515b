"""Page: Hemisphere clustering.

What it computes: docs/constructions.md, section “Hemisphere clustering”.
"""

from __future__ import annotations

import streamlit as st

from sim import hemisphere as hs
from ui.kit.figures import freeze, show
from ui.kit.numbers import fmt
from ui.server.jobs import calls, heavy
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.hemisphere.views import PHASE_SIZES, contrast_args, contrast_data, hemi_args, hemi_data, phase_job
from pages.hemisphere.figures import contrast_sphere_figure, hemi_sphere_figure
from pages.hemisphere.figures_depth import clusters_figure, diam_figure, phase_figures, rmin_figure
from pages.hemisphere.predict import STEPS

SCHEMA = PageSchema.from_file("hemisphere", steps=STEPS, options={"A": hs.MATRIX_KINDS})
#: requested layers x n^2 x d of both runs above which a cold load is a queued, shared job (ui.server.jobs)
LOAD_WORK = 3e8


# --------------------------------------------------------------------------- phase diagram
def _request_phase(size: str) -> None:
    st.session_state["_hemi_phase_req"] = size


def _phase_panel(ctx, size: str) -> None:
    t = ctx.t
    st.subheader(t("phase.title"))
    st.markdown(t("phase.body"))
    cfg = PHASE_SIZES[size]
    key = "phase.button_paper" if size == "paper" else "phase.button"
    label = t(key, size=t(f"params.phase_size.options.{size}"), B=cfg["B"], nb=cfg["n_betas"])
    # the request is kept in session state by the callback, so it survives an extra rerun
    st.button(label, key="_hemi_phase_btn", on_click=_request_phase, args=(size,))
    if cfg.get("precision") == "float32":
        st.caption(t("phase.paper_note"))
    with ctx.guard():  # one shared, queued run per size for the whole server (ui.server.jobs)
        res = heavy(
            ("hemisphere.phase", size, cfg["B"], cfg["n_betas"], cfg.get("precision")),
            phase_job(size),
            start=st.session_state.pop("_hemi_phase_req", None) == size,
            t=t,
            text=t("phase.progress"),
        )
    if res is None:
        st.caption(t("phase.hint"))
        return
    c1, c2 = st.columns(2)
    figs = st.session_state.setdefault("_hemi_phase_figs", {})
    fkey = (size, t.lang, t.version, id(res))
    if fkey not in figs:
        figs.clear()
        figs[fkey] = tuple(freeze(f) for f in phase_figures(res, t))
    f1, f2 = figs[fkey]
    with c1:
        show(f1, key="fig_phase_one")
    with c2:
        show(f2, key="fig_phase_median")
    st.caption(t("phase.done", B=cfg["B"], nb=cfg["n_betas"], s=f"{res.seconds:.2f}"))


# --------------------------------------------------------------------------- page
def _sphere_beside(fig, key: str, note: str | None):
    """The sphere in 3/5 of the width (with its projection note); returns the column beside it."""
    main, aside = st.columns([3, 2])
    with main:
        show(fig, key=key)
        if note:
            st.caption(note)
    return aside


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    n, d = v["n"], v["d"]
    projected = d > 3
    ctx.intro()
    ctx.section("statement")
    hp, cp = hemi_args(v), contrast_args(v)
    with ctx.guard():  # a large cold load runs once for everyone, one per core at most (ui.server.jobs)
        heavy(
            ("hemisphere.load", hp, cp),
            calls((hemi_data, hp), (contrast_data, cp)),
            t=t,
            lane="load",
            start=n * n * d * (v["horizon"] + v["contrast_horizon"]) / v["dt"] > LOAD_WORK,
        )
        h = hemi_data(*hp)

    # one number style on the page (ui.kit.numbers.fmt, %g): the end diameter is 1.2e-15 or 0.3142
    ctx.metrics(
        [
            (t("metrics.rmin0"), fmt(h["rmin"][0], 4)),
            (t("metrics.rmin_end"), fmt(h["rmin"][-1], 4)),
            (t("metrics.diam0"), fmt(h["diam"][0], 4)),
            (t("metrics.diam_end"), fmt(h["diam"][-1], 3)),
        ],
        t("metrics.caption", layers=h["steps"], dt=f"{h['dt']:.4g}", tau=f"{h['tau'][-1]:.4g}"),
    )
    if h["dt"] != v["dt"]:
        st.info(t("notes.dt_adjusted", dt=f"{h['dt']:.4g}", layers=h["steps"]))
    if v["cap"] >= 90:
        st.info(t("notes.outside", cap=v["cap"], margin=f"{h['margin']:.3f}" if h["margin"] > 0 else t("notes.none")))

    with _sphere_beside(hemi_sphere_figure(t, *hp), "fig_sphere", t("notes.projection", d=d) if projected else None):
        show(rmin_figure(t, *hp), key="fig_rmin")
        show(diam_figure(t, *hp), key="fig_diam")
    ctx.section("why")

    st.subheader(t("contrast.title"))
    st.markdown(t("contrast.body"))
    with ctx.guard():
        c = contrast_data(*cp)
    with _sphere_beside(
        contrast_sphere_figure(t, *cp), "fig_sphere_contrast", t("notes.projection", d=d) if projected else None
    ):
        show(clusters_figure(t, *cp), key="fig_clusters")
        ctx.md(
            "contrast.numbers",
            k=int(c["clusters"][-1]),
            tau=f"{c['tau'][-1]:.4g}",
            beta=v["contrast_beta"],
            layers=c["steps"],
            dt=f"{c['dt']:.4g}",
        )
        if c["dt"] != v["dt"]:
            st.info(t("notes.dt_adjusted", dt=f"{c['dt']:.4g}", layers=c["steps"]))

    _phase_panel(ctx, v["phase_size"])

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download(
        "hemisphere.csv",
        {
            "tau": h["tau"],
            "min_i_r_i": h["rmin"],
            "tau_diameter": h["diam_tau"],
            "diameter_rad": h["diam"],
            "tau_contrast": c["tau"],
            "clusters_contrast": c["clusters"],
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
