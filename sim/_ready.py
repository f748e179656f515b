"""Which kernel modules of :mod:`sim` may call their Numba kernels now.

By default every module is ready: a kernel is compiled (or loaded from the on-disk cache) on its
first call, as Numba does. The server (``python -m ui.server.serve``) instead starts answering at once
and compiles the kernels in the background (:func:`sim.warm.start_background`); until a module's
kernels are loaded in the server process that module is *pending*, and its public functions take
their plain NumPy reference path, which returns the same numbers (each pair is tested equal), so
no student waits for a compilation. One check is a set lookup.
"""

from __future__ import annotations

import threading

_pending: set[str] = set()
_lock = threading.Lock()
_changed = threading.Condition(_lock)


def ready(module: str) -> bool:
    """True when the kernels of ``sim.<module>`` may be called (not being compiled in the background)."""
    return module not in _pending


def mark_pending(modules) -> None:
    """Mark ``modules`` (short names, e.g. ``"attention"``) as compiling in the background."""
    with _lock:
        _pending.update(modules)


def mark_ready(module: str) -> None:
    """The kernels of ``sim.<module>`` are loaded in this process: use them from now on."""
    with _lock:
        _pending.discard(module)
        _changed.notify_all()


def pending() -> frozenset[str]:
    """The modules still compiling (empty when everything is ready)."""
    with _lock:
        return frozenset(_pending)


def wait(timeout: float | None = None) -> bool:
    """Block until no module is pending (or ``timeout`` seconds); True when all are ready."""
    with _lock:
        return _changed.wait_for(lambda: not _pending, timeout)
