"""Server CPU per distinct rerun, per page: what one student's slider move to a NEW value costs the server.

    .venv/bin/python scripts/rerun_cpu.py                 # every page, 5 moves each, fresh server
    .venv/bin/python scripts/rerun_cpu.py --pages width rotation --moves 8 --port 8706

Starts the server as ``make run`` does (``harness.server.Server``), opens one websocket session
(``harness/wsclient.py``), and on every page: opens it (defaults), moves its first slider once to warm
up, then ``--moves`` times to a value no session used before (a cache miss for every datum that
depends on that slider: the classroom stress case, one student at a time). For each
move it reads the server's CPU seconds (user + system, all threads, ``/proc/<pid>/stat``) before
and after: that is the load-independent cost (wall time grows with other work on the machine, CPU
time does not). Prints the mean, median and max ms per page and the bytes the rerun sent.

The CPU clock ticks at 10 ms (``SC_CLK_TCK`` = 100): a single move is read to +-10 ms; the median
of several is better.

Steady state: the server compiles its kernels in the background at start (``sim.warm``) and pages
take their NumPy reference paths until then, and the first call of each kernel in the server
loads it from Numba's cache (0.1-3 s of CPU, once per process). Neither is a per-rerun cost, so
by default the script waits until the server reports every kernel ready, and the warm-up moves
go to both ends of the slider (a page may pick another kernel for large sizes) before the
measured moves. ``--cold`` measures right after the start instead (the earlier way)."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.plans import plans  # noqa: E402
from harness.server import Server, cpu_s, url_path  # noqa: E402
from harness.wsclient import StreamlitSession  # noqa: E402


async def measure(url: str, pid: int, stems: list[str] | None, moves: int, cold: bool = False) -> list[dict]:
    plan = plans(4 * moves + 8, stems)
    rows = []
    async with StreamlitSession(url, timeout=120) as s:
        await s.rerun(page="", query_string="lang=en")
        for pp in plan:
            r = await s.rerun(page=url_path(pp.stem), query_string="lang=en")
            await s.rerun()  # a same-state rerun: caches of the defaults filled
            row = {
                "page": pp.stem,
                "slider": pp.slider,
                "ms": [],
                "wall_ms": [],
                "bytes": [],
                "errors": list(r.exceptions) + r.error_alerts,
            }
            if not pp.slider:  # text-only page: a same-state rerun is its cost
                vals = [None] * moves
            else:
                vals = pp.slider_values[: moves + 1]
                await s.rerun(widgets={pp.slider: vals[0]})  # warm-up move (first miss of the page's path)
                if not cold:  # and both ends of the range: every kernel the page may pick is loaded
                    for end in _ends(pp.stem, pp.slider):
                        if end not in vals:
                            await s.rerun(widgets={pp.slider: end})
                vals = vals[1:]
            for v in vals:
                await asyncio.sleep(0.15)  # let the server finish sending the previous rerun
                c0 = cpu_s(pid)
                r = await s.rerun(widgets={pp.slider: v} if v is not None else None)
                await asyncio.sleep(0.15)  # anything the server does after script_finished counts too
                c1 = cpu_s(pid)
                row["ms"].append(1e3 * (c1 - c0))
                row["wall_ms"].append(1e3 * r.seconds)
                row["bytes"].append(r.bytes)
                row["errors"] += list(r.exceptions) + r.error_alerts
            rows.append(row)
    return rows


def _ends(stem: str, name: str) -> list:

    from ui.kit import spec

    from ui.kit import files

    p = spec.resolve(files.page_module(stem).SCHEMA).params[name]
    return [p.clamp(p.min), p.clamp(p.max)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*")
    ap.add_argument("--moves", type=int, default=5)
    ap.add_argument("--port", type=int)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cold", action="store_true", help="measure right after the start (kernels compiling)")
    args = ap.parse_args(argv)
    with Server(port=args.port) as srv:
        if not args.cold:
            print(f"every kernel ready after {srv.wait_kernels_ready():.0f} s", flush=True)
        rows = asyncio.run(measure(srv.url, srv.pid, args.pages, args.moves, args.cold))
    print(
        f"{'page':<16} {'slider':<10} {'CPU ms mean':>11} {'med':>5} {'max':>6} {'wall ms med':>11} {'kB':>6}  errors"
    )
    for r in rows:
        print(
            f"{r['page']:<16} {str(r['slider']):<10} {statistics.mean(r['ms']):>11.0f} "
            f"{statistics.median(r['ms']):>5.0f} {max(r['ms']):>6.0f} "
            f"{statistics.median(r['wall_ms']):>11.0f} {statistics.median(r['bytes']) / 1e3:>6.0f}  "
            f"{len(r['errors'])}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
