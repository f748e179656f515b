"""The width page: every plotted number equals sim.width for the current parameters (two parameter
sets), the frozen-kernel curves equal e^{-K(0)t} r(0) computed here, and the band contains the markers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from sim import width as W
from tests.conftest import app_test, chart_specs, decode
from ui.kit.i18n import Text
from pages.width import views as V

SETS = [
    dict(N=128, scaling="lazy", start="paired", T=4.0, dt=0.01, data="three_points", seed=0),
    dict(N=32, scaling="mean_field", start="random", T=3.0, dt=0.02, data="wave", seed=5),
]


def _query(p):
    return {k: (f"{v:g}" if isinstance(v, float) else str(v)) for k, v in p.items()}


def _traces(spec):
    return {tr.get("name"): tr for tr in spec["data"] if tr.get("name")}


def _xy(tr):
    return decode(tr["x"]).astype(float), decode(tr["y"]).astype(float)


@pytest.fixture(scope="module", params=range(len(SETS)))
def page(request):
    p = SETS[request.param]
    at = app_test("width", {"lang": "en", **_query(p)})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return p, at, chart_specs(at)


def test_width_plots_are_the_sweep(page):
    p, at, specs = page
    t = Text("width", "en")
    xs, ys = W.dataset(p["data"])
    sw = W.width_sweep(V.SWEEP_NS, p["T"], V.sweep_step(p["T"], xs.size), p["seed"], xs, ys, start=p["start"])
    for spec, kind in ((specs[0], "param"), (specs[1], "kernel")):
        tr = _traces(spec)
        for s in W.SCALINGS:
            sl = W.slope(V.SWEEP_NS, sw[f"{s}_{kind}"])
            x, y = _xy(tr[t(f"fig.{s}_fit", slope=V.fmt_slope(sl))])
            np.testing.assert_array_equal(x, V.SWEEP_NS)
            np.testing.assert_allclose(y, sw[f"{s}_{kind}"], rtol=1e-12)
        x, y = _xy(tr[t("fig.ref_half" if kind == "param" else "fig.ref_half_bound")])
        assert np.log(y[-1] / y[0]) / np.log(x[-1] / x[0]) == pytest.approx(-0.5)  # reference slopes
        if kind == "kernel":
            x, y = _xy(tr[t("fig.ref_one")])
            assert np.log(y[-1] / y[0]) / np.log(x[-1] / x[0]) == pytest.approx(-1.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[t("metrics.slope_lazy_kernel")] == V.fmt_slope(W.slope(V.SWEEP_NS, sw["lazy_kernel"]))


def test_loss_residual_and_eigen_plots_are_the_training_runs(page):
    p, at, specs = page
    t = Text("width", "en")
    xs, ys = W.dataset(p["data"])
    init = W.paired_init if p["start"] == "paired" else W.random_init
    runs = {s: W.train_from(*init(p["N"], p["seed"]), s, p["T"], p["dt"], xs, ys, record=V.RECORD) for s in W.SCALINGS}
    loss = _traces(specs[2])
    for s, res in runs.items():
        x, y = _xy(loss[t(f"fig.{s}_loss")])
        np.testing.assert_allclose(x, res["t"], rtol=1e-12)
        np.testing.assert_allclose(y, res["loss"], rtol=1e-10)
        # the frozen-kernel loss, computed here from the kernel formula and a matrix exponential
        K0 = W.kernel(*init(p["N"], p["seed"]), xs)
        r0 = res["residual"][0]
        want = [0.5 * np.sum((expm(-K0 * tt) @ r0) ** 2) for tt in res["t"]]
        np.testing.assert_allclose(_xy(loss[t(f"fig.{s}_frozen_loss")])[1], want, rtol=1e-9, atol=1e-14)

    res = runs[p["scaling"]]
    resid = _traces(specs[3])
    for m, xm in enumerate(xs):
        _, y = _xy(resid[t("fig.trained", x=f"{xm:g}")])
        np.testing.assert_allclose(y, res["residual"][:, m], rtol=1e-10, atol=1e-14)
        _, fr = _xy(resid[t("fig.frozen", x=f"{xm:g}")])
        np.testing.assert_allclose(fr, res["frozen"][:, m], rtol=1e-10, atol=1e-14)
        _, hi = _xy(resid[t("fig.band", x=f"{xm:g}")])
        np.testing.assert_allclose(hi - fr, res["bound"], rtol=1e-9, atol=1e-14)
        assert np.all(np.abs(y - fr) <= res["bound"] + 1e-12)  # every marker inside its band

    eig = _traces(specs[4])
    lam = np.sort(np.linalg.eigvalsh(W.kernel(*init(p["N"], p["seed"]), xs)))[::-1]
    floor = V.EIG_FLOOR * lam[0]
    # An eigenvalue is known only to ~‖δK‖ (Weyl): the kernel's entries are sums of N terms, so two
    # ways of building K (or two BLAS kernels, AVX2 vs AVX-512) differ by up to ~N·eps·λ₁ in each of
    # the M×M entries. The small eigenvalues (5e-8 beside λ₁ = 5.5) are compared to that, not to 1e-9
    # of themselves.
    atol = p["N"] * xs.size * np.finfo(float).eps * lam[0]
    np.testing.assert_allclose(_xy(eig[t("fig.eig0")])[1], np.maximum(lam, floor), rtol=1e-9, atol=atol)
    for s, res in runs.items():
        np.testing.assert_allclose(
            _xy(eig[t(f"fig.{s}_eig_end")])[1], np.maximum(res["eig_end"], floor), rtol=1e-9, atol=atol
        )


def test_axes_say_training_time_never_depth(page):
    _, _, specs = page
    for spec in specs[2:4]:
        assert spec["layout"]["xaxis"]["title"]["text"] == "training time t"
    for spec in specs:
        text = str(spec["layout"]).lower()
        assert "depth" not in text and "layer" not in text


def test_work_bound_raises_the_step_with_a_notice():
    p = dict(N=512, scaling="lazy", start="paired", T=10.0, dt=0.005, data="wave", seed=0)
    at = app_test("width", {"lang": "zh", **_query(p)})
    assert not at.exception and not at.error
    h = V.step_for(512, 10.0, 0.005, 6)
    assert h > 0.005
    assert len(at.info) == 1 and f"{h:.4g}" in at.info[0].value
    res = V.run_data(512, "lazy", "paired", 10.0, 0.005, "wave", 0)
    assert res["steps"] * 512 * 6 <= V.PAGE_WORK


def test_sweep_step_keeps_the_sweep_bounded():
    for T, M in [(0.5, 1), (4.0, 3), (10.0, 3), (10.0, 6), (20.0, 6)]:
        h = V.sweep_step(T, M)
        assert V.SWEEP_DT[0] <= h <= V.SWEEP_DT[1]
        steps = int(np.ceil(T / h - 1e-9))
        work = steps * M * sum(V.SWEEP_NS) * 2
        assert work <= V.SWEEP_WORK * (1 + 1e-9) or h == V.SWEEP_DT[1], (T, M, h, work)


def test_step_for_keeps_the_work_bound():
    for N, T, dt, M in [(2, 0.5, 0.005, 1), (512, 10.0, 0.005, 6), (256, 7.5, 0.01, 3), (512, 10, 0.05, 6)]:
        h = V.step_for(N, T, dt, M)
        k = int(np.ceil(T / (V.RECORD - 1) / h - 1e-9))
        assert h >= dt and (h == dt or k * (V.RECORD - 1) * N * M <= V.PAGE_WORK)
