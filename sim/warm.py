"""Compile or load every Numba kernel: ``python -m sim.warm [--jobs N] [--only a,b]``.

Each module of :mod:`sim` that owns kernels defines ``warm()``, which calls them on tiny inputs
(compiling them into Numba's on-disk cache, or loading them from it).

- ``python -m sim.warm`` (``make warm``, ``make test``, the Docker build) fills the cache, with the
  modules spread over ``--jobs`` child processes (default: one per core; the attention kernels
  alone are most of the work, so two processes take about as long as attention alone).
- The server (``python -m ui.server.serve``) does not wait for it: :func:`start_background` marks every
  module *pending* (:mod:`sim._ready`), runs the same child processes at low priority, and marks a
  module ready as soon as its child has written the cache (each kernel is then loaded from the
  cache by its first call in the server). While a module is pending its hooked public functions
  take their NumPy reference path (the same numbers), so the first student never waits for a
  compilation, and a later start (cache current) answers at once.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import logging
import os
import pkgutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import sim
from sim import _ready

log = logging.getLogger("sim.warm")

#: relative cost of compiling each module's kernels (compile seconds, roughly; only the order
#: matters: the largest first, each to the least loaded process)
COST = {
    "attention": 30.0,
    "depth_sum": 3.0,
    "width": 2.0,
    "hemisphere": 1.5,
    "measures": 1.0,
    "gaussian_width": 1.0,
    "nonnormal": 1.0,
    "rotation": 0.3,
}
#: what a child process prints after each module (parsed by :func:`start_background`)
READY_LINE = "sim.warm: ready "
#: what the server prints (stderr) once every module's cache is current (bench/first_run.py waits for it)
READY_ALL = "sim.warm: every kernel ready"
ROOT = Path(sim.__file__).resolve().parent.parent

_background: threading.Thread | None = None
_children: list[subprocess.Popen] = []
_failed: set[str] = set()  # modules whose child process did not make their cache current


def modules() -> list[str]:
    r"""The short names of the :mod:`sim` modules (without importing them).

    Returns
    -------
    list of str
        E.g. ``["attention", "two_point", ...]``.
    """
    return sorted(m.name for m in pkgutil.iter_modules(sim.__path__) if not m.name.startswith("_") and m.name != "warm")


def plan(jobs: int, names: list[str] | None = None) -> list[list[str]]:
    r"""Split ``names`` over at most ``jobs`` processes: the costliest first, each to the least loaded
    (modules without kernels cost nothing). Every name appears exactly once; no group is empty.

    Parameters
    ----------
    jobs : int
        Processes available, :math:`\ge 1`.
    names : list of str, optional
        Module names (default: :func:`modules`).

    Returns
    -------
    list of list of str
        One list of module names per process.
    """
    names = modules() if names is None else list(names)
    jobs = max(1, min(int(jobs), len(names)))
    groups: list[list[str]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for name in sorted(names, key=lambda n: (-COST.get(n, 0.0), n)):
        i = min(range(jobs), key=lambda k: (load[k], len(groups[k])))
        groups[i].append(name)
        load[i] += COST.get(name, 0.0)
    return [g for g in groups if g]


def warm(verbose: bool = False, only: list[str] | None = None, announce: bool = False) -> dict[str, float]:
    r"""Call ``warm()`` of every :mod:`sim` module (or of ``only``), in this process; return seconds
    per module. ``announce`` prints :data:`READY_LINE` + name after each (for the parent).

    Parameters
    ----------
    verbose : bool
        Print one line per module.
    only : list of str, optional
        The modules to warm (default: all).
    announce : bool
        Print a ready line per module (read by the parent process).

    Returns
    -------
    dict
        ``{module: seconds}``.
    """
    times = {}
    for name in modules() if only is None else only:
        t0 = time.perf_counter()
        mod = importlib.import_module(f"sim.{name}")
        fn = getattr(mod, "warm", None)
        if callable(fn):
            fn()
        times[name] = time.perf_counter() - t0
        if verbose:
            print(f"  sim.{name:<16s} {times[name]:6.2f} s", flush=True)
        if announce:
            print(READY_LINE + name, flush=True)
    return times


def _child(group: list[str], nice: int) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "sim.warm",
        "--jobs",
        "1",
        "--announce",
        "--nice",
        str(nice),
        "--only",
        ",".join(group),
    ]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=os.environ.copy())


def warm_parallel(jobs: int | None = None, verbose: bool = False) -> None:
    r"""Fill the on-disk cache with ``jobs`` child processes (default: one per core); raise if one fails.

    Parameters
    ----------
    jobs : int, optional
        Child processes (default: one per core).
    verbose : bool
        Print what each child did.

    Returns
    -------
    None
    """
    groups = plan(jobs or os.cpu_count() or 1)
    if len(groups) == 1:
        warm(verbose=verbose)
        return
    procs = [_child(g, 0) for g in groups]
    failed = []
    for g, p in zip(groups, procs):
        out, _ = p.communicate()
        if verbose:
            print("".join(ln + "\n" for ln in out.splitlines() if not ln.startswith(READY_LINE)), end="")
        if p.returncode != 0:
            failed.append((g, p.returncode))
    if failed:
        raise RuntimeError(f"sim.warm: child processes failed: {failed}")


def _load(name: str) -> None:
    """The on-disk cache of ``name`` is current: from now on its kernels are used. Each kernel is
    loaded from the cache by its first call (for that signature only): loading
    them all here, in a thread of the server, would hold the GIL while the server is starting and
    drawing its first pages."""
    _ready.mark_ready(name)


_count = {"done": 0, "total": 0, "t0": 0.0}
_count_lock = threading.Lock()


def _progress(name: str) -> None:
    """One line on the server's terminal per module made ready: which, how many are left, how long."""
    with _count_lock:
        _count["done"] += 1
        done, total, t = _count["done"], _count["total"], time.perf_counter() - _count["t0"]
    left = total - done
    print(
        f"sim.warm: {name} ready ({done}/{total}, {t:.0f} s)" + (f"; {left} left" if left else ""),
        file=sys.stderr,
        flush=True,
    )


