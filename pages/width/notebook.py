"""Width: the page's notebook (ui/kit/notebook.py): one two-layer network trained at width N in both
scalings, the loss over training time beside the frozen-kernel prediction."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/width/views.py)."""
    from pages.width.views import run_data

    key = (v["start"], v["T"], v["dt"], v["data"], v["seed"])
    runs = {s: run_data(v["N"], s, *key) for s in ("lazy", "mean_field")}
    return {
        "loss_lazy": runs["lazy"]["loss"][-1],
        "loss_mean_field": runs["mean_field"]["loss"][-1],
        "kernel_shift": runs[v["scaling"]]["kernel_shift"][-1],
    }


RECIPE = Recipe(
    stem="width",
    texts=(
        "fig.x_time",
        "fig.y_loss",
        "fig.loss_title",
        "fig.lazy_loss",
        "fig.mean_field_loss",
        "fig.lazy_frozen_loss",
        "fig.mean_field_frozen_loss",
    ),
    code=(
        """
import math
from sim import width as W

# The data set, the start (paired or random) and the RK4 step bound the page uses (at most 6e5
# steps*N*M per run: a larger step is taken beyond it).
xs, ys = W.dataset(data)
k = max(1, math.ceil(T / 40 / dt - 1e-9))
k_max = max(1, int(600_000 // (N * xs.size * 40)))
h_max = dt if k <= k_max else T / (40 * k_max)
w0, a0 = (W.paired_init if start == "paired" else W.random_init)(N, seed)
runs = {s: W.train_from(w0, a0, s, T, h_max, xs, ys, record=41) for s in W.SCALINGS}
""",
        """
fig = figure(TEXT["fig.x_time"], TEXT["fig.y_loss"], TEXT["fig.loss_title"].format(N=N), log_y=True)
for s, color in (("lazy", COLORS["sa"]), ("mean_field", COLORS["usa"])):
    r = runs[s]
    exact(fig, r["t"], 0.5 * np.sum(r["frozen"] ** 2, axis=1), TEXT[f"fig.{s}_frozen_loss"], color=color)
    simulated(fig, r["t"], r["loss"], TEXT[f"fig.{s}_loss"], color=color)
fig.show()

numbers = {"loss_lazy": runs["lazy"]["loss"][-1], "loss_mean_field": runs["mean_field"]["loss"][-1],
           "kernel_shift": runs[scaling]["kernel_shift"][-1]}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
