"""The page 'Inside a block' draws what sim.block computes, on two parameter sets (one per language)."""

import math

import numpy as np
import pytest

from sim import block as bk
from pages.block import views as vb
from tests.conftest import app_test, chart_specs, decode
from ui.kit.i18n import Text

QUERIES = [
    {"lang": "en"},
    {
        "lang": "zh",
        "rope_k": "3",
        "rope_from": "2000",
        "rope_to": "30000",
        "norm_d": "5",
        "log_eps": "-9",
        "split_d": "7",
        "split_seed": "11",
        "perm_n": "13",
        "perm_beta": "2.5",
        "perm_pos": "1",
        "perm_seed": "4",
        "sink_delta": "3.5",
        "sink_share": "0.8",
    },
]
DEFAULTS = {
    "rope_k": 2,
    "rope_from": 10000,
    "rope_to": 60000,
    "norm_d": 64,
    "log_eps": -6.0,
    "split_d": 4,
    "split_seed": 0,
    "perm_n": 8,
    "perm_beta": 1.0,
    "perm_pos": 0.5,
    "perm_seed": 0,
    "sink_delta": 6.0,
    "sink_share": 0.5,
}
TITLES = (
    "rope_title",
    "peak_title",
    "norm_title",
    "eps_title",
    "defect_title",
    "trotter_title",
    "perm_title",
    "sink_title",
)


@pytest.fixture(scope="module", params=range(len(QUERIES)), ids=["defaults-en", "other-zh"])
def page(request):
    q = QUERIES[request.param]
    at = app_test("block", q)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    v = {k: type(d)(float(q.get(k, d))) for k, d in DEFAULTS.items()}
    figs = chart_specs(at)
    t = Text("block", q["lang"])
    assert len(figs) == len(TITLES)
    for f, key in zip(figs, TITLES):  # the figures come in the order of the tabs
        assert f["layout"]["title"]["text"].split("(")[0].split("（")[0] in t(
            f"fig.{key}", d=v["norm_d"], c=f"{v['sink_share']:g}"
        )
    return at, v, dict(zip(TITLES, figs))


def _xy(tr):
    return decode(tr["x"]).astype(float), decode(tr["y"]).astype(float)


def _lines(fig):
    return [tr for tr in fig["data"] if tr.get("mode") == "lines"]


def _markers(fig):
    return [tr for tr in fig["data"] if tr.get("mode") == "markers"]


def test_rope_band_is_the_formula_and_the_peaks_are_the_window_maxima(page):
    at, v, f = page
    k, lo, hi = v["rope_k"], v["rope_from"], v["rope_to"]
    lines = _lines(f["rope_title"])
    assert len(lines) == 6  # upper and lower envelope for k, 4k, 16k
    N_all = np.arange(1, hi + 1, dtype=float)
    for i, kk in enumerate((k, 4 * k, 16 * k)):
        ref = bk.rope_similarity(N_all, kk)
        th = 10000.0 ** (-np.arange(kk) / kk)
        for tr, pick in ((lines[2 * i], np.max), (lines[2 * i + 1], np.min)):
            x, y = _xy(tr)
            assert x[-1] <= hi and np.all(x == np.round(x))
            np.testing.assert_allclose(y, np.cos(np.outer(x, th)).mean(1), atol=1e-12)  # direct sum
            assert pick(y) == pytest.approx(pick(ref), abs=1e-12)  # the extreme over all N is drawn
    (mk,) = _markers(f["peak_title"])
    ks, h = _xy(mk)
    np.testing.assert_array_equal(ks, [1, 2, 4, 8, 16, 32, 64])
    for kk, hh in zip(ks, h):
        assert hh == pytest.approx(bk.rope_largest_return(int(kk), lo, hi)[0], abs=1e-12)
    N = np.arange(lo, hi + 1, dtype=float)
    for kk in (4, 32):  # brute force over the window
        assert h[list(ks).index(kk)] == pytest.approx(bk.rope_similarity(N, kk).max(), abs=1e-12)
    fit = ks >= 8
    slope = np.polyfit(np.log(ks[fit]), np.log(h[fit]), 1)[0]
    x, y = _xy(_lines(f["peak_title"])[0])
    assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(slope, abs=1e-9)
    assert any(m.value == f"{slope:.2f}" for m in at.metric)


