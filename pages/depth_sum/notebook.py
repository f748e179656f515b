"""Sums over depth: the page's notebook (ui/kit/notebook.py): S_L at depth L by Monte Carlo beside its exact
normal density, its variance and P(|S_L| ≤ a)."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/depth_sum/views.py)."""
    from pages.depth_sum.views import at_depth

    d = at_depth(v["alpha"], v["L"], v["sigma"], v["rho"], v["mu"], v["a"], v["trials"], v["seed"])
    return {k: d[k] for k in ("mean", "mean_mc", "var", "var_mc", "p", "p_mc", "n")}


RECIPE = Recipe(
    stem="depth_sum",
    texts=("fig.x_sum", "fig.y_density", "fig.hist_title", "fig.hist_mc", "fig.hist_exact"),
    code=(
        """
import math
from sim import depth_sum as ds

# S_L = L^(-alpha) (Y_1 + ... + Y_L): the draws as on the page (one seed per depth, the same sample count).
n_draws = min(int(trials), max(200, 4_000_000 // L))
if L <= 128:
    n_draws = min(n_draws, max(200, 40_000_000 // (L * L)))
seed_L = int(np.random.SeedSequence([seed, 1, L]).generate_state(1, np.uint64)[0] >> 1)
x = ds.sums_from_units(alpha, L, sigma, *ds.unit_sums(L, n_draws, seed_L), rho, mu)
m, var = ds.mean(alpha, L, mu), ds.variance(alpha, L, sigma, rho)          # exact
p = ds.prob_within(alpha, L, sigma, a, rho, mu)                            # exact P(|S_L| <= a)
print(f"mean {x.mean():.4g} (exact {m:.4g}), variance {np.var(x, ddof=1):.4g} (exact {var:.4g}), "
      f"P(|S_L| <= a) {np.mean(np.abs(x) <= a):.4f} (exact {p:.4f})")
""",
        """
sd = math.sqrt(var)
grid = np.linspace(min(m - 4.5 * sd, x.min()), max(m + 4.5 * sd, x.max()), 400)
fig = figure(TEXT["fig.x_sum"], TEXT["fig.y_density"], TEXT["fig.hist_title"])
fig.add_histogram(x=x, histnorm="probability density", nbinsx=60, name=TEXT["fig.hist_mc"].format(n=x.size),
                  marker_color=COLORS["sim"], opacity=0.6)
exact(fig, grid, np.exp(-0.5 * ((grid - m) / sd) ** 2) / (sd * math.sqrt(2 * math.pi)), TEXT["fig.hist_exact"])
fig.show()

numbers = {"mean": m, "mean_mc": x.mean(), "var": var, "var_mc": np.var(x, ddof=1), "p": p,
           "p_mc": np.mean(np.abs(x) <= a), "n": x.size}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
