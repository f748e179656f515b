"""Numerics for "Tokens on the Sphere".

Pure NumPy/SciPy/Numba: nothing here imports streamlit or plotly, so every
function can be tested, benchmarked and called from outside the app.
One module per construction (what each computes: ``docs/constructions.md``):

- :mod:`sim.attention`      the discrete attention layer map on the sphere
- :mod:`sim.two_point`      two points, SA vs USA (reduced ODE, energy)
- :mod:`sim.hemisphere`     hemisphere clustering diagnostics
- :mod:`sim.gaussian_width` Gaussian width: exact values, bounds, Monte Carlo
- :mod:`sim.nonnormal`      non-normal transient growth
- :mod:`sim.depth_sum`      how per-layer pieces add up over depth
- :mod:`sim.block`          inside a block: RoPE, RMSNorm, splitting, equivariance, sinks
"""

import os as _os

# Numba's OpenMP threads spin-wait after every parallel region by default. In a server
# where many sessions (and other processes) share two cores, that spinning steals the
# CPU from the other calls: the slowest calls become many times slower, the median does not
# change. Must be set before
# the first parallel kernel starts the OpenMP runtime; an explicit setting wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