def test_rmsnorm_gain_curves_and_svd_markers(page):
    at, v, f = page
    d, eps0 = v["norm_d"], 10.0 ** v["log_eps"]
    epss = [eps0 * 1e-3, eps0, eps0 * 1e3]
    fig = f["norm_title"]
    for tr, eps in zip(_lines(fig), epss):
        x, y = _xy(tr)
        np.testing.assert_allclose(y, 1 / np.sqrt(x**2 / d + eps), rtol=1e-12)
    u = np.random.default_rng(0).standard_normal(d)
    u /= np.linalg.norm(u)
    for tr, eps in zip(_markers(fig), epss):
        x, y = _xy(tr)
        ref = [np.linalg.svd(bk.rmsnorm_jacobian(r * u, eps), compute_uv=False)[0] for r in x]
        np.testing.assert_allclose(y, ref, rtol=1e-9)
        np.testing.assert_allclose(y, [bk.rmsnorm_gain(r * u, eps) for r in x], rtol=1e-9)
    fig = f["eps_title"]
    x, y = _xy(_lines(fig)[0])
    np.testing.assert_allclose(y, x**-0.5, rtol=1e-12)
    x, y = _xy(_markers(fig)[0])
    np.testing.assert_allclose(y, x**-0.5, rtol=1e-9)
    assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(-0.5, abs=1e-9)
    assert any(m.value == f"{eps0**-0.5:.4g}" for m in at.metric)


def test_splitting_panels_are_the_defects_of_the_example(page):
    at, v, f = page
    A, B, x0 = bk.splitting_example(v["split_d"], v["split_seed"])
    lim = np.linalg.norm((A @ B - B @ A) @ x0)
    x, y = _xy(_lines(f["defect_title"])[0])
    np.testing.assert_allclose(y, lim, rtol=1e-12)
    a, y = _xy(_markers(f["defect_title"])[0])
    np.testing.assert_allclose(y, bk.splitting_defect(A, B, x0, a), rtol=1e-12)
    assert abs(y[0] - lim) < 1e-3 * lim  # α = 1e-4 is already at the limit
    x, y = _xy(_lines(f["trotter_title"])[0])
    np.testing.assert_allclose(y, 0.5 * x**2 * lim, rtol=1e-12)
    a, y = _xy(_markers(f["trotter_title"])[0])
    np.testing.assert_allclose(y, bk.trotter_defect(A, B, x0, a), rtol=1e-12)
    assert any(m.value == f"{lim:.6g}" for m in at.metric)


def test_permutation_gaps_are_recomputed(page):
    from pages.block.views import PERM_FLOOR, perm_positions, perm_setup

    at, v, f = page
    n, beta, pos = v["perm_n"], v["perm_beta"], v["perm_pos"]
    Z, A, V, perm = perm_setup(n, v["perm_seed"])
    assert np.abs(A - A.T).max() > 1e-3 and np.abs(V - V.T).max() > 1e-3
    P = perm_positions(n, pos)
    mk = _markers(f["perm_title"])
    assert len(mk) == 3
    for tr, kw in zip(mk, ({}, {"positions": P}, {"causal": True})):
        x, y = _xy(tr)
        np.testing.assert_array_equal(x, np.arange(1, n + 1))
        gap = np.linalg.norm(bk.attention(Z[perm], A, V, beta, **kw) - bk.attention(Z, A, V, beta, **kw)[perm], axis=1)
        np.testing.assert_allclose(y, np.maximum(gap, PERM_FLOOR), rtol=1e-6, atol=1e-15)
    assert decode(mk[0]["y"]).max() < 1e-13  # exact up to rounding
    assert decode(mk[2]["y"]).max() > 1e-2  # a causal mask breaks it
    assert (decode(mk[1]["y"]).max() > 1e-2) == (pos > 0)


def test_sink_curves_markers_and_capacity_lines(page):
    at, v, f = page
    delta, c = v["sink_delta"], v["sink_share"]
    fig = f["sink_title"]
    gaps = [0.5 * delta, delta, 1.5 * delta]
    for tr, g in zip(_lines(fig), gaps):
        N, y = _xy(tr)
        np.testing.assert_allclose(y, np.exp(g) / (np.exp(g) + N - 1), rtol=1e-12)
    for tr, g in zip(_markers(fig), gaps):
        N, y = _xy(tr)
        np.testing.assert_allclose(y, bk.sink_mass(g, N), rtol=1e-10)  # from a softmax layer
    vx = sorted(
        s["x0"] for s in fig["layout"]["shapes"] if s["x0"] == s.get("x1") and s.get("yref") in ("paper", "y domain")
    )
    np.testing.assert_allclose(vx, sorted(1 + (1 - c) / c * np.exp(g) for g in gaps), rtol=1e-12)
    hy = [s["y0"] for s in fig["layout"]["shapes"] if s.get("xref") in ("paper", "x domain")]
    assert hy == [pytest.approx(c)]
    for g in gaps:
        assert bk.sink_mass(g, bk.sink_capacity(g, c))[0] == pytest.approx(c, rel=1e-12)
    assert any(m.value == f"{bk.sink_capacity(delta, c):,.1f}" for m in at.metric)
    gap_1000 = np.log(999 * c / (1 - c))  # c(1000) = c  <=>  e^Δ = 999 c/(1-c)
    assert bk.sink_mass(gap_1000, 1000)[0] == pytest.approx(c, rel=1e-12)
    assert any(m.value == f"{gap_1000:.2f}" for m in at.metric)


