"""Hemisphere clustering: the page's notebook (ui/kit/notebook.py): tokens on a cap around w, the lowest
token height over depth (it never decreases) and the diameter over depth."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/hemisphere/views.py)."""
    from pages.hemisphere.views import hemi_args, hemi_data

    h = hemi_data(*hemi_args(v))
    return {
        "rmin0": h["rmin"][0],
        "rmin_end": h["rmin"][-1],
        "diam0": h["diam"][0],
        "diam_end": h["diam"][-1],
        "layers": h["steps"],
    }


RECIPE = Recipe(
    stem="hemisphere",
    texts=(
        "fig.x_depth_short",
        "fig.y_rmin",
        "fig.rmin_title",
        "fig.rmin_sim",
        "fig.rmin0_line",
        "fig.y_diam",
        "fig.diam_title",
        "fig.diam_sim",
    ),
    code=(
        """
import math
from sim import hemisphere as hs
from sim.attention import simulate

# n tokens uniform on the cap of half-angle `cap` degrees around w = e_d; the layer map with step dt.
# As on the page: at most 4000 layers and 1.5e9 layers*n^2*d (a larger dt reaches the same depth).
Amat = hs.random_matrix(d, A, A_seed)
Z0 = hs.cap_uniform(n, d, math.radians(cap), seed=seed)
steps = max(1, int(round(horizon / dt)))
cap_layers = max(1, min(4000, int(1.5e9 / (n * n * d))))
dt_used = dt if steps <= cap_layers else horizon / cap_layers
steps = min(steps, cap_layers)
records = max(50, min(400, int(1e8 // (n * n * d))))
every = max(1, -(-steps // records))
traj = simulate(Z0, beta, dt_used, steps, A=Amat, record_every=every)
layers = np.arange(traj.shape[0]) * every
if layers[-1] != steps:                                 # the last layer is always kept
    traj = np.concatenate([traj, simulate(traj[-1], beta, dt_used, steps - layers[-1], A=Amat)[-1:]])
    layers = np.append(layers, steps)
tau = layers * dt_used                                  # depth tau = layer index x dt
w = np.eye(d)[-1]
rmin = hs.min_projection(traj, w)
k = np.unique(np.linspace(0, traj.shape[0] - 1, 80).round().astype(int))   # the diameter at 80 layers
diam = hs.pair_stats(traj[k], 0.999).diameter
""",
        """
# The lowest height min_i <w, z_i> over depth: it never decreases while the tokens stay in the hemisphere.
fig = figure(TEXT["fig.x_depth_short"], TEXT["fig.y_rmin"], TEXT["fig.rmin_title"])
simulated(fig, tau, rmin, TEXT["fig.rmin_sim"])
exact(fig, [0, tau[-1]], [rmin[0], rmin[0]], TEXT["fig.rmin0_line"], color=COLORS["ref"], dash="dot")
fig.show()

fig = figure(TEXT["fig.x_depth_short"], TEXT["fig.y_diam"], TEXT["fig.diam_title"], log_y=True)
simulated(fig, tau[k], np.maximum(diam, 1e-16), TEXT["fig.diam_sim"])
fig.show()

numbers = {"rmin0": rmin[0], "rmin_end": rmin[-1], "diam0": diam[0], "diam_end": diam[-1], "layers": steps}
""",
    ),
    expected=expected,
    rtol=1e-7,
    atol=1e-9,
)
