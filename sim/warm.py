"""Compile or load every Numba kernel once: ``python -m sim.warm``.

Each module of :mod:`sim` that owns kernels defines ``warm()``, which calls
them on tiny inputs. Running this at server start (and at Docker build time,
with ``NUMBA_CACHE_DIR`` on a writable path) moves compilation out of the
first student's click.
"""
from __future__ import annotations

import importlib
import pkgutil
import time

import sim


def warm(verbose: bool = False) -> dict[str, float]:
    """Call ``warm()`` of every :mod:`sim` module; return seconds per module."""
    times = {}
    for info in sorted(pkgutil.iter_modules(sim.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "warm":
            continue
        t0 = time.perf_counter()
        mod = importlib.import_module(f"sim.{info.name}")
        fn = getattr(mod, "warm", None)
        if callable(fn):
            fn()
        times[info.name] = time.perf_counter() - t0
        if verbose:
            print(f"  sim.{info.name:<16s} {times[info.name]:6.2f} s")
    return times


if __name__ == "__main__":
    t0 = time.perf_counter()
    warm(verbose=True)
    print(f"warmed all sim kernels in {time.perf_counter() - t0:.2f} s")
