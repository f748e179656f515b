"""Serve the app: ``python -m ui.serve [options]`` is ``streamlit run app.py [options]`` plus four fixes.

1. **Routing.** Streamlit treats an app with a folder named ``pages/`` beside its main script as a
   legacy (v1) multipage app until some session has executed ``st.navigation`` — a process-wide
   flag decided when the first session starts. The first visitor after a server start therefore ran
   in legacy mode: a deep link ran the page script without app.py, and that session's widget ids
   came from the legacy run, so its first interaction (a slider, the language switch) was silently
   dropped. This app always routes with ``st.navigation``, so the flag is cleared before the server
   starts. (Checked against the pinned streamlit 1.67; ``ui.page`` keeps a fallback for a plain
   ``streamlit run``.)
2. **No cache clearing from the network.** Any websocket client can send the ``clear_cache``
   BackMsg (the "Clear caches" menu item; ``toolbarMode = "viewer"`` only hides the item): the
   server then empties ``st.cache_data`` and ``st.cache_resource`` for *every* session, and the
   whole class pays the cold cost again. The served process refuses it (a warning in the server
   log) unless the development setting ``APP_ALLOW_CLEAR_CACHE=1`` is in its environment.
3. **A thread-safe Numba threading layer.** Several sessions call parallel kernels at once; Numba's
   ``workqueue`` layer (its fallback when neither OpenMP nor TBB loads) aborts the process on
   concurrent use. ``NUMBA_THREADING_LAYER`` is set to ``threadsafe`` (OpenMP or TBB, whichever
   loads) before anything imports numba, and a missing safe layer stops the server at start with
   a message instead of crashing it under load.

4. **No wait for kernel compilation.** The server answers at once; the Numba kernels are compiled
   (or loaded from the on-disk cache) by low-priority child processes, and each is loaded into the
   server from the cache by its first call once its module is ready
   (:func:`sim.warm.start_background`); until then ``sim.attention``, ``sim.depth_sum`` and
   ``sim.width`` take their NumPy reference paths, which give the same numbers.

``make run``, the Docker image, the tests and the benchmarks all start the server this way.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

#: threading layers that tolerate kernels launched from several threads at once
SAFE_LAYERS = ("threadsafe", "omp", "tbb")
LAYER_ENV = "NUMBA_THREADING_LAYER"
#: the development setting that lets a client clear the server's caches
ALLOW_CLEAR_ENV = "APP_ALLOW_CLEAR_CACHE"


def safe_threading_layer(environ=os.environ) -> str:
    """Put a thread-safe ``NUMBA_THREADING_LAYER`` into ``environ`` and return it.

    An explicit safe choice (``omp``, ``tbb``, ``threadsafe``) is kept; anything else (unset,
    ``workqueue``, ``default``, ``safe``…) becomes ``threadsafe``. Must run before numba is
    imported: numba reads the variable once, at import.
    """
    cur = environ.get(LAYER_ENV, "").strip().lower()
    if cur not in SAFE_LAYERS:
        environ[LAYER_ENV] = "threadsafe"
    return environ[LAYER_ENV]


#: OpenBLAS's worker threads busy-wait: with every core already running sessions, a small matrix
#: product cost many times more CPU with its default threads than with one. The server's parallelism is its sessions (and Numba's pool), not BLAS.
BLAS_ENV = "OPENBLAS_NUM_THREADS"


def single_thread_blas(environ=os.environ) -> str:
    """One OpenBLAS thread unless the environment says otherwise; must run before NumPy loads."""
    environ.setdefault(BLAS_ENV, "1")
    return environ[BLAS_ENV]


# At import of this module: ``python -m ui.serve`` imports nothing else before it (ui/__init__ is
# a docstring), so the variables are in place before streamlit, the app or sim/ import numba/numpy.
safe_threading_layer()
single_thread_blas()

APP = Path(__file__).resolve().parent.parent / "app.py"


def clear_cache_allowed(environ=os.environ) -> bool:
    """True when the development setting allows clients to clear the server's caches."""
    return environ.get(ALLOW_CLEAR_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def refuse_clear_cache() -> None:
    """Make the websocket ``clear_cache`` message a logged no-op in this process."""
    import logging

    from streamlit.runtime.app_session import AppSession

    if getattr(AppSession._handle_clear_cache_request, "_refused", False):
        return
    log = logging.getLogger("ui.serve")

    def _refused(self) -> None:
        log.warning("refused a clear_cache request from session %s (set %s=1 to allow it while "
                    "developing)", getattr(self, "id", "?"), ALLOW_CLEAR_ENV)

    _refused._refused = True  # type: ignore[attr-defined]
    AppSession._handle_clear_cache_request = _refused


def check_threading_layer() -> str:
    """Load the configured layer now; exit with a message if none loads.

    Numba's own loader (``numba.np.ufunc.parallel._launch_threads``, what the first parallel kernel
    calls) is quick; compiling a tiny parallel kernel to the same end cost far more CPU at every
    start, so that is only the fallback for a Numba without that function."""
    import numba

    def _probe_compiled():
        import numpy as np

        @numba.njit(parallel=True, cache=False)
        def _probe(x):
            s = 0.0
            for i in numba.prange(x.size):
                s += x[i]
            return s

        _probe(np.ones(4))

    try:
        from numba.np.ufunc import parallel
        launch = getattr(parallel, "_launch_threads", None) or _probe_compiled
        launch()
    except Exception as exc:  # noqa: BLE001 - numba raises ValueError/ImportError variants
        sys.exit(f"ui.serve: no thread-safe Numba threading layer ({LAYER_ENV}="
                 f"{os.environ.get(LAYER_ENV)}): {exc}\nInstall OpenMP (Debian: libgomp1) or "
                 f"`pip install tbb`; the 'workqueue' layer crashes the server when sessions "
                 f"run parallel kernels at the same time.")
    return numba.threading_layer()


def main(argv: list[str] | None = None) -> None:
    safe_threading_layer()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    check_threading_layer()
    from sim.warm import start_background

    start_background()  # kernels compile in child processes; pages use NumPy paths until then
    PagesManager.uses_pages_directory = False
    if not clear_cache_allowed():
        refuse_clear_cache()
    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
