"""Gaussian width: the page's notebook (ui/kit/notebook.py): the exact width of the chosen family, its
bounds, and a Monte Carlo histogram of sup over S of g·u."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/gaussian_width/views.py, at the page's capped k and M)."""
    from pages.gaussian_width.views import focus, focus_args, max_M, random_layout

    D = v["D"]
    k, M = min(v["k"], D), min(v["M"], max_M(D))
    rho = 0.0 if random_layout(v["family"], D, M) else v["correlation"]
    f = focus(*focus_args(v["family"], D, k, M, rho, v["samples"], v["seed"]))
    return {"exact": float("nan") if f["exact"] is None else f["exact"], "lower": f["lo"], "upper": f["hi"]}


RECIPE = Recipe(
    stem="gaussian_width",
    texts=("fig.x_sup", "fig.y_density", "fig.exact_mean", "fig.mc_mean", "fig.hist_mc"),
    code=(
        """
from sim import gaussian_width as gw

# The page caps k at D and M at what it computes at dimension D; M > D: M random directions.
k, M = min(k, D), min(M, int(gw.MAX_BASIS // D))
if family == "subspace":
    p = {"D": D, "k": k}
elif family == "directions":
    p = {"D": D, "M": M, "layout": "random"} if M > D else {"D": D, "M": M, "correlation": correlation}
else:
    p = {"D": D}
if p.get("layout") == "random":    # no closed form in D >= 3 (Monte Carlo only)
    width = gw.exact("directions", vectors=gw.random_directions(M, D, seed)) if D <= 2 else float("nan")
else:
    width = gw.exact(family, **p)
lower, upper = gw.bound(family, **p)
draws = min(samples, gw.MAX_DRAWS // D, 20000)    # the sim's work bounds (random directions: samples*D*M)
if p.get("layout") == "random":
    draws = max(1, min(draws, gw.MAX_FLOPS // (D * M)))
v = gw.sup_samples(family, draws, seed, **p)      # sup over S of g.u, one value per draw of g
print(f"exact width {width:.4f}, Monte Carlo {v.mean():.4f} +- {v.std(ddof=1) / np.sqrt(v.size):.4f}, "
      f"bounds [{lower:.4f}, {upper:.4f}]")
""",
        """
fig = figure(TEXT["fig.x_sup"], TEXT["fig.y_density"])
fig.add_histogram(x=v, histnorm="probability density", name=TEXT["fig.hist_mc"].format(n=v.size),
                  marker_color=COLORS["sim"], opacity=0.6)
if np.isfinite(width):
    fig.add_vline(x=width, line_color=COLORS["exact"], line_width=2.5)
    exact(fig, [width, width], [0, 0], TEXT["fig.exact_mean"])
fig.add_vline(x=v.mean(), line_color=COLORS["sim"], line_dash="dash")
fig.show()

numbers = {"exact": width, "lower": lower, "upper": upper}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
