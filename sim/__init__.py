"""Numerics for "Tokens on the Sphere".

Pure NumPy/SciPy/Numba: nothing here imports streamlit or plotly, so every
function can be tested, benchmarked and called from outside the app.
One module per construction (see ``../shared/CONSTRUCTIONS.md``):

- :mod:`sim.attention`      the discrete attention layer map on the sphere
- :mod:`sim.two_point`      two points, SA vs USA (reduced ODE, energy)
- :mod:`sim.hemisphere`     hemisphere clustering diagnostics
- :mod:`sim.gaussian_width` Gaussian width: exact values, bounds, Monte Carlo
- :mod:`sim.nonnormal`      non-normal transient growth
- :mod:`sim.depth_sum`      how per-layer pieces add up over depth
"""
