"""Page: Inside a block — positions, normalisation, splitting, sinks.

What it computes: docs/constructions.md, section “Inside a block: positions, normalisation, splitting, sinks”.
"""

from __future__ import annotations

import streamlit as st

from ui.kit.figures import show
from ui.kit.page import setup
from ui.kit.spec import PageSchema
from pages.block import views as vb
from pages.block import figures as fb
from pages.block.predict import STEPS

SCHEMA = PageSchema.from_file("block", steps=STEPS)

#: each tab and its own sliders, drawn on the tab above its numbers and figures (not in the sidebar)
TABS = {
    "rope": ("rope_k", "rope_from", "rope_to"),
    "norm": ("norm_d", "log_eps"),
    "split": ("split_d", "split_seed"),
    "perm": ("perm_n", "perm_beta", "perm_pos", "perm_seed"),
    "sink": ("sink_delta", "sink_share"),
}


def _metrics(ctx, pairs) -> None:
    """A row of headline numbers by text key (``metrics.<key>``)."""
    ctx.metrics([(ctx.t(f"metrics.{key}"), value) for key, value in pairs])


def _tab(ctx, name: str, metrics, *figures, caption: str) -> None:
    """One tab: its section, its sliders, a row of numbers, its figures ``(figure, key)`` and a caption."""
    ctx.section(name)
    ctx.controls(TABS[name])
    _metrics(ctx, metrics)
    for fig, key in figures:
        show(fig, key=key)
    ctx.caption(f"{name}.caption", caption)


def render() -> None:
    ctx = setup(SCHEMA, placed=tuple(n for names in TABS.values() for n in names))
    t, v = ctx.t, ctx.values
    ctx.intro()
    empty_window = v["rope_from"] >= v["rope_to"]
    if empty_window:
        v = {**v, "rope_from": min(v["rope_from"], v["rope_to"] - 1)}
    rope = (v["rope_k"], v["rope_from"], v["rope_to"])
    norm = (v["norm_d"], v["log_eps"])
    split = (v["split_d"], v["split_seed"])
    perm = (v["perm_n"], v["perm_beta"], v["perm_pos"], v["perm_seed"])
    sink = (v["sink_delta"], v["sink_share"])
    with ctx.guard():
        r, n, s = vb.rope_data(*rope), vb.norm_data(*norm), vb.split_data(*split)
        p, k = vb.perm_data(*perm), vb.sink_data(*sink)

    tabs = st.tabs([t(f"tabs.{name}") for name in TABS])
    with tabs[0]:
        ctx.section("rope")
        ctx.controls(TABS["rope"], per_row=3)
        if empty_window:
            st.warning(t("rope.window_notice", lo=ctx.values["rope_from"], hi=v["rope_to"]))
        slope = "—" if r["slope"] is None else f"{r['slope']:.2f}"
        _metrics(
            ctx,
            [
                ("rope_slope", slope),
                ("rope_top", f"{r['heights'][-1]:.3f}"),
                ("rope_top_at", f"{int(r['where'][-1]):,}"),
            ],
        )
        show(fb.rope_curve_figure(t, *rope), key="fig_rope")
        st.caption(t("rope.curve_caption", lo=v["rope_from"]))
        show(fb.rope_peak_figure(t, *rope), key="fig_rope_peak")
        st.caption(t("rope.peak_caption", fit=vb.ROPE_FIT_FROM, s=slope))

    with tabs[1]:
        _tab(
            ctx,
            "norm",
            [("gain0", f"{n['gain_at_eps']:.4g}"), ("slope0", f"{n['slope0']:.6f}"), ("knee", f"{n['knee']:.2e}")],
            (fb.norm_rho_figure(t, *norm), "fig_norm_rho"),
            (fb.norm_eps_figure(t, *norm), "fig_norm_eps"),
            caption=t("norm.caption", d=v["norm_d"]) if v["norm_d"] >= 2 else t("norm.caption_d1"),
        )
    with tabs[2]:
        _tab(
            ctx,
            "split",
            [
                ("commutator", f"{s['limit']:.6g}"),
                ("defect_small", f"{s['defect'][0]:.6g}"),
                ("trotter_ratio", f"{s['trotter'][0] / s['half'][0]:.6f}"),
            ],
            (fb.split_defect_figure(t, *split), "fig_split"),
            (fb.split_trotter_figure(t, *split), "fig_trotter"),
            caption=t("split.caption", d=v["split_d"], a=f"{vb.SPLIT_ALPHAS[0]:.0e}"),
        )
    with tabs[3]:
        _tab(
            ctx,
            "perm",
            [(f"gap_{case}", f"{g.max() / p['scale']:.1e}") for case, g in p["gaps"].items()],
            (fb.perm_figure(t, *perm), "fig_perm"),
            caption=t("perm.caption", perm=", ".join(map(str, p["perm"])), floor=f"{vb.PERM_FLOOR:.0e}"),
        )
    with tabs[4]:
        g = v["sink_delta"]
        _tab(
            ctx,
            "sink",
            [
                ("nmax", f"{k['nmax'][g]:,.1f}"),
                ("mass_at_1000", f"{k['layer'][g][-1]:.4f}"),
                ("gap_needed", f"{k['gap_for_1000']:.2f}"),
            ],
            (fb.sink_figure(t, *sink), "fig_sink"),
            caption=t("sink.caption", c=f"{v['sink_share']:g}"),
        )

    pk = ctx.spec.params["rope_k"]  # the slider's range in force (the instructor's file may narrow it)
    lo_k, hi_k = int(pk.min), int(pk.max)
    (k1, h1), (k4, h4), (k16, h16) = [(kk, "—" if h != h else f"{h:.2f}") for kk, h in vb.rope_band_tops(*rope).items()]
    ctx.section(
        "notice",
        lo=f"{v['rope_from']:,}",
        hi=f"{v['rope_to']:,}",
        k=k1,
        k4=k4,
        k16=k16,
        h1=h1,
        h4=h4,
        h16=h16,
        kmin=lo_k,
        kmax=hi_k,
        k16min=16 * lo_k,
        k16max=16 * hi_k,
    )
    ctx.section("questions")
    ctx.section("limits")
    ctx.csv_download("block.csv", vb.csv_columns(v))
    ctx.footer()


if __name__ == "__main__":
    render()