def test_empty_distance_window_gives_a_notice_not_an_error():
    at = app_test("block", {"lang": "en", "rope_from": "50000", "rope_to": "20000", "rope_k": "1"})
    assert not at.exception and not at.error
    assert any("empty" in w.value for w in at.warning), [w.value for w in at.warning]
    (mk,) = _markers(chart_specs(at)[1])
    ks, h = _xy(mk)
    for kk, hh in zip(ks, h):  # counted over the one-step window [19999, 20000]
        assert hh == pytest.approx(bk.rope_similarity([19999.0, 20000.0], int(kk)).max(), abs=1e-12)


def test_splitting_panel_up_to_the_hard_limit():
    """split_d's hard limit (32, reachable by a link or the instructor's file) is computed, not refused
    by the splitting functions' default work bound."""
    s = vb.split_data(32, 0)
    assert np.all(np.isfinite(s["defect"])) and np.all(np.isfinite(s["trotter"]))


@pytest.mark.parametrize("d", [1, 2, 64])
def test_rmsnorm_gain_far_from_zero(d):
    """The RMSNorm caption: for d >= 2 the gain joins √d/‖x‖ whatever ε is; at d = 1 (the slider's
    minimum) it falls like ε/|x|³ and depends on ε (its own caption says so)."""
    n = vb.norm_data(d, -6.0)
    rho = n["rho"][-1]
    for eps, g in n["gain"].items():
        want = math.sqrt(d) / rho if d >= 2 else eps / rho**3
        assert g[-1] == pytest.approx(want, rel=1e-3 if d >= 2 else 1e-2), (d, eps)


def test_largest_return_fit_is_drawn_over_its_data_only():
    """The fitted line and the −½ guide span the fitted k only: never above 1, the most a similarity reaches."""
    from ui.kit import spec
    from pages.block.page import SCHEMA

    res = spec.resolve(SCHEMA)
    d = vb.rope_data(*(res.params[k].default for k in ("rope_k", "rope_from", "rope_to")))
    assert d["slope"] is not None and d["fit_ks"].min() >= vb.ROPE_FIT_FROM
    assert d["fit_line"].max() <= 1.0 and d["half_line"].max() <= 1.0


def test_each_tab_shows_its_own_sliders_and_the_sidebar_none_of_them(page):
    """Five tabs, thirteen sliders: each tab holds exactly the sliders of what it draws (pages.block.TABS,
    every parameter once), the sidebar none of them (it says where they are)."""
    from pages.block.page import SCHEMA, TABS

    at, v, f = page
    assert sorted(n for names in TABS.values() for n in names) == sorted(p.name for p in SCHEMA.params)
    assert not at.sidebar.slider
    assert len(at.tabs) == len(TABS)
    for tab, names in zip(at.tabs, TABS.values()):
        assert [s.key for s in tab.slider] == list(names)
    t = Text("block", "zh" if v["perm_n"] != 8 else "en")
    assert any(c.value == t("ui.controls_placed") for c in at.sidebar.caption)


def test_a_tab_slider_moves_its_tab_and_keeps_the_url():
    """A slider on a tab is the same widget as in the sidebar: moving it redraws that tab's figure and
    writes the URL; a preset-free link restores it."""
    at = app_test("block", {"lang": "en"})
    before = chart_specs(at)
    at.slider(key="perm_beta").set_value(2.0).run()
    assert not at.exception and not at.error
    after = chart_specs(at)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a["data"] != b["data"]]
    assert changed == [TITLES.index("perm_title")], changed
    assert at.query_params["perm_beta"] in ("2", ["2"])


def test_rope_notice_quotes_the_drawn_bands_and_the_sliders_range(page):
    """The notice names the planes of the three bands at this k, how high each thick line climbs right
    of the dashed line (read off the figure) and the range the slider gives the third band."""
    from pages.block.page import SCHEMA

    at, v, f = page
    lang = "zh" if v["perm_n"] != 8 else "en"
    k, lo = v["rope_k"], v["rope_from"]
    lines = _lines(f["rope_title"])
    tops = []
    for tr in lines[::2]:
        x, y = _xy(tr)
        tops.append(f"{y[x >= lo].max():.2f}")
    p = SCHEMA.param("rope_k")
    notice = next(m.value for m in at.markdown if m.value.startswith("## " + Text("block", lang)("notice.title")))
    for piece in (f"$k = {k}$", f"$4k = {4 * k}$", f"$16k = {16 * k}$", *tops, f"{16 * p.min} ", f"{16 * p.max} "):
        assert piece in notice, (piece, notice[:400])
    assert "{" + "{" not in notice and "{lo}" not in notice  # filled in, braces undoubled
