"""Coordinates: the page's notebook (ui/kit/notebook.py): θ = a·b over training time for the Euclidean and
the pulled-back metric (exact), and the Euclidean path on its hyperbola."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/coordinates/views.py)."""
    from pages.coordinates.views import metric_data

    d = metric_data(v["a0"], v["b0"], v["y"], v["horizon"], v["dt"])
    return {
        "theta_euclidean": d["theta"]["euclidean"][-1],
        "theta_pullback": d["theta"]["pullback"][-1],
        "c": d["c"],
        "t_end": d["t_end"],
    }


RECIPE = Recipe(
    stem="coordinates",
    statement=("intro", "metric"),
    texts=(
        "fig.x_train",
        "fig.y_theta",
        "fig.theta_title",
        "fig.target",
        "fig.euclidean_exact",
        "fig.pullback_exact",
        "fig.x_a",
        "fig.y_b",
        "fig.ab_title",
    ),
    code=(
        """
from sim import coordinates as co

# f(a, b) = (ab - y)^2 / 2 by gradient flow in training time t, in two metrics.
steps = max(int(round(horizon / dt)), 1)
t_end = steps * dt
t = np.linspace(0.0, t_end, 400)
theta = {m: co.theta_flow(a0, b0, y, t, m) for m in ("euclidean", "pullback")}
# A start on a diagonal (a0 = ±b0) stays on it; if theta = ab must pass 0 to reach y, the pulled-back
# flow reaches the saddle a = b = 0 at t = ln((y - ab0)/y) and is undefined after it (the page stops
# its curve there); the Euclidean flow stops at the saddle.
if a0 * a0 - b0 * b0 == 0.0 and y != 0.0 and a0 * b0 * y <= 0.0:
    t_saddle = math.log((y - a0 * b0) / y)
    theta["pullback"] = np.where(t <= t_saddle, theta["pullback"], np.nan)
ab = co.ab_flow(a0, b0, y, t)                  # the Euclidean path; a^2 - b^2 stays a0^2 - b0^2
""",
        """
fig = figure(TEXT["fig.x_train"], TEXT["fig.y_theta"], TEXT["fig.theta_title"])
exact(fig, t, theta["euclidean"], TEXT["fig.euclidean_exact"], color=COLORS["sa"])
exact(fig, t, theta["pullback"], TEXT["fig.pullback_exact"], color=COLORS["usa"])
exact(fig, [0, t_end], [y, y], TEXT["fig.target"], color=COLORS["ref"], dash="dot")
fig.show()

fig = figure(TEXT["fig.x_a"], TEXT["fig.y_b"], TEXT["fig.ab_title"])
exact(fig, ab[:, 0], ab[:, 1], TEXT["fig.euclidean_exact"], color=COLORS["sa"])
fig.show()

numbers = {"theta_euclidean": theta["euclidean"][-1], "theta_pullback": theta["pullback"][-1],
           "c": a0 * a0 - b0 * b0, "t_end": t_end}
""",
    ),
    expected=expected,
)
