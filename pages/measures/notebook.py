"""From tokens to a measure: the page's notebook (ui/kit/notebook.py): W₁ between n tokens and a large
reference system over depth, with its bound e^{Cτ} W₁(0)."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/measures/views.py)."""
    from pages.measures.views import stability_data

    s = stability_data(v["n"], v["beta"], v["depth"], v["dt"], v["seed"])
    return {"w1_start": s["w1"][0], "w1_end": s["w1"][-1], "C": s["C"], "tau_star": s["tau_star"]}


RECIPE = Recipe(
    stem="measures",
    texts=("fig.x_depth", "fig.y_w1", "fig.w1_title", "fig.bound", "fig.diameter", "fig.w1_sim"),
    code=(
        """
import math
from sim import measures as ms

# n tokens and a reference system of 1024 tokens on the circle, both run through the same layers.
r = ms.stability(n, beta, depth, dt, seed, n_ref=1024, max_records=101)
t = r["t"]                                   # depth tau = layer index x dt
tau_star = math.log(math.pi / r["w1"][0]) / r["C"]    # where the bound reaches pi
fine = np.linspace(0.0, min(tau_star, t[-1]), 300)
""",
        """
fig = figure(TEXT["fig.x_depth"], TEXT["fig.y_w1"], TEXT["fig.w1_title"], log_y=True)
exact(fig, fine, np.minimum(np.exp(r["C"] * fine) * r["w1"][0], math.pi), TEXT["fig.bound"], color=COLORS["bound"])
exact(fig, [0, t[-1]], [math.pi, math.pi], TEXT["fig.diameter"], color=COLORS["ref"], dash="dot")
simulated(fig, t, r["w1"], TEXT["fig.w1_sim"])
fig.show()

numbers = {"w1_start": r["w1"][0], "w1_end": r["w1"][-1], "C": r["C"], "tau_star": tau_star}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
