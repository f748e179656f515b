"""Hemisphere page: server cost of typical slider changes, and the page's kernels vs references.

Part 1 (a server started the way ``make run`` starts it, one websocket session): server wall and
CPU time of one rerun after a slider change to a value not seen before (a cache miss), for moves
a student typically makes near the defaults; the cached rerun at the defaults for comparison.
``bench/latency.py`` moves only the first slider (n) from the top of its range (n ~ 510), which
is the costly end, not the typical one.

Part 2 (in-process): the Numba kernels the page calls against their NumPy/SciPy references,
measured in the same run (median of a few calls, after a warm-up).

    .venv/bin/python bench/hemisphere.py [--no-server | --no-kernels]

Other work on the 2 cores inflates wall times; the CPU column does not grow with it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.server import Server, cpu_s, quiet_streamlit  # noqa: E402
from harness.wsclient import StreamlitSession  # noqa: E402

#: (label, widget, values): one slider change from the defaults per value (each new to the caches)
MOVES = [
    ("beta 2 -> 2.1, 2.2, 2.3 (hemisphere run)", "beta", [2.1, 2.2, 2.3]),
    ("beta -> 2.5, 2.6, 2.7", "beta", [2.5, 2.6, 2.7]),
    ("n 64 -> 65, 66, 67 (both runs)", "n", [65, 66, 67]),
    ("n -> 128, 129, 130", "n", [128, 129, 130]),
    ("n -> 256, 257, 258", "n", [256, 257, 258]),
    ("contrast beta 9 -> 8.5, 8, 7.5 (contrast)", "contrast_beta", [8.5, 8.0, 7.5]),
    ("cap 80 -> 70, 71, 72", "cap", [70, 71, 72]),
    ("seed 0 -> 1, 2, 3 (both runs)", "seed", [1, 2, 3]),
    ("d 3 -> 4, 5, 6 (both runs)", "d", [4, 5, 6]),
]
DEFAULTS = {"n": 64, "d": 3, "beta": 2.0, "cap": 80, "seed": 0, "contrast_beta": 9.0}


async def server_part(url: str, pid: int) -> list[tuple[str, float, float]]:
    rows = []
    async with StreamlitSession(url, timeout=180.0) as s:
        await s.rerun(page="", query_string="lang=en")
        await s.rerun(page="hemisphere", query_string="lang=en")
        walls, cpus = [], []
        for _ in range(5):
            c0 = cpu_s(pid)
            r = await s.rerun()
            cpus.append((cpu_s(pid) - c0) * 1e3)
            walls.append(r.seconds * 1e3)
        rows.append(("cached rerun at the defaults", statistics.median(walls), statistics.median(cpus)))
        for label, key, values in MOVES:
            walls, cpus = [], []
            for v in values:
                await s.rerun(widgets=DEFAULTS)  # back to the defaults (cached)
                c0 = cpu_s(pid)
                r = await s.rerun(widgets={key: v})
                cpus.append((cpu_s(pid) - c0) * 1e3)
                walls.append(r.seconds * 1e3)
                if r.exceptions or r.error:
                    raise RuntimeError(f"{label}: {list(r.exceptions)} {r.error}")
            rows.append((label, statistics.median(walls), statistics.median(cpus)))
        await s.rerun(widgets=DEFAULTS)
    return rows


def _time(fn, reps: int = 5) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def kernel_part() -> list[tuple[str, float, float]]:
    import numpy as np

    from sim import hemisphere as hs
    from sim.attention import simulate

    hs.warm()
    rows = []
    for n in (64, 256, 512):
        traj = simulate(hs.sphere_uniform(n, 3, seed=1), 9.0, 0.1, 300, record_every=30)
        Z = np.ascontiguousarray(traj[-1])
        rows.append(
            (
                f"cluster_labels n={n}",
                _time(lambda: hs.cluster_labels(Z)),
                _time(lambda: hs.cluster_labels_reference(Z), 3),
            )
        )
        sub = traj[:4]
        rows.append(
            (
                f"pair_stats 4 layers n={n}",
                _time(lambda: hs.pair_stats(sub)),
                _time(lambda: hs.pair_stats_reference(sub), 3),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-server", action="store_true", help="only the kernel table")
    ap.add_argument("--no-kernels", action="store_true", help="only the server table")
    args = ap.parse_args(argv)
    quiet_streamlit()
    la0 = open("/proc/loadavg").read().split()[0]
    if not args.no_server:
        srv = Server().start()
        try:
            from harness.server import first_visit

            first_visit(srv.url)
            rows = asyncio.run(server_part(srv.url, srv.pid))
        finally:
            srv.stop()
        print(f"{'hemisphere page: one rerun (server, median)':<44} {'wall ms':>8} {'cpu ms':>7}")
        for label, wall, cpu in rows:
            print(f"{label:<44} {wall:>8.0f} {cpu:>7.0f}")
        print()
    if not args.no_kernels:
        print(f"{'kernel (median of 5)':<44} {'numba ms':>8} {'ref ms':>8} {'ratio':>6}")
        for label, fast, ref in kernel_part():
            print(f"{label:<44} {fast:>8.2f} {ref:>8.2f} {ref / fast:>6.1f}")
    print(f"load average at start {la0}, at end {open('/proc/loadavg').read().split()[0]} (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
