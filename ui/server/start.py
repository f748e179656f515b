"""Start the served process: the environment before NumPy and Numba load (a thread-safe Numba
threading layer, one OpenBLAS thread), the checks that stop a misconfigured server at start (no safe
threading layer, a weak instructor key), then the adapters to Streamlit's internals and
``streamlit run app.py`` (:func:`main`). ``python -m ui.server.serve`` and ``python -m ui.server``
call :func:`main`; the fixes it installs are listed in ``ui/server/serve.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: threading layers that tolerate kernels launched from several threads at once
SAFE_LAYERS = ("threadsafe", "omp", "tbb")
LAYER_ENV = "NUMBA_THREADING_LAYER"


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
#: product cost many times more CPU with its default threads than with one. The server's parallelism
#: is its sessions (and Numba's pool), not BLAS.
BLAS_ENV = "OPENBLAS_NUM_THREADS"


def single_thread_blas(environ=os.environ) -> str:
    """One OpenBLAS thread unless the environment says otherwise; must run before NumPy loads."""
    environ.setdefault(BLAS_ENV, "1")
    return environ[BLAS_ENV]


# At import of this module: ``python -m ui.server.serve`` imports nothing else before it (ui/__init__ is
# a docstring), so the variables are in place before streamlit, the app or sim/ import numba/numpy.
safe_threading_layer()
single_thread_blas()


APP = Path(__file__).resolve().parents[2] / "app.py"


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
        sys.exit(
            f"ui.server.serve: no thread-safe Numba threading layer ({LAYER_ENV}="
            f"{os.environ.get(LAYER_ENV)}): {exc}\nInstall OpenMP (Debian: libgomp1) or "
            f"`pip install tbb`; the 'workqueue' layer crashes the server when sessions "
            f"run parallel kernels at the same time."
        )
    return numba.threading_layer()


def _secrets_from_files(name: str, root: Path | None = None) -> dict | None:
    """Section ``name`` of the secrets files, read as Streamlit would (``~/.streamlit/secrets.toml``,
    then the app's ``.streamlit/secrets.toml`` over it), without asking ``st.secrets``: read before
    Streamlit has started, ``st.secrets`` loads Streamlit's configuration early, and its file watcher
    then reports a false "update to the [server] config option section" at every start."""
    import tomllib

    found = None
    for path in (Path.home() / ".streamlit" / "secrets.toml", (root or APP.parent) / ".streamlit" / "secrets.toml"):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        if isinstance(data.get(name), dict):
            found = {**(found or {}), **data[name]}
    return found


def check_key_strength(environ=os.environ) -> None:
    """Stop the server at start when the configured instructor key is short or guessable."""
    from ui.teaching.signin import MAKE_KEY, weak_key
    from ui.teaching.signin import configured_key

    key = configured_key(environ, secrets=_secrets_from_files)
    why = weak_key(key) if key else None
    if why:
        sys.exit(
            f"ui.server.serve: the instructor key (APP_INSTRUCTOR_KEY or [instructor] key in "
            f".streamlit/secrets.toml) is refused: {why}. Make a strong one with\n"
            f"    {MAKE_KEY}\nand set it again."
        )


def main(argv: list[str] | None = None) -> None:
    """Set up, check and install everything, then run ``streamlit run app.py [argv]``."""
    safe_threading_layer()
    from ui import streamlit_internals

    streamlit_internals.check_version()  # an unverified Streamlit stops here (APP_STREAMLIT_UNVERIFIED=1: warns)
    from sim.warm import choose_target, start_background

    choose_target()  # an image's cache on another CPU type: its portable kernels (before numba loads)
    check_threading_layer()

    from ui.server import adapters, prepare

    prepare.start()  # app and page modules imported in the background, before the first visit
    # kernels compile in child processes (pages use NumPy paths until then), then load here
    start_background(on_ready=prepare.load_kernels)
    adapters.install_all()
    check_key_strength()
    os.environ.setdefault("STREAMLIT_SERVER_MAX_WIDGET_STATE_SIZE", "1")  # MB, after parsing too
    args = sys.argv[1:] if argv is None else argv
    streamlit_internals.run_cli(["run", str(APP), *args])
