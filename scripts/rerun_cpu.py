"""Server CPU per distinct rerun, per page: what one student's slider move to a NEW value costs the server.

    .venv/bin/python scripts/rerun_cpu.py                 # every page, 5 moves each, fresh server
    .venv/bin/python scripts/rerun_cpu.py --pages width rotation --moves 8 --port 8706

Starts the server as ``make run`` does (``bench.classroom.Server``), opens one websocket session
(``bench/wsclient.py``), and on every page: opens it (defaults), moves its first slider once to warm
up, then ``--moves`` times to a value no session used before (a cache miss for every datum that
depends on that slider: the classroom stress case, one student at a time). For each
move it reads the server's CPU seconds (user + system, all threads, ``/proc/<pid>/stat``) before
and after: that is the load-independent cost (wall time grows with other work on the machine, CPU
time does not). Prints the mean, median and max ms per page and the bytes the rerun sent.

The CPU clock ticks at 10 ms (``SC_CLK_TCK`` = 100): a single move is read to +-10 ms; the median
of several is better, and ``--repeat`` runs the same page's moves again on more new values."""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._timing import save_json  # noqa: E402
from bench.classroom import Server, cpu_s, plans, url_path  # noqa: E402
from bench.wsclient import StreamlitSession  # noqa: E402


async def measure(url: str, pid: int, stems: list[str] | None, moves: int) -> list[dict]:
    plan = plans(4 * moves + 8, stems)
    rows = []
    async with StreamlitSession(url, timeout=120) as s:
        await s.rerun(page="", query_string="lang=en")
        for pp in plan:
            r = await s.rerun(page=url_path(pp.stem), query_string="lang=en")
            await s.rerun()  # a same-state rerun: caches of the defaults filled
            row = {"page": pp.stem, "slider": pp.slider, "ms": [], "wall_ms": [], "bytes": [],
                   "errors": list(r.exceptions) + r.error_alerts}
            if not pp.slider:  # text-only page: a same-state rerun is its cost
                vals = [None] * moves
            else:
                vals = pp.slider_values[: moves + 1]
                await s.rerun(widgets={pp.slider: vals[0]})  # warm-up move (first miss of the page's path)
                vals = vals[1:]
            for v in vals:
                await asyncio.sleep(0.15)  # let the server finish sending the previous rerun
                c0, t0 = cpu_s(pid), time.perf_counter()
                r = await s.rerun(widgets={pp.slider: v} if v is not None else None)
                await asyncio.sleep(0.15)  # anything the server does after script_finished counts too
                c1 = cpu_s(pid)
                row["ms"].append(1e3 * (c1 - c0))
                row["wall_ms"].append(1e3 * r.seconds)
                row["bytes"].append(r.bytes)
                row["errors"] += list(r.exceptions) + r.error_alerts
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*")
    ap.add_argument("--moves", type=int, default=5)
    ap.add_argument("--port", type=int)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    with Server(port=args.port) as srv:
        rows = asyncio.run(measure(srv.url, srv.pid, args.pages, args.moves))
    print(f"{'page':<16} {'slider':<10} {'CPU ms mean':>11} {'med':>5} {'max':>6} {'wall ms med':>11} {'kB':>6}  errors")
    for r in rows:
        print(f"{r['page']:<16} {str(r['slider']):<10} {statistics.mean(r['ms']):>11.0f} "
              f"{statistics.median(r['ms']):>5.0f} {max(r['ms']):>6.0f} "
              f"{statistics.median(r['wall_ms']):>11.0f} {statistics.median(r['bytes']) / 1e3:>6.0f}  "
              f"{len(r['errors'])}")
    return save_json(args.json, rows)


if __name__ == "__main__":
    sys.exit(main())
