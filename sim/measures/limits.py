"""The bounds of :mod:`sim.measures`: work limits checked before any work starts, and the exact
arithmetic's reach."""

from __future__ import annotations

import math

TWO_PI = 2.0 * math.pi
#: angles beyond this size are rejected: float64 spacing there is > 1e-7 rad, so "mod 2π" is noise
MAX_ANGLE = 1e9
#: default bound on the number of points handled by one W₁ call
MAX_POINTS = 20_000_000
#: default bound on trials * n (sampling_error)
MAX_SAMPLES = 50_000_000
#: default bound on trials * H * n * n * d (head_average_error)
MAX_HEAD_WORK = 2e9
#: default bound on steps * n_ref * n_ref (stability)
MAX_STABILITY_WORK = 4e9
#: largest n for which fixed_shift_mean uses exact rational arithmetic (above: a 1e-10 quadrature)
EXACT_IRWIN_HALL_MAX = 1024
