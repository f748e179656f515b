"""How many students one replica serves: steady classroom load on one server.

Starts one replica (``python -m ui.server.serve``, i.e. ``streamlit run app.py``, with the ``make run`` settings, on
a loopback port), warms it, then for each class size N runs N websocket
sessions (``harness/wsclient.py``) that behave like students: open the app, open
a page, then every few seconds (think time, default 2-6 s) drag a slider on it
and now and then move to another page.  Per N it reports rerun p50/p95, errors,
the replica's CPU use (cores, from /proc) and CPU-seconds per rerun, and RSS.

The CPU-seconds per rerun are measured on the server process, so they hardly
depend on other load on the machine; the wall-clock p95 does.  From them:

    students one replica serves ~= cores a replica may use / (CPU s per rerun * reruns per student per s)

    .venv/bin/python scripts/replica_capacity.py [--sizes 10 25 50] [--seconds 40]

Last line: the measured figures and the estimate.  Stops what it starts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import signal
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "scripts")]

from harness.server import cpu_s  # noqa: E402
from harness.wsclient import SessionError, StreamlitSession, percentile  # noqa: E402
from scale_check import HOST, SERVE_FLAGS, Procs, log, pick_slider, port_free, rss_mb, wait_healthy  # noqa: E402


async def student(
    url: str, pages: list[str], until: float, rng: random.Random, think: tuple[float, float], out: dict
) -> None:
    s = StreamlitSession(url, timeout=60)
    try:
        await s.connect()
        r = await s.rerun(page="")
        out["times"].append(r.seconds)
        if not r.ok:
            out["errors"].append(r.error or str(r.exceptions))
        page = rng.choice(pages)
        todo: list[str | None] = [page]
        while time.monotonic() < until:
            await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= until:
                break
            if not todo:
                if rng.random() < 0.15:
                    todo.append(rng.choice(pages))
                else:
                    todo.append(None)
            nxt = todo.pop(0)
            if nxt is not None:
                r = await s.rerun(page=nxt)
            else:
                mv = pick_slider(s)
                r = await s.rerun(widgets={mv[0]: mv[1]} if mv else None)
            out["times"].append(r.seconds)
            if not r.ok or r.error_alerts:
                out["errors"].append(r.error or str(r.exceptions or r.error_alerts))
    except SessionError as exc:
        out["errors"].append(str(exc))
    finally:
        await s.close()


async def run_size(
    url: str, pid: int, n: int, seconds: float, pages: list[str], think: tuple[float, float], seed: int
) -> dict:
    rng = random.Random(seed)
    out: dict = {"times": [], "errors": []}
    rss0 = rss_mb(pid)
    c0, t0 = cpu_s(pid), time.monotonic()
    until = t0 + seconds
    tasks = []
    for _ in range(n):  # students arrive over the first few seconds
        tasks.append(asyncio.create_task(student(url, pages, until, random.Random(rng.random()), think, out)))
        await asyncio.sleep(min(5.0, seconds / 4) / n)
    await asyncio.wait_for(asyncio.gather(*tasks), seconds + 120)
    wall = time.monotonic() - t0
    cpu = cpu_s(pid) - c0
    xs = out["times"]
    return {
        "n": n,
        "reruns": len(xs),
        "errors": len(out["errors"]),
        "first_errors": out["errors"][:3],
        "p50": percentile(xs, 50),
        "p95": percentile(xs, 95),
        "max": max(xs, default=float("nan")),
        "cores": cpu / wall,
        "cpu_per_rerun": cpu / max(1, len(xs)),
        "rate": len(xs) / wall,
        "rss_mb": rss_mb(pid),
        "rss_growth_mb": rss_mb(pid) - rss0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50])
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--think-min", type=float, default=2.0)
    ap.add_argument("--think-max", type=float, default=6.0)
    ap.add_argument("--port", type=int, default=8631)
    ap.add_argument("--cores", type=float, default=1.0, help="cores one replica may use (for the estimate)")
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    args = ap.parse_args(argv)
    if not port_free(args.port):
        print(f"replica-capacity: FAIL port {args.port} busy")
        return 1
    procs = Procs()
    tmp = tempfile.mkdtemp(prefix="capacity.")
    line = "replica-capacity: FAIL (did not finish)"
    try:
        env = dict(os.environ, STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_hex(16))
        p = procs.start(
            "replica",
            [
                args.python,
                "-m",
                "ui.server.serve",
                "--server.port",
                str(args.port),
                *SERVE_FLAGS,
                "--server.address",
                HOST,
            ],
            os.path.join(tmp, "replica.log"),
            env=env,
        )
        wait_healthy(args.port, p, 120)
        url = f"http://{HOST}:{args.port}"

        async def pages_and_warm() -> list[str]:
            async with StreamlitSession(url, timeout=120) as s:
                await s.rerun()
                pages = sorted(x for x in s.pages if x)
                for pg in pages:
                    await s.rerun(page=pg)
                return pages or [""]

        pages = asyncio.run(pages_and_warm())
        log(f"pages: {pages}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        rows = []
        for i, n in enumerate(args.sizes):
            row = asyncio.run(run_size(url, p.pid, n, args.seconds, pages, (args.think_min, args.think_max), i))
            rows.append(row)
            log(
                f"N={n:3d}: reruns {row['reruns']:4d} ({row['rate']:.1f}/s)  p50 {row['p50']:.2f} s  "
                f"p95 {row['p95']:.2f} s  max {row['max']:.2f} s  errors {row['errors']}  "
                f"server {row['cores']:.2f} cores, {row['cpu_per_rerun'] * 1000:.0f} ms CPU/rerun  "
                f"RSS {row['rss_mb']:.0f} MB  load {os.getloadavg()[0]:.1f}"
            )
            for e in row["first_errors"]:
                log(f"   error: {e}")
        cpu_rerun = percentile([r["cpu_per_rerun"] for r in rows], 50)
        per_student = 1.0 / ((args.think_min + args.think_max) / 2)  # reruns/s of one student
        estimate = int(0.7 * args.cores / (cpu_rerun * per_student))
        ok_sizes = [r["n"] for r in rows if r["errors"] == 0 and r["p95"] <= 2.0]
        line = (
            "replica-capacity: "
            + " ".join(f"N={r['n']}:p95={r['p95']:.2f}s,err={r['errors']},cpu={r['cores']:.2f}" for r in rows)
            + f" cpu_per_rerun={cpu_rerun * 1000:.0f}ms largest_N_p95<=2s={max(ok_sizes, default=0)}"
            + f" estimate={estimate} students/replica at 70% of {args.cores:g} core, one action per "
            f"{(args.think_min + args.think_max) / 2:g} s"
        )
    except Exception as exc:  # noqa: BLE001
        line = f"replica-capacity: FAIL {type(exc).__name__}: {exc}"
    finally:
        procs.stop_all()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    print(line, flush=True)
    return 0 if "FAIL" not in line else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    sys.exit(main())
