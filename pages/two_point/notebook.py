"""Two points: the page's notebook (ui/kit/notebook.py): the half-angle of both flows over depth, the
exact ODE beside the layer map, and the discretisation error against Δ."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/two_point/views.py)."""
    from pages.two_point.views import two_point_data

    d = two_point_data(v["beta"], v["theta0"], v["horizon"], v["dt"])
    return {
        "sa_final": d["SA"]["exact"][-1],
        "usa_final": d["USA"]["exact"][-1],
        "sa_gap": d["SA"]["gap"],
        "usa_gap": d["USA"]["gap"],
        "sa_error": d["err"]["SA"][0],
        "usa_error": d["err"]["USA"][0],
    }


RECIPE = Recipe(
    stem="two_point",
    texts=(
        "fig.x_depth",
        "fig.y_angle",
        "fig.angle_title",
        "fig.sa_exact",
        "fig.usa_exact",
        "fig.sa_sim",
        "fig.usa_sim",
        "fig.x_dt",
        "fig.y_err",
        "fig.error_title",
        "fig.sa_err",
        "fig.usa_err",
    ),
    code=(
        """
from sim import two_point as tp
from sim.attention import simulate

# Two tokens at half-angle theta0; the layer map with step dt, recording at most ~150 layers.
steps = max(int(round(horizon / dt)), 1)
tau_end = steps * dt                      # depth tau = layer index x dt
every = max(1, -(-steps // 150))
fine = np.linspace(0.0, tau_end, 400)
Z0 = tp.initial_pair(theta0)
runs = {}
for flow in ("SA", "USA"):
    traj = simulate(Z0, beta, dt, steps, flow=flow, record_every=every)
    tau = np.arange(traj.shape[0]) * every * dt
    theta = tp.half_angle_of(traj)
    runs[flow] = {"tau": tau, "sim": theta, "exact": tp.half_angle(beta, theta0, fine, flow)}
""",
        """
# The half-angle over depth: the exact ODE (line) and the layer map (markers), same colour per flow.
fig = figure(TEXT["fig.x_depth"], TEXT["fig.y_angle"], TEXT["fig.angle_title"])
for flow, color, symbol in (("SA", COLORS["sa"], "circle"), ("USA", COLORS["usa"], "square")):
    r, key = runs[flow], flow.lower()
    exact(fig, fine, r["exact"], TEXT[f"fig.{key}_exact"], color=color)
    simulated(fig, r["tau"], r["sim"], TEXT[f"fig.{key}_sim"], color=color, symbol=symbol)
fig.show()
""",
        """
# The layer map's largest error over [0, tau_end], every layer (not only the markers above), for
# dt, dt/2, ..., dt/16: first order in dt once dt is small (USA: once dt * e^beta << 1).
dts = dt / 2.0 ** np.arange(5)
err = {flow: tp.discretisation_error(beta, theta0, tau_end, dts, flow) for flow in ("SA", "USA")}
fig = figure(TEXT["fig.x_dt"], TEXT["fig.y_err"], TEXT["fig.error_title"], log_x=True, log_y=True)
for flow, color in (("SA", COLORS["sa"]), ("USA", COLORS["usa"])):
    fig.add_scatter(x=dts, y=err[flow], mode="lines+markers", name=TEXT[f"fig.{flow.lower()}_err"],
                    line=dict(color=color, dash="dash"))
fig.show()

numbers = {"sa_final": runs["SA"]["exact"][-1], "usa_final": runs["USA"]["exact"][-1],
           "sa_gap": err["SA"][0], "usa_gap": err["USA"][0],
           "sa_error": err["SA"][0], "usa_error": err["USA"][0]}
""",
    ),
    expected=expected,
)
