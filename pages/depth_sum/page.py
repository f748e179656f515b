"""Page: Depth-sum variance — how small per-layer pieces add up over depth.

What it computes: docs/constructions.md, section “Depth-sum variance (how things accumulate over depth)”.
"""

from __future__ import annotations

import contextlib
import math

import streamlit as st

from sim import depth_sum as ds
from ui.kit.figures import build, show
from ui.server.jobs import heavy
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.depth_sum.views import at_depth, covariance, over_depth, paths
from pages.depth_sum.views_resnet import fill_sweep, one_step_data, residual
from pages.depth_sum.figures import FIGURES
from pages.depth_sum.predict import STEPS

SCHEMA = PageSchema.from_file("depth_sum", steps=STEPS)


def _show(ctx, *names: str) -> None:
    """The named figures of pages/depth_sum/figures.py (FIGURES), side by side when there are two."""
    cols = st.columns(len(names)) if len(names) > 1 else [contextlib.nullcontext()]
    for col, name in zip(cols, names):
        with col:
            show(build(FIGURES[name], ctx.t, ctx.values), key=f"fig_{name}")


def _metrics(ctx, d):
    """The four headline numbers; returns the slot where the residual Monte Carlo goes later."""
    t, v = ctx.t, ctx.values
    alpha, L, c = v["alpha"], v["L"], v["c"]
    f_step, f_lin = ds.one_step(c, L)
    cells = ctx.metrics(
        [
            (
                t("metrics.var", L=L),
                f"{d['var']:.4g}",
                {"caption": t("metrics.mc_pm", x=f"{d['var_mc']:.4g}", se=f"{d['var_se']:.2g}")},
            ),
            (
                t("metrics.prob", a=f"{v['a']:g}"),
                f"{d['p']:.4f}",
                {"caption": t("metrics.mc_pm", x=f"{d['p_mc']:.4f}", se=f"{d['p_se']:.1g}")},
            ),
            (t("metrics.energy"), f"{ds.residual_energy(alpha, L):.4g}"),
            (
                t("metrics.step"),
                f"{f_step:.4f}",
                {"caption": t("metrics.step_delta", lim=f"{math.exp(-c):.4f}", lin=f"{f_lin:.4f}")},
            ),
        ]
    )
    if cells is None:
        return None
    energy_mc = cells[2].empty()  # the residual-network Monte Carlo runs further down
    st.caption(t("metrics.caption"))
    return energy_mc


def _variants_section(ctx, cv: dict) -> None:
    """Independent, correlated and identical pieces; the covariance identity term by term."""
    t = ctx.t
    ctx.md("variants.intro")
    _show(ctx, "variants", "mean")
    st.markdown(t("variants.identity"))  # full width: the identity overflowed a narrow column
    chk = abs(cv["sum_var"] + cv["sum_cov2"] - cv["var_total"])
    chk = t("variants.chk_exact") if chk < 1e-12 else t("variants.chk_within", d=f"{chk:.1e}")
    c7, c8 = st.columns([3, 2])
    with c7:
        _show(ctx, "cov")
    sums = {}  # each measured sum (sv, sc, vt) beside its exact value (sve, sce, vte)
    for name, key in (("sv", "sum_var"), ("sc", "sum_cov2"), ("vt", "var_total")):
        sums[name], sums[name + "e"] = f"{cv[key]:.4g}", f"{cv[key + '_exact']:.4g}"
    with c8:
        ctx.md("variants.table", L=cv["L"], n=cv["n"], nv=cv["n_var_terms"], nc=cv["n_cov_terms"], chk=chk, **sums)


