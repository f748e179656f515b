"""Stopping points inside long computations: a newer request can end a stale one early.

A long public function of :mod:`sim` (a simulation run layer by layer, a sweep point by point)
calls :func:`checkpoint` between chunks of its work. By default that does nothing. An application
may :func:`install` a hook, a callable without arguments that returns normally to let the work go
on or *raises* to stop it; the exception propagates out of the public function, which has then
changed nothing outside itself (no partial result is returned or kept). The app installs a hook
that raises when the user has already asked for a newer run of the page (a held arrow key: each
step supersedes the previous one), so a stale simulation stops after the chunk it is in instead of
running to its end. Results never depend on whether a hook is installed or on the chunk size: a
chunked run performs the same operations in the same order (tested bitwise).

``sim`` stays free of any UI library: the hook is a plain callable. It is called from whichever
thread runs the computation; a hook that only concerns some threads decides that itself.
"""

from __future__ import annotations

from collections.abc import Callable

_hook: Callable[[], None] | None = None

#: work units (pairs x dimensions x layers, ~1-4 ns each in the kernels) per chunk between two
#: checkpoints of a chunked simulation: a few tens of ms, small beside a run, large beside the check
CHUNK_WORK = 2e7


def install(hook: Callable[[], None] | None) -> None:
    """Set the hook :func:`checkpoint` calls (``None``: none, checkpoints do nothing)."""
    global _hook
    _hook = hook


def active() -> bool:
    """True when a hook is installed (a computation may then split its work into chunks)."""
    return _hook is not None


def checkpoint() -> None:
    """Call the installed hook, if any: it returns (go on) or raises (stop the computation)."""
    h = _hook
    if h is not None:
        h()
