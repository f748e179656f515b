"""What the depth_sum page draws: its solid curves are the closed forms of sim/depth_sum.py, and its
figures, built without Plotly's validation, equal the validated ones."""
import math

import numpy as np
import pytest
from scipy.stats import norm

from sim import depth_sum as ds


def test_page_figures_show_the_exact_laws():
    """The solid curves of the depth_sum page (views/depth_sum.py) are the closed forms of sim/depth_sum.py."""
    pytest.importorskip("streamlit")
    import importlib

    view = importlib.import_module("views.depth_sum")
    from ui.i18n import Text

    t = Text("depth_sum", "en")
    alpha, L, sigma, rho, mu, a, trials, seed = 0.35, 40, 1.3, 0.1, 0.2, 0.8, 600, 3

    def lines(fig):
        return [tr for tr in fig.data if tr.mode == "lines"]

    hist = view.hist_figure.__wrapped__(t, alpha, L, sigma, rho, mu, a, trials, seed)
    x, y = np.asarray(lines(hist)[-1].x), np.asarray(lines(hist)[-1].y)
    np.testing.assert_allclose(y, norm.pdf(x, ds.mean(alpha, L, mu), math.sqrt(ds.variance(alpha, L, sigma, rho))),
                               rtol=1e-12)
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
    """The page builds its figures from plain dicts without Plotly's validation (ui.figures.VALIDATE);
    built once more with validation (which rejects unknown or ill-typed properties) they serialise
    identically."""
    pytest.importorskip("streamlit")
    import importlib
    import json

    import plotly.io as pio

    view = importlib.import_module("views.depth_sum")
    from ui import figures
    from ui.figures import Frozen
    from ui.i18n import Text

    values = dict(alpha=0.5, L=24, sigma=1.3, N=4, rho=0.2, mu=0.1, a=0.8, c=1.7, trials=200, seed=2)
    for lang in ("en", "zh"):
        t = Text("depth_sum", lang)
        for name, (fn, keys) in view.FIGURES.items():
            args = [values[k] for k in keys]
            monkeypatch.setattr(figures, "VALIDATE", False)
            fast = Frozen(fn.__wrapped__(t, *args)).spec
            monkeypatch.setattr(figures, "VALIDATE", True)
            checked = Frozen(fn.__wrapped__(t, *args)).spec
            same = json.loads(pio.to_json(fast, validate=False)) == json.loads(pio.to_json(checked, validate=False))
            assert same, name
