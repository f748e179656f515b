"""The check that parallel Numba kernels survive being called from several threads at once.

Streamlit runs sessions in threads; Numba's ``workqueue`` fallback threading layer aborts the
process then (omp and tbb are thread-safe). :func:`concurrent_kernels_script` is the Python source
of that check, run in a fresh interpreter by ``tests/test_security_serve.py`` and, inside the built
image, by ``scripts/image_check.sh`` (``python -m bench.numba_threads`` prints it). Its last line
of output is ``LAYER <threading layer>``.
"""

from __future__ import annotations

import sys


def concurrent_kernels_script(
    prelude: str = "", size: int = 200_000, loops: int = 5, threads: int = 4, cache: bool = False
) -> str:
    """``prelude`` runs first (e.g. ``import ui.server.serve``, which picks a thread-safe layer)."""
    return f"""
import threading, numba, numpy as np
{prelude}
@numba.njit(parallel=True, nogil=True, cache={cache!r})
def f(x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += np.sin(x[i])
    return s
x = np.random.default_rng(0).random({size})
f(x)
def work():
    for _ in range({loops}):
        f(x)
ts = [threading.Thread(target=work) for _ in range({threads})]
[t.start() for t in ts]
[t.join() for t in ts]
print("LAYER", numba.threading_layer())
"""


if __name__ == "__main__":  # python -m bench.numba_threads [SIZE LOOPS]: the script, for image_check.sh
    args = [int(a) for a in sys.argv[1:3]]
    sys.stdout.write(concurrent_kernels_script("", *args))