def _supervise(group: list[str], nice: int) -> None:
    done: set[str] = set()
    try:
        proc = _child(group, nice)
        _children.append(proc)
        for line in proc.stdout:
            if line.startswith(READY_LINE):
                name = line[len(READY_LINE) :].strip()
                if name in group and name not in done:
                    done.add(name)
                    _load(name)
                    _progress(name)
        proc.wait()
        if proc.returncode != 0:
            log.warning("sim.warm child for %s ended with %s", group, proc.returncode)
    except Exception:  # noqa: BLE001
        log.exception("sim.warm child for %s could not run", group)
    for name in group:  # a child that failed: Numba compiles those kernels on first use
        if name not in done:
            _failed.add(name)
            _load(name)


def failed() -> frozenset[str]:
    r"""The modules whose background child (:func:`start_background`) did not make their cache
    current: their kernels are compiled by their first call in the server.

    Returns
    -------
    frozenset of str
        Module short names (empty while the children run, and when every child succeeded).
    """
    return frozenset(_failed)


def _stop_children() -> None:
    for p in _children:
        if p.poll() is None:
            p.terminate()


def start_background(jobs: int | None = None, nice: int = 10, on_ready=None) -> threading.Thread:
    r"""Compile the kernels in the background (server start); return the supervising thread.

    Every module is pending (:mod:`sim._ready`) until its child process has compiled or loaded it
    (the on-disk cache is then current). Child processes run at
    ``nice`` priority so that the pages served meanwhile get the CPU first. ``on_ready()`` is
    called (in the background thread) once every module is ready. Idempotent.

    Parameters
    ----------
    jobs : int, optional
        Child processes (default: ``$SIM_WARM_JOBS``, else one per core); each compiles its share
        of the modules, the costliest first (:func:`plan`).
    nice : int
        Priority increment of the children.
    on_ready : callable, optional
        Called with no argument once every module is ready.

    Returns
    -------
    threading.Thread
        The supervising thread (already started).
    """
    global _background
    if _background is not None:
        return _background
    groups = plan(jobs or int(os.environ.get("SIM_WARM_JOBS", 0)) or os.cpu_count() or 1)
    names = [n for g in groups for n in g]
    _ready.mark_pending(names)
    _count.update(done=0, total=len(names), t0=time.perf_counter())
    print(
        f"sim.warm: preparing the Numba kernels of {len(names)} modules in {len(groups)} background "
        f"process{'es' if len(groups) > 1 else ''} ({', '.join(names)}): loaded from the cache in seconds, "
        "or compiled on a first start (a minute or two); pages answer meanwhile on their NumPy paths",
        file=sys.stderr,
        flush=True,
    )
    threads = [
        threading.Thread(target=_supervise, args=(g, nice), name=f"sim.warm:{g[0]}", daemon=True) for g in groups
    ]

    def run() -> None:
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if on_ready is not None:
            on_ready()
        print(
            f"{READY_ALL} after {time.perf_counter() - t0:.1f} s (pending: {sorted(_ready.pending()) or 'none'})",
            file=sys.stderr,
            flush=True,
        )

    atexit.register(_stop_children)
    _background = threading.Thread(target=run, name="sim.warm", daemon=True)
    _background.start()
    return _background


