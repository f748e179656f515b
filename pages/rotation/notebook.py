"""Rotation: the page's notebook (ui/kit/notebook.py): the Ornstein–Uhlenbeck model of SGD near a minimum,
the area its path sweeps over SDE time beside the exact mean, and the exact area rate."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/rotation/views.py)."""
    from pages.rotation.views import ou_data

    d = ou_data(v["angle"], v["kappa"], v["noise_ratio"], v["dt"], v["T"], v["seed"])
    return {"rate": d["rate"], "rate_dt": d["rate_dt"], "rate_mc": d["mc"][0], "area_end": d["area"][-1]}


RECIPE = Recipe(
    stem="rotation",
    statement=("intro", "sgd"),
    texts=("fig.x_time", "fig.y_area", "fig.area_title", "fig.area_exact", "fig.area_sim"),
    code=(
        """
import math
from sim import rotation as ro

# H = diag(1, kappa); the noise D has eigenvalues (1, noise_ratio) along axes turned by `angle` degrees.
phi = math.radians(angle)
Q = np.array([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]])
H, D = np.diag([1.0, kappa]), Q @ np.diag([1.0, noise_ratio]) @ Q.T
steps = max(int(round(T / dt)), 1)
path = ro.simulate_ou(H, D, dt, steps, seed)         # Euler-Maruyama, SDE time t = step x dt
inc = ro.area_increments(path)
area = np.concatenate([[0.0], np.cumsum(inc)])
rate, rate_dt = ro.area_rate(H, D), ro.em_area_rate(H, D, dt)     # exact, and exact for the scheme
rate_mc, se = ro.batch_means(inc, dt)
print(f"area rate: exact {rate:.4f}, scheme {rate_dt:.4f}, simulation {rate_mc:.4f} +- {se:.4f}")
""",
        """
k = np.unique(np.linspace(0, area.size - 1, 200).round().astype(int))
fig = figure(TEXT["fig.x_time"], TEXT["fig.y_area"], TEXT["fig.area_title"])
exact(fig, dt * k, rate * dt * k, TEXT["fig.area_exact"])
simulated(fig, dt * k, area[k], TEXT["fig.area_sim"])
fig.show()

numbers = {"rate": rate, "rate_dt": rate_dt, "rate_mc": rate_mc, "area_end": area[-1]}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
