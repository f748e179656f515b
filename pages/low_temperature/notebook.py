"""Low temperature: the page's notebook (ui/kit/notebook.py): W₂ between the tokens and the projected
start Π♯ρ₀ over depth, for three inverse temperatures and several seeds."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/low_temperature/views.py)."""
    from pages.low_temperature.views import lowtemp_data

    d = lowtemp_data(v["model"], v["gap"], v["log10_beta"], v["n"], v["seeds"], v["T"], v["dt"])
    return {"w2_min": d["w2"][-1].mean(0).min(), "w2_end": d["w2"][:, :, -1].mean(axis=1)[-1], "layers": d["steps"]}


RECIPE = Recipe(
    stem="low_temperature",
    texts=("fig.x_depth", "fig.y_w2", "fig.w2_title", "fig.w2_mean"),
    code=(
        """
from sim import low_temperature as lt

# The model's key and value matrices (S = V B^T symmetric, spectral gap `gap`), as on the page.
if model == "axis":
    B, V = np.eye(3), np.diag([1.0, 1.0 - gap, 1.0 - gap])
elif model == "plane":
    B, V = np.eye(3), np.diag([1.0, 1.0, 1.0 - gap])
else:  # "drift"
    B, V = np.diag([1.0, (1.0 + gap) / 0.9, 1.0]), np.diag([1.0, 0.9, 0.5])
betas = 10.0 ** log10_beta * np.array([0.01, 0.1, 1.0])
runs = betas.size * seeds
# The page's work bounds: at most 2e7 layers*n^2 over all runs (then a larger dt reaches depth T),
# and 21 recorded depths (fewer for large n: one exact W2 is an O(n^3) assignment).
steps = max(1, round(T / dt))
cap_layers = max(1, int(2e7 / (runs * n * n)))
dt_used = dt if steps <= cap_layers else T / cap_layers
steps = min(steps, cap_layers)
record = min(max(11, min(21, int(1.5e8 / (runs * float(n) ** 3)))), steps + 1)
w2 = np.empty((betas.size, seeds, record))
for b, beta in enumerate(betas):
    for s in range(seeds):
        r = lt.run(n, beta, B, V, steps * dt_used, dt_used, s, record=record)
        w2[b, s] = r["w2"]
tau = r["t"]                                  # depth tau = layer index x dt
""",
        """
fig = figure(TEXT["fig.x_depth"], TEXT["fig.y_w2"], TEXT["fig.w2_title"], log_y=True)
for beta, color, w in zip(betas, (COLORS["other"], COLORS["accent"], COLORS["sa"]), w2):
    exact(fig, tau, w.mean(axis=0), TEXT["fig.w2_mean"].format(beta=f"β = {beta:.4g}"), color=color)
fig.show()

numbers = {"w2_min": w2[-1].mean(0).min(), "w2_end": w2[-1, :, -1].mean(), "layers": steps}
""",
    ),
    expected=expected,
    rtol=1e-7,
    atol=1e-9,
)