def cached_cpus(cache_dir: str | os.PathLike | None = None) -> set[str]:
    r"""The CPU names the on-disk cache holds kernels for, read from Numba's index files.

    Parameters
    ----------
    cache_dir : path, optional
        ``NUMBA_CACHE_DIR`` (default: that variable, else the ``__pycache__`` folders under ``sim/``).

    Returns
    -------
    set of str
        LLVM CPU names (``"skylake-avx512"``, ``"generic"``, ...); empty for an empty cache.
    """
    import pickle

    root = Path(cache_dir or os.environ.get("NUMBA_CACHE_DIR") or ROOT / "sim")
    names: set[str] = set()
    for index in root.rglob("*.nbi"):
        try:
            with open(index, "rb") as fh:  # numba.core.caching.IndexDataCacheFile's layout
                pickle.load(fh)
                _stamp, overloads = pickle.loads(fh.read())
            names |= {key[1][1] for key in overloads}
        except Exception:  # noqa: BLE001 - another Numba's index, or a file being written
            continue
    return names


def choose_target(environ=None) -> str | None:
    r"""Before Numba is imported: use the portable kernels when the cache has none for this CPU.

    An image's cache is compiled on the build machine; on another CPU type Numba would compile
    every kernel again at each start (tens of seconds of CPU per replica). The image also caches
    kernels compiled for the portable target (``NUMBA_CPU_NAME=generic``, about 1.5x slower on the
    attention kernel than compiled for the CPU: docs/performance.md). When the cache has kernels for
    ``generic`` but none for this CPU, this sets ``NUMBA_CPU_NAME=generic`` in ``environ`` (the
    server and its children then load those). An explicit ``NUMBA_CPU_NAME`` is kept.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read and change (default: ``os.environ``).

    Returns
    -------
    str or None
        ``"generic"`` when it chose the portable kernels, else None.
    """
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_CPU_NAME"):
        return None
    import llvmlite.binding as ll

    cpus = cached_cpus(environ.get("NUMBA_CACHE_DIR"))
    if "generic" not in cpus or ll.get_host_cpu_name() in cpus:
        return None
    environ["NUMBA_CPU_NAME"] = "generic"
    print(
        f"sim.warm: the kernel cache holds no kernels for this CPU ({ll.get_host_cpu_name()}); using its "
        "portable ones (NUMBA_CPU_NAME=generic). Set NUMBA_CPU_NAME to this CPU's name to compile for it "
        "instead.",
        file=sys.stderr,
        flush=True,
    )
    return "generic"


def ensure_warm() -> None:
    r"""What app.py runs once per process: nothing when :func:`start_background` runs (the server);
    otherwise (tests, a plain ``streamlit run``) warm every kernel here, before the first page.

    Returns
    -------
    None
    """
    if _background is None:
        warm()


def main(argv: list[str] | None = None) -> None:
    """``python -m sim.warm``: compile (or load) every kernel into the on-disk cache.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (``--jobs N``: processes, default one per core; ``--only a,b``: those
        modules only, in this process). Default: ``sys.argv[1:]``.
    """
    ap = argparse.ArgumentParser(prog="python -m sim.warm", description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=0, help="processes (default: one per core)")
    ap.add_argument("--only", default="", help="comma-separated module names (default: all)")
    ap.add_argument("--announce", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--nice", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    t0 = time.perf_counter()
    if args.only or args.jobs == 1:
        only = [n for n in args.only.split(",") if n] or None
        warm(verbose=True, only=only, announce=args.announce)
    else:
        warm_parallel(args.jobs or None, verbose=True)
    if not args.announce:
        print(f"warmed all sim kernels in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
