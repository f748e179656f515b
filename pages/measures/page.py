"""Page: From tokens to a measure — finite n, many heads.

What it computes: docs/constructions.md, section “From tokens to a measure: finite n, many heads”.
"""

from __future__ import annotations

import streamlit as st

from ui.kit.figures import figure_beside, show_pair
from ui.kit.numbers import fmt
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.measures.views import (
    HEAD_N,
    HEAD_TRIALS,
    N_REF,
    SAMPLE_TRIALS,
    heads_data,
    heads_figure,
    sampling_data,
    sampling_figure,
    stability_data,
    tokens_figure,
    w1_figure,
)
from pages.measures.predict import STEPS

SCHEMA = PageSchema.from_file("measures", steps=STEPS)


def render() -> None:
    ctx = setup(SCHEMA)
    t, v = ctx.t, ctx.values
    ctx.intro()
    ctx.section("statement")

    # 1. n tokens against a large reference system, over depth
    ctx.section("stability")
    run = (v["n"], v["beta"], v["depth"], v["dt"], v["seed"])
    with ctx.guard():
        s = stability_data(*run)
    # one number style on the page (ui.kit.numbers.fmt, %g)
    ctx.metrics(
        [
            (t("metrics.w1_start"), fmt(s["w1"][0], 4)),
            (t("metrics.w1_end"), fmt(s["w1"][-1], 4)),
            (t("metrics.C"), f"{s['C']:.4g}"),
            (t("metrics.tau_star"), f"{s['tau_star']:.3g}"),
        ],
        t("metrics.caption", layers=int(s["layers"][-1]), dt=v["dt"], tau=f"{s['t'][-1]:g}", n_ref=N_REF),
    )
    show_pair((tokens_figure(t, *run), "fig_tokens"), (w1_figure(t, *run), "fig_w1"))
    st.markdown(t("stability.after"))

    # 2. sampling error against n
    ctx.section("sampling")
    with ctx.guard():
        e = sampling_data(v["seed"])
    figure_beside(sampling_figure(t, v["n"], v["seed"]), "fig_sampling", side=t("sampling.side", trials=SAMPLE_TRIALS))

    # 3. many heads
    ctx.section("heads")
    with ctx.guard():
        h = heads_data(v["H"], v["beta"], v["seed"])
    figure_beside(
        heads_figure(t, v["H"], v["beta"], v["seed"]),
        "fig_heads",
        ctx,
        [(t("metrics.head_err", H=v["H"]), fmt(h["mean"][-1], 3))],
        t("heads.side", n=HEAD_N, trials=HEAD_TRIALS, asym=f"{h['asymptote_c']:.4f}", bound=f"{h['bound_c']:.4f}"),
    )

    ctx.section("notice")
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download(
        "measures.csv",
        {
            "tau": s["t"],
            "W1_n_vs_reference": s["w1"],
            "bound_exp_C_tau_W1_0": s["bound"],
            "n": e["n"],
            "E_W1_uniform_monte_carlo": e["mean"],
            "E_W1_stderr": e["se"],
            "n_fine": e["fine"],
            "fixed_shift_exact": e["fixed_shift"],
            "equispaced_pi_over_2n": e["equispaced"],
            "H": h["H"],
            "head_error_monte_carlo": h["mean"],
            "head_error_stderr": h["se"],
            "H_fine": h["fine"],
            "head_error_bound": h["bound"],
            "head_error_large_H_law": h["asymptote"],
        },
    )
    ctx.footer()


if __name__ == "__main__":
    render()