def _residual_section(ctx, r: dict) -> None:
    """The residual network's energy over depth, and the sweeps over L and N behind a button."""
    t, v = ctx.t, ctx.values
    st.subheader(t("residual.title"))
    st.markdown(t("residual.body"))
    c9, c10 = st.columns([3, 2])
    with c9:
        _show(ctx, "res")
    with c10:
        ctx.md(
            "residual.notes", n=r["n"], ex=f"{r['final_exact']:.4f}", mc=f"{r['final']:.4f}", se=f"{r['final_se']:.2g}"
        )
        run = st.button(t("residual.sweep_button"), key="_ds_sweep_btn", width="stretch")
    key = (v["alpha"], v["L"], v["N"], v["trials"], v["seed"])
    with ctx.guard():  # one shared, queued run for the whole server (ui.server.jobs)
        if heavy(
            ("depth_sum.sweep", *key),
            lambda progress: fill_sweep(*key, progress=progress) or True,
            start=run,
            t=t,
            text=t("residual.sweep_progress"),
        ):
            st.session_state["_ds_sweep"] = key
    if st.session_state.get("_ds_sweep") == key:
        _show(ctx, "sweep_L", "sweep_N")
        st.markdown(t("residual.sweep_body"))
    else:
        st.caption(t("residual.sweep_hint"))


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    alpha, L, sigma, N = v["alpha"], v["L"], v["sigma"], v["N"]
    rho, mu, a, c, trials, seed = v["rho"], v["mu"], v["a"], v["c"], v["trials"], v["seed"]
    ctx.intro()
    ctx.section("statement")

    # Each section computes its data just before it is drawn, so the first figures reach the browser
    # (and are redrawn there) while the server still simulates the ones further down.
    with ctx.guard():
        d = at_depth(alpha, L, sigma, rho, mu, a, trials, seed)
    energy_mc = _metrics(ctx, d)

    with ctx.guard():
        g = over_depth(alpha, sigma, rho, mu, a, trials, seed)
        st.subheader(t("sums.title"))
        _show(ctx, "hist", "var")
        ctx.md("sums.body", slope=f"{g['slope_mc']:.3f}", s=f"{1 - 2 * alpha:.2f}")

        st.subheader(t("regimes.title"))
        _show(ctx, "regime")
        st.markdown(t("regimes.body"))

        p = paths(alpha, L, sigma, rho, mu, seed)
        st.subheader(t("paths.title"))
        _show(ctx, "paths", "rms")
        st.markdown(t("paths.body"))

        # secondary sections: collapsed, computed and drawn only while open (opening is one rerun)
        with st.expander(t("variants.title"), key="_depth_sum_variants_open", on_change="rerun") as box:
            if box.open:
                _variants_section(ctx, covariance(alpha, L, sigma, rho, trials, seed))

        r = residual(alpha, L, N, trials, seed)
        if energy_mc is not None:
            energy_mc.caption(t("metrics.mc_pm", x=f"{r['final']:.4g}", se=f"{r['final_se']:.2g}"))
        _residual_section(ctx, r)

        s = None
        with st.expander(t("step.title"), key="_depth_sum_step_open", on_change="rerun") as box:
            if box.open:
                s = one_step_data(alpha, c)
                f_step, f_lin = ds.one_step(c, L)
                st.markdown(t("step.body"))
                _show(ctx, "step", "lr")
                st.markdown(
                    t(
                        "step.notes",
                        L=L,
                        lr_sgd=f"{c * L ** (2 * alpha - 1):.4g}",
                        lr_sign=f"{c * L ** (alpha - 1):.4g}",
                        dw=f"{-c * L ** (alpha - 1):.4g}",
                        mult=f"{1 - c / L:.4g}",
                        f=f"{f_step:.4f}",
                        lim=f"{math.exp(-c):.4f}",
                        lin=f"{f_lin:.4f}",
                    )
                )

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    step_cols = {} if s is None else {"L_step": s["L"], "f_after_step_exact": s["f"]}
    ctx.csv_download(
        "depth_sum.csv",
        {
            "hist_left_edge": d["edges"][:-1],
            "hist_density_mc": d["dens"],
            "x": d["grid"],
            "normal_density_exact": d["pdf"],
            "L_grid": g["L"],
            "var_mc": g["var_mc"],
            "var_ci_lo": g["var_lo"],
            "var_ci_hi": g["var_hi"],
            "mean_mc": g["mean_mc"],
            "prob_mc": g["p_mc"],
            "prob_se": g["p_se"],
            "trials_at_L": g["n"],
            "L_fine": g["fine"],
            "var_exact": g["var"],
            "mean_exact": g["mean"],
            "prob_exact": g["p"],
            "eps": p["eps"],
            "rms_exact": p["rms"],
            "rms_mc": p["rms_mc"],
            "ell": r["ell"],
            "energy_mc": r["mean"],
            "energy_se": r["se"],
            "energy_exact": (1.0 + float(L) ** (-2 * alpha)) ** r["ell"],
            **step_cols,
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
