"""Benchmark: CPU cost of one view of the page "Low temperature" (a slider move, cache cold).

Run with ``.venv/bin/python bench/low_temperature.py``. For the defaults, the presets and the
corners of the hard limits, prints the CPU time (``time.process_time``, all threads) of the
page's two adapters (three β × seeds runs of :func:`sim.low_temperature.run`, each with exact
W2 by optimal assignment and the zero-temperature layer map; the β sweep at depth 1) and of
its four figures, plus the layers and Δ actually used (``pages.low_temperature.views.plan``).
No Numba kernel of its own: the layers are :func:`sim.attention.simulate`, benchmarked in
``bench/engine.py``. Not a test.
"""

from __future__ import annotations

import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
logging.getLogger("streamlit").setLevel(logging.ERROR)

from ui.kit.i18n import Text  # noqa: E402
from pages.low_temperature import views as vw  # noqa: E402
from pages.low_temperature import figures as fw  # noqa: E402

VIEWS = {
    "defaults": ("axis", 0.5, 3.0, 48, 3, 20.0, 0.1),
    "preset hot": ("axis", 0.5, 1.0, 48, 3, 20.0, 0.1),
    "preset great_circle": ("plane", 0.5, 3.0, 48, 3, 30.0, 0.1),
    "preset drift": ("drift", 0.8, 2.0, 64, 3, 30.0, 0.1),
    "limits n,seeds,T max dt min": ("axis", 0.45, 3.0, 128, 5, 30.0, 0.05),
    "limits n,seeds max dt max": ("plane", 0.55, 4.0, 128, 5, 30.0, 0.25),
    "limits n max, 1 seed": ("drift", 0.65, 4.0, 128, 1, 30.0, 0.05),
}


def main() -> None:
    t = Text("low_temperature", "en")
    vw.lowtemp_data("axis", 0.3, 1.0, 16, 1, 2.0, 0.1)  # load the engine's kernels first
    print(f"{'view':30s} {'layers':>6s} {'Δ used':>7s} {'data s':>7s} {'sweep s':>7s} {'figs s':>7s} {'total s':>7s}")
    for name, v in VIEWS.items():
        rv = (v[0], v[1], v[3], v[4], v[6])
        c0 = time.process_time()
        d = vw.lowtemp_data(*v)
        c1 = time.process_time()
        vw.rate_data(*rv)
        c2 = time.process_time()
        fw.scene_figure(t, *v), fw.w2_figure(t, *v), fw.dist_figure(t, *v), fw.rate_figure(t, *rv)
        c3 = time.process_time()
        print(f"{name:30s} {d['steps']:6d} {d['dt']:7.3g} {c1 - c0:7.3f} {c2 - c1:7.3f} {c3 - c2:7.3f} {c3 - c0:7.3f}")


if __name__ == "__main__":
    main()
