"""Page: Non-normal transient growth — stable eigenvalues, finite-time amplification.

What it computes: docs/constructions.md, section “Non-normal transient growth”.
"""

from __future__ import annotations

import math

import streamlit as st

from ui.kit.figures import figure_beside, show, show_pair
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.nonnormal.views import A_SCALAR, euler_data, flow_data, jacobian_data, kappa_data, pseudo_data
from pages.nonnormal.figures import ellipse_figure, kappa_eps_figure, kappa_s_figure, response_figure
from pages.nonnormal.figures_spectra import euler_flow_figure, euler_scalar_figure, jacobian_figure, pseudo_figure
from pages.nonnormal.predict import STEPS

SCHEMA = PageSchema.from_file("nonnormal", steps=STEPS)
#: the sliders that drive only one collapsed section: drawn inside it, not in the sidebar
OWN = {"pseudo": ("grid",), "jacobians": ("L", "eta", "d", "seed"), "euler": ("delta",)}


def _lazy(ctx, key: str, draw):
    """Section ``key`` collapsed under its title, drawn only while open (opening it is one rerun):
    closed, it costs no computation and no figure, and the page stays short on a phone. Its own
    sliders (``OWN``) are in it, drawn closed too (a slider not drawn would lose its value)."""
    with st.expander(ctx.t(f"{key}.title"), key=f"_nonnormal_{key}_open", on_change="rerun") as box:
        ctx.controls(OWN[key])
        if box.open:
            st.markdown(ctx.t(f"{key}.body"))
            return draw(ctx)
    return None


def _pseudo_section(ctx) -> None:
    """Pseudospectra: the contour plot, the Kreiss lower bound and the supremum of the flow."""
    t, v = ctx.t, ctx.values
    with ctx.guard():
        p = pseudo_data(v["M"], v["eps"], v["grid"])
    figure_beside(
        pseudo_figure(t, v["M"], v["eps"], v["grid"]),
        "fig_pseudo",
        ctx,
        [(t("metrics.kreiss"), f"{p['kreiss']:.4f}"), (t("metrics.sup_eps"), f"{p['sup']:.4f}")],
        t("pseudo.side"),
    )
    st.caption(t("pseudo.caption", n=v["grid"], points=f"{p['points']:,}", ms=f"{p['ms']:.2f}"))


def _jacobian_section(ctx) -> dict:
    """Products of layer Jacobians: ordered, reversed, and the products of norms and radii."""
    t, v = ctx.t, ctx.values
    with ctx.guard():
        j = jacobian_data(v["L"], v["d"], v["eta"], v["seed"])
    show(jacobian_figure(t, v["L"], v["d"], v["eta"], v["seed"]), key="fig_jacobians")
    gap = (j["norm_product"][-1] - j["ordered"][-1]) / math.log(10.0)
    st.caption(
        t(
            "jacobians.caption",
            L=v["L"],
            gap=f"{gap:.1f}",
            ordered=f"{j['ordered'][-1] / math.log(10):.2f}",
            reversed=f"{j['reversed'][-1] / math.log(10):.2f}",
        )
    )
    return j


def _euler_section(ctx) -> dict:
    """Explicit Euler steps: the non-normal flow and the scalar stability regimes."""
    t, v = ctx.t, ctx.values
    M, delta, s_max = v["M"], v["delta"], v["s_max"]
    with ctx.guard():
        e = euler_data(M, delta, s_max)
    show_pair(
        (euler_flow_figure(t, M, delta, s_max), "fig_euler_flow"),
        (euler_scalar_figure(t, M, delta, s_max), "fig_euler_scalar"),
    )
    bound = t("euler.no_bound") if not math.isfinite(e["bound"]) else f"{e['bound']:.2e}"
    ctx.md(
        "euler.result",
        ad=f"{A_SCALAR * delta:g}",
        regime=t(f"euler.regimes.{e['regime']}"),
        factor=f"{e['factor']:.3f}",
        err=f"{e['sc_err']:.2e}",
        bound=bound,
        flow_err=f"{e['flow_err']:.2e}",
    )
    return e


def render() -> None:
    ctx = setup(SCHEMA, placed=tuple(n for names in OWN.values() for n in names))
    t, v = ctx.t, ctx.values
    M = v["M"]
    ctx.intro()
    ctx.section("statement")
    with ctx.guard():
        f = flow_data(M, v["s_max"])
        k = kappa_data(M, v["eps"], v["s_max"])

    ctx.metrics(
        [
            (t("metrics.s_star"), f"{f['s_star']:.4f}"),
            (t("metrics.peak"), f"{f['peak']:.4f}"),
            (t("metrics.e2_at_1"), f"{f['e2_at_1']:.4f}"),
            (t("metrics.m_over_e"), f"{abs(M) / math.e:.4f}"),
            (t("metrics.kappa"), f"{k['kappa']:.4g}"),
        ],
        t("metrics.caption_growth") if abs(M) > 2 else t("metrics.caption_nogrowth"),
    )

    show(response_figure(t, M, v["s_max"]), key="fig_response")

    c1, c2 = st.columns([1, 1])
    with c1:
        show(ellipse_figure(t, M, v["s_max"]), key="fig_ellipse")
    with c2:
        ctx.section("ellipse")
        st.caption(t("ellipse.caption"))

    # ------------------------------------------------------------------ kappa(V)
    ctx.section("kappa")
    show_pair(
        (kappa_s_figure(t, M, v["eps"], v["s_max"]), "fig_kappa_s"),
        (kappa_eps_figure(t, M, v["eps"], v["s_max"]), "fig_kappa_eps"),
    )
    st.caption(t("kappa.caption", kappa=f"{k['kappa']:.4g}", sup=f"{k['sup_eps']:.4g}"))

    # secondary sections: collapsed, drawn only while open
    _lazy(ctx, "pseudo", _pseudo_section)
    j = _lazy(ctx, "jacobians", _jacobian_section)
    e = _lazy(ctx, "euler", _euler_section)

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    cols = {"s": f["s"], "operator_norm": f["norm"], "eigenvalue_only_exp_minus_s": f["eig"]}
    for jj, ang in enumerate(f["angles"]):
        cols[f"response_norm_theta_{math.degrees(ang):.0f}deg"] = f["resp"][jj]
    cols.update({"kappa_bound": k["bound"], "norm_eps": k["norm_eps"]})
    if j is not None:  # the collapsed sections' data while they are open
        cols.update(
            {
                "depth_L": j["depth"],
                "log_ordered": j["ordered"],
                "log_reversed": j["reversed"],
                "log_norm_product": j["norm_product"],
                "log_radius_product": j["radius_product"],
            }
        )
    if e is not None:
        cols.update(
            {
                "euler_s": e["sk"],
                "euler_x1": e["euler"][:, 0],
                "euler_x2": e["euler"][:, 1],
                "scalar_euler_V": e["sc_euler"],
            }
        )
    ctx.csv_download("nonnormal.csv", cols)
    ctx.footer()


if __name__ == "__main__":
    render()
