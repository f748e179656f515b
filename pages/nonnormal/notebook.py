"""Non-normal growth: the page's notebook (ui/kit/notebook.py): responses ‖e^{sA}x₀‖ for unit x₀, the
envelope ‖e^{sA}‖₂, the eigenvalue-only prediction e^{-s} and the peak."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/nonnormal/views.py)."""
    from pages.nonnormal.views import flow_data

    f = flow_data(v["M"], v["s_max"])
    return {"s_star": f["s_star"], "peak": f["peak"], "e2_at_1": f["e2_at_1"], "norm_end": f["norm"][-1]}


RECIPE = Recipe(
    stem="nonnormal",
    texts=("fig.x_s", "fig.y_norm", "fig.response_title", "fig.resp_dir", "fig.envelope", "fig.eig_only", "fig.peak"),
    code=(
        """
import math
from sim import nonnormal as nn

# A = [[-1, M], [0, -1]]: both eigenvalues -1, yet ||e^{sA}|| first grows when |M| > 2.
s = np.linspace(0.0, s_max, 400)                       # operator time s (not depth, not training time)
angles = np.arange(6) * np.pi / 6
resp = [np.linalg.norm(nn.response(M, s, np.array([np.cos(a), np.sin(a)])), axis=1) for a in angles]
envelope = nn.operator_norm(M, s)
s_star, peak = nn.peak(M)
""",
        """
fig = figure(TEXT["fig.x_s"], TEXT["fig.y_norm"], TEXT["fig.response_title"])
for a, r in zip(angles, resp):
    exact(fig, s, r, TEXT["fig.resp_dir"].format(deg=f"{math.degrees(a):.0f}"), color=COLORS["sky"], width=1.2)
exact(fig, s, envelope, TEXT["fig.envelope"], color=COLORS["exact"])
exact(fig, s, np.exp(-s), TEXT["fig.eig_only"], color=COLORS["ref"], dash="dot")
simulated(fig, [s_star], [peak], TEXT["fig.peak"], color=COLORS["black"], symbol="star")
fig.show()

numbers = {"s_star": s_star, "peak": peak, "e2_at_1": math.exp(-1.0) * math.sqrt(1.0 + M * M),
           "norm_end": envelope[-1]}
""",
    ),
    expected=expected,
)
