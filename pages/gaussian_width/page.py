"""Page: Gaussian width — how wide is a set of directions?.

What it computes: docs/constructions.md, section “Gaussian width”.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.kit.figures import show
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.gaussian_width.views import focus, focus_args, max_M, overview, random_layout, sweep, sweep_args, tail
from pages.gaussian_width.figures import hist_figure, overview_figure, sweep_figure, tail_figure
from pages.gaussian_width.figures_picture import picture, picture_figure
from pages.gaussian_width.predict import STEPS

FAMILIES = ("subspace", "directions", "hypercube", "circle", "adaptive")
SCHEMA = PageSchema.from_file("gaussian_width", steps=STEPS, options={"family": FAMILIES})


def _metrics(ctx, f: dict, D: int, seed: int, samples: int) -> None:
    """Exact width, Monte Carlo mean, their z-score, the bounds and the time it took."""
    t = ctx.t
    exact = f["exact"]  # None: no closed form (random directions in D >= 3)
    shown = ctx.metrics(
        [
            (t("metrics.exact"), t("metrics.mc_only") if exact is None else f"{exact:.4f}"),
            (
                t("metrics.mc"),
                f"{f['mean']:.4f}",
                {"delta": t("metrics.se", se=f"{f['se']:.4f}"), "delta_color": "off", "delta_arrow": "off"},
            ),
            (
                t("metrics.z"),
                "—" if exact is None else f"{(f['mean'] - exact) / f['se']:+.2f}",
                {"help": t("metrics.z_help")},
            ),
            (t("metrics.lower"), f"{f['lo']:.4f}"),
            (t("metrics.upper"), f"{f['hi']:.4f}"),
            (t("metrics.time"), f"{f['ms']:.0f} ms"),
        ],
        t("metrics.caption", n=f["n"], D=D, seed=seed),
    )
    if shown is not None and f["n"] < samples:
        st.caption(t("notes.samples_lowered", n=f["n"], samples=samples))


def _sweep_and_histogram(t, v: dict, k: int, M: int, rho: float, f: dict, s: dict) -> None:
    """The width against the family's variable (left) and the histogram of the supremum (right)."""
    family, D, samples, seed = v["family"], v["D"], v["samples"], v["seed"]
    c1, c2 = st.columns(2)
    with c1:
        show(sweep_figure(t, family, D, k, M, rho, samples, seed), key="fig_sweep")
        n_max, n_min = int(s["n"].max()), int(s["n"].min())
        if n_max == n_min:
            st.caption(t("fig.sweep_caption_equal", n=n_max))
        else:
            st.caption(t("fig.sweep_caption", n_max=n_max, n_min=n_min))
    with c2:
        show(hist_figure(t, *focus_args(family, D, k, M, rho, samples, seed)), key="fig_hist")
        if f["dens"] is None:
            st.caption(t("fig.hist_no_density"))


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    family, D, samples, seed, rho = v["family"], v["D"], v["samples"], v["seed"], v["correlation"]
    k, M = min(v["k"], D), min(v["M"], max_M(D))
    if random_layout(family, D, M):  # M > D: random directions; the correlation does not apply
        rho = 0.0
        st.html("<style>.st-key-correlation { display: none; }</style>")

    ctx.intro()
    ctx.section("statement")

    st.subheader(t(f"focus.{family}.title"))
    st.markdown(t(f"focus.{family}.body"))
    if family == "subspace" and v["k"] > D:
        st.info(t("notes.k_capped", k=v["k"], D=D))
    if family == "directions" and v["M"] > M:
        st.info(t("notes.M_capped", M=v["M"], D=D, m=M))
    if random_layout(family, D, M):
        st.info(t("notes.M_random", M=M, D=D))
    with ctx.guard():
        f = focus(*focus_args(family, D, k, M, rho, samples, seed))
        s = sweep(*sweep_args(family, D, rho, samples, seed, M))
    _metrics(ctx, f, D, seed, samples)
    _sweep_and_histogram(t, v, k, M, rho, f, s)

    c3, c4 = st.columns([1, 1])
    with c3:
        with ctx.guard():
            pic_M = M if random_layout(family, D, M) else min(M, 3)  # the picture lives in D = 3
            pic = picture(family, k, pic_M, rho, seed)
        show(picture_figure(t, family, k, pic_M, rho, seed), key="fig_picture")
    with c4:
        ctx.section("picture")
        st.markdown(t("picture.values", sup=f"{pic['sup']:.3f}", norm=f"{np.linalg.norm(pic['g']):.3f}"))

    ctx.section("adaptive")
    with ctx.guard():
        overview(k, samples, seed)
        show(overview_figure(t, k, samples, seed), key="fig_overview")

    ctx.section("tail")
    with ctx.guard():
        td = tail(D, M, rho, samples, seed)
    ctx.md("tail.numbers", mean=f"{td['mean']:.3f}", bound=f"{td['bound_mean']:.3f}", n=td["n"], M=M, rho=f"{rho:g}")
    show(tail_figure(t, D, M, rho, samples, seed), key="fig_tail")

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download(
        "gaussian_width.csv",
        {
            f"{s['var']}": s["x"],
            "width_exact": s["exact"],
            "lower_bound": s["lo"],
            "upper_bound": s["hi"],
            f"{s['var']}_mc": s["x_mc"],
            "width_mc": s["mc"],
            "width_mc_se": s["se"],
            "mc_samples": s["n"],
            "sup_bin_left": f["edges"][:-1],
            "sup_bin_right": f["edges"][1:],
            "sup_density_mc": f["hist"],
            "r": td["r"],
            "tail_exact": td["exact"],
            "tail_union_bound": td["bound"],
            "r_mc": td["r_mc"],
            "tail_mc": td["emp"],
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
