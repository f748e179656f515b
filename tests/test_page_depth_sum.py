"""What the depth_sum page draws: its solid curves are the closed forms of sim/depth_sum.py, and its
figures, built without Plotly's validation, equal the validated ones."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from sim import depth_sum as ds


def test_page_figures_show_the_exact_laws():
    """The solid curves of the depth_sum page (pages/depth_sum/figures.py) are the closed forms of sim/depth_sum.py."""
    pytest.importorskip("streamlit")
    import importlib

    view = importlib.import_module("pages.depth_sum.figures")
    from ui.kit.i18n import Text

    t = Text("depth_sum", "en")
    alpha, L, sigma, rho, mu, a, trials, seed = 0.35, 40, 1.3, 0.1, 0.2, 0.8, 600, 3

    def lines(fig):
        return [tr for tr in fig.data if tr.mode == "lines"]

    hist = view.hist_figure.__wrapped__(t, alpha, L, sigma, rho, mu, a, trials, seed)
    x, y = np.asarray(lines(hist)[-1].x), np.asarray(lines(hist)[-1].y)
    np.testing.assert_allclose(
        y, norm.pdf(x, ds.mean(alpha, L, mu), math.sqrt(ds.variance(alpha, L, sigma, rho))), rtol=1e-12
    )
    var = view.variance_figure.__wrapped__(t, alpha, L, sigma, rho, mu, a, trials, seed)
    x, y = np.asarray(var.data[0].x), np.asarray(var.data[0].y)
    np.testing.assert_allclose(y, [ds.variance(alpha, int(v), sigma, rho) for v in x], rtol=1e-12)
    reg = view.regime_figure.__wrapped__(t, alpha, L, sigma, rho, mu, a, trials, seed)
    cur = next(tr for tr in reg.data if tr.name == t("fig.regime_exact", al=f"{alpha:g}"))
    assert cur.mode == "lines" and len(cur.x) > 10
    np.testing.assert_allclose(cur.y, [ds.prob_within(alpha, int(v), sigma, a, rho, mu) for v in cur.x])
    res = view.residual_figure.__wrapped__(t, alpha, 12, 6, 50, seed)
    x, y = np.asarray(res.data[0].x), np.asarray(res.data[0].y)
    np.testing.assert_allclose(y[-1], ds.residual_energy(alpha, 12), rtol=1e-12)
    step = view.step_figure.__wrapped__(t, alpha, L, 1.7)
    x, y = np.asarray(step.data[0].x), np.asarray(step.data[0].y)
    np.testing.assert_allclose(y, [ds.one_step(1.7, int(v))[0] for v in x], rtol=1e-12)


def test_page_figures_valid_and_built_without_validation_identically(monkeypatch):
    """The page builds its figures from plain dicts without Plotly's validation (ui.kit.figures.VALIDATE);
    built once more with validation (which rejects unknown or ill-typed properties) they serialise
    identically."""
    pytest.importorskip("streamlit")
    import importlib
    import json

    import plotly.io as pio

    view = importlib.import_module("pages.depth_sum.figures")
    from ui.kit import figures
    from ui.kit.figures import Frozen
    from ui.kit.i18n import Text

    values = dict(alpha=0.5, L=24, sigma=1.3, N=4, rho=0.2, mu=0.1, a=0.8, c=1.7, trials=200, seed=2)
    for lang in ("en", "zh"):
        t = Text("depth_sum", lang)
        for name, fn in view.FIGURES.items():
            args = [values[k] for k in figures.params_of(fn)]
            monkeypatch.setattr(figures, "VALIDATE", False)
            fast = Frozen(fn.__wrapped__(t, *args)).spec
            monkeypatch.setattr(figures, "VALIDATE", True)
            checked = Frozen(fn.__wrapped__(t, *args)).spec
            same = json.loads(pio.to_json(fast, validate=False)) == json.loads(pio.to_json(checked, validate=False))
            assert same, name


@pytest.mark.parametrize(
    "query",
    [
        {"L": "64", "trials": "4000", "seed": "0"},  # the issue: Var S_64
        {"L": "128", "trials": "6000", "seed": "5", "alpha": "0.35", "rho": "0.1", "mu": "0.3", "a": "0.7"},
    ],
)
def test_one_quantity_one_number(query, monkeypatch):
    """Var S_L and P(|S_L| <= a) at the chosen L appear in the headline, at the plot markers,
    in the CSV and (Var) in the covariance table: all the same number (the same draws). Before, the
    panels used different seeds and sample counts (Var S_64: 0.9728, 1.0294, 1.023)."""
    import re

    from tests.conftest import app_test, chart_specs, decode
    from ui.kit import page as ui_page

    csv = {}
    monkeypatch.setattr(ui_page.Ctx, "csv_download", lambda self, name, columns, key=None: csv.update(columns))
    at = app_test("depth_sum", {"lang": "en", **query})
    at.session_state["_depth_sum_variants_open"] = True  # the covariance section, collapsed by default
    at.run()
    assert not at.exception and not at.error
    L = int(query["L"])
    figs = chart_specs(at)

    def trace(title_part, name_part):
        fig = next(f for f in figs if title_part in f["layout"].get("title", {}).get("text", ""))
        return next(tr for tr in fig["data"] if name_part in (tr.get("name") or ""))

    from ui.kit.i18n import Text

    t = Text("depth_sum", "en")
    # plot markers at L (L is a grid point)
    var_tr = trace(t("fig.var_title"), t("fig.var_mc"))
    i = list(decode(var_tr["x"])).index(L)
    var_marker = float(decode(var_tr["y"])[i])
    p_tr = trace(t("fig.regime_title"), t("fig.regime_mc"))
    p_marker = float(decode(p_tr["y"])[list(decode(p_tr["x"])).index(L)])
    # CSV
    j = list(np.asarray(csv["L_grid"])).index(L)
    var_csv, p_csv = float(csv["var_mc"][j]), float(csv["prob_mc"][j])
    # covariance table and bars (shown at min(L, 128) = L here)
    cov_fig = next(f for f in figs if f["data"][0].get("type") == "bar")
    var_cov = float(decode(cov_fig["data"][1]["y"])[2])
    assert f"L = {L} " in cov_fig["layout"]["title"]["text"]
    # headline captions: "Monte Carlo: x ± se"
    caps = [c.value for c in at.caption if c.value.startswith("Monte Carlo:")]
    var_head, p_head = (float(re.search(r"Monte Carlo: (\S+) ±", c).group(1)) for c in caps[:2])
    md = " ".join(m.value for m in at.markdown)
    var_table = float(re.search(r"\\sum_\\ell Y_\\ell\)\$ \| (\S+) \|", md).group(1))

    assert var_marker == pytest.approx(var_csv, rel=1e-11)
    assert var_marker == pytest.approx(var_cov, rel=1e-11)
    assert f"{var_marker:.4g}" == f"{var_head:.4g}" == f"{var_table:.4g}"
    assert p_marker == p_csv
    assert f"{p_marker:.4f}" == f"{p_head:.4f}"
    # and it is the sample variance of S_L from the page's draws, recomputed here
    from pages.depth_sum.views import depth_seed, mc_trials

    alpha, sigma = float(query.get("alpha", 0.5)), 1.0
    rho, mu, a = float(query.get("rho", 0)), float(query.get("mu", 0)), float(query.get("a", 1))
    n = mc_trials(L, int(query["trials"]))
    x = ds.sums_from_units(alpha, L, sigma, *ds.unit_sums(L, n, depth_seed(int(query["seed"]), L)), rho, mu)
    assert var_marker == pytest.approx(np.var(x, ddof=1), rel=1e-12)
    assert p_marker == pytest.approx(np.mean(np.abs(x) <= a), abs=1e-15)
