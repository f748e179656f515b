"""Fill the Numba on-disk cache (NUMBA_CACHE_DIR) before the app serves.

Used at image build time (Dockerfile) so the first student's first rerun does
not pay for JIT compilation.  If the project provides ``sim/warm.py``, that is the authority and runs
as ``python -m sim.warm`` would.
Otherwise every module of the ``sim`` package is imported.  In both cases
``sim.attention.simulate`` then runs on a tiny input for both flows (the call
``scripts/image_check.sh`` times in a fresh process).  A missing module is
reported and skipped; an error inside an existing module fails the build.

Prints one line per step and the total time.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import runpy
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _import_all() -> None:
    import sim

    for info in pkgutil.iter_modules(sim.__path__):
        name = f"sim.{info.name}"
        t = time.perf_counter()
        importlib.import_module(name)
        print(f"warm: import {name} {time.perf_counter() - t:.2f} s", flush=True)


def _simulate_tiny() -> None:
    """The call the image check times: sim.attention.simulate on 3 points."""
    try:
        attention = importlib.import_module("sim.attention")
    except ModuleNotFoundError as exc:
        if exc.name not in ("sim", "sim.attention"):
            raise
        print(f"warm: no sim.attention ({exc}); nothing to compile", flush=True)
        return
    import numpy as np

    z0 = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8], [0.0, 0.0, 1.0]])
    for flow in ("SA", "USA"):
        t = time.perf_counter()
        attention.simulate(z0, 1.0, 0.1, 4, flow=flow)
        print(f"warm: sim.attention.simulate(3 points, flow={flow}) {time.perf_counter() - t:.2f} s", flush=True)


def main() -> int:
    t0 = time.perf_counter()
    print(f"warm: NUMBA_CACHE_DIR={os.environ.get('NUMBA_CACHE_DIR', '(unset: __pycache__)')}", flush=True)
    if importlib.util.find_spec("sim.warm") is not None:
        # Exactly what `python -m sim.warm` does.
        print("warm: running sim.warm", flush=True)
        try:
            runpy.run_module("sim.warm", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                return exc.code if isinstance(exc.code, int) else 1
    else:
        _import_all()
    _simulate_tiny()
    print(f"warm: done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
