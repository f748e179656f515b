"""Inside a block: the page's notebook (ui/kit/notebook.py): the attention sink, its weight c(N) among N
tokens (closed form) beside the weight read off a causal softmax layer, and its capacity N_max."""

from __future__ import annotations

from ui.kit.notebook import Recipe


def expected(v: dict) -> dict:
    """The page's headline numbers (pages/block/views.py, the sink tab)."""
    from pages.block.views import sink_data

    k = sink_data(v["sink_delta"], v["sink_share"])
    g = v["sink_delta"]
    return {"nmax": k["nmax"][g], "mass_at_1000": k["layer"][g][-1], "gap_needed": k["gap_for_1000"]}


RECIPE = Recipe(
    stem="block",
    statement=("intro", "sink"),
    texts=("fig.x_tokens", "fig.y_mass", "fig.sink_title", "fig.mass_exact", "fig.mass_layer"),
    code=(
        """
from sim import block as bk

# One token (the sink) scores sink_delta above each of the other N - 1 tokens.
N = np.logspace(0.0, 6.0, 300)
mass = bk.sink_mass(sink_delta, N)                          # exact c(N)
nmax = bk.sink_capacity(sink_delta, sink_share)             # largest N keeping the share sink_share
marker_N = (2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)
layer = []
for m in marker_N:                                          # the same weight from a causal softmax layer
    Z, A, V = bk.sink_example(sink_delta, m)
    layer.append(bk.attention(Z, A, V, 1.0, causal=True)[-1, 2])
""",
        """
fig = figure(TEXT["fig.x_tokens"], TEXT["fig.y_mass"], TEXT["fig.sink_title"].format(c=f"{sink_share:g}"), log_x=True)
exact(fig, N, mass, TEXT["fig.mass_exact"].format(delta=f"{sink_delta:g}"))
simulated(fig, marker_N, layer, TEXT["fig.mass_layer"])
fig.add_vline(x=nmax, line_dash="dash", line_color=COLORS["ref"])
fig.show()

numbers = {"nmax": nmax, "mass_at_1000": layer[-1],
           "gap_needed": np.log(sink_share / (1.0 - sink_share) * 999.0)}
""",
    ),
    expected=expected,
    rtol=1e-9,
    atol=1e-12,
)
