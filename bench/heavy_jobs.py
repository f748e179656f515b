"""A class moving sliders while heavy jobs run: does the class keep its rerun budget?

Starts one server (``python -m ui.server.serve``, as ``make run``; ``--root`` serves another checkout, e.g.
``/work/main`` for the numbers before ``ui/server/jobs.py``) and runs two phases of ``--seconds`` each:

1. ``quiet``: ``-n`` students (websocket sessions, ``harness/wsclient.py``) each open a light page
   (two_point / nonnormal / gaussian_width in turn) and move its first slider to a value of their
   own every 1–2 s;
2. ``heavy``: the same, while three other sessions open the hemisphere page and press the
   phase-diagram button for three *different* sizes (small, medium, large) at the start.

Prints p50/p95/max of the students' interactive reruns per phase, how long each phase diagram took
from click to figures, the server's CPU time, and the load average (other jobs on the machine
count)::

    python bench/heavy_jobs.py -n 30 --seconds 45
    python bench/heavy_jobs.py -n 30 --seconds 45 --root /work/main     # before ui/server/jobs.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import save_json  # noqa: E402
from harness.server import cpu_s, free_port, serve_flags, wait_healthy  # noqa: E402
from harness.wsclient import StreamlitSession, percentile, widget_key  # noqa: E402

LIGHT = (("two_point",), ("nonnormal",), ("gaussian_width",))
SIZES = ("small", "medium", "large")


def start_server(root: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("APP_ALLOW_CLEAR_CACHE", None)
    subprocess.run([sys.executable, "-m", "sim.warm"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.server.serve", *serve_flags(port)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(f"http://127.0.0.1:{port}", proc, 120, poll=0.3)
    return proc


async def student(i: int, url: str, stop_at: float, out: list, errors: list) -> None:
    rng = random.Random(i)
    page = LIGHT[i % len(LIGHT)][0]
    try:
        async with StreamlitSession(url, timeout=120) as s:
            await s.rerun()
            r = await s.rerun(page=page, query_string="lang=en")
            slider = next(
                (
                    widget_key(w)
                    for w, kind in s._kinds.items()
                    if kind == "slider" and widget_key(w) and not widget_key(w).startswith("_")
                ),
                None,
            )
            if slider is None:
                errors.append(f"{page}: no slider")
                return
            el = s._elements[s._id_for(slider)]
            lo, hi, step = el.min, el.max, (el.step or (el.max - el.min) / 100)
            while time.monotonic() < stop_at:
                await asyncio.sleep(rng.uniform(1.0, 2.0))
                v = lo + step * rng.randrange(int(round((hi - lo) / step)) + 1)
                r = await s.rerun(widgets={slider: v})
                if r.ok:
                    out.append(r.seconds)
                else:
                    errors.append(r.error or str(r.exceptions))
    except Exception as exc:  # noqa: BLE001 - count it and go on
        errors.append(f"{type(exc).__name__}: {exc}")


async def heavy_user(size: str, url: str, out: dict) -> None:
    t0 = time.monotonic()
    try:
        async with StreamlitSession(url, timeout=900) as s:
            await s.rerun()
            await s.rerun(page="hemisphere", query_string=f"lang=en&phase_size={size}")
            t1 = time.monotonic()
            r = await s.rerun(widgets={"_hemi_phase_btn": True}, timeout=900)
            charts = r.element_counts.get("plotly_chart", 0)
            out[size] = {
                "click_to_figures_s": round(time.monotonic() - t1, 1),
                "ok": r.ok,
                "charts": charts,
                "error": r.error,
                "warnings": [b[:80] for f, b in r.alerts if f == "WARNING"],
            }
    except Exception as exc:  # noqa: BLE001
        out[size] = {"error": f"{type(exc).__name__}: {exc}", "after_s": round(time.monotonic() - t0, 1)}


async def phase(url: str, n: int, seconds: float, heavy: bool, heavy_wait: float = 60.0) -> dict:
    times: list[float] = []
    errors: list[str] = []
    hv: dict = {}
    stop_at = time.monotonic() + seconds
    tasks = [asyncio.create_task(student(i, url, stop_at, times, errors)) for i in range(n)]
    htasks = []
    if heavy:
        await asyncio.sleep(2.0)
        htasks = [asyncio.create_task(heavy_user(sz, url, hv)) for sz in SIZES]
    await asyncio.gather(*tasks)
    res = {
        "reruns": len(times),
        "p50_s": round(percentile(times, 50), 3),
        "p95_s": round(percentile(times, 95), 3),
        "max_s": round(max(times, default=float("nan")), 3),
        "errors": len(errors),
        "first_errors": errors[:3],
        "load_avg": round(os.getloadavg()[0], 1),
    }
    if htasks:
        # the phase diagrams may outlast the phase: wait a while, then report what finished
        done, pending = await asyncio.wait(htasks, timeout=heavy_wait)
        for tk in pending:
            tk.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for sz in SIZES:
            hv.setdefault(sz, {"unfinished_after_s": round(seconds - 2.0 + heavy_wait, 1)})
        res["heavy"] = hv
    return res


MAX_VIEW = "lang=en&n=512&d=8&horizon=40&dt=0.01&cap=180&contrast_horizon=200&contrast_beta=30"


async def cold_seeds(url: str, k: int, first_seed: int = 100) -> dict:
    """``k`` students open the hemisphere page at its maximum parameters, each with a new seed, at
    the same instant: every one is a cold load. Seconds per student (sorted) and the wall time."""

    async def one(seed: int) -> float:
        async with StreamlitSession(url, timeout=600) as s:
            await s.rerun()
            t1 = time.monotonic()
            r = await s.rerun(page="hemisphere", query_string=f"{MAX_VIEW}&seed={seed}", timeout=600)
            if not r.ok:
                raise RuntimeError(r.error or r.exceptions)
            return time.monotonic() - t1

    t0 = time.monotonic()
    secs = await asyncio.gather(*(one(first_seed + i) for i in range(k)))
    return {
        "students": k,
        "seconds": sorted(round(x, 1) for x in secs),
        "wall_s": round(time.monotonic() - t0, 1),
        "load_avg": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=30, help="students moving sliders")
    ap.add_argument("--seconds", type=float, default=45.0, help="length of each phase")
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout to serve (default: this one)")
    ap.add_argument("--only", choices=("quiet", "heavy", "none"), help="run one phase only (none: neither)")
    ap.add_argument(
        "--heavy-wait",
        type=float,
        default=60.0,
        help="seconds the heavy sessions may still wait after the phase before they give up",
    )
    ap.add_argument(
        "--cold-seeds",
        type=int,
        default=0,
        help="also: this many students open the hemisphere at its maximum with new seeds at once",
    )
    ap.add_argument("--json", type=Path, help="write the results here too")
    args = ap.parse_args(argv)
    port = free_port()
    proc = start_server(args.root.resolve(), port)
    url = f"http://127.0.0.1:{port}"
    out = {"root": str(args.root), "n": args.n, "seconds": args.seconds, "cores": os.cpu_count()}
    try:
        c0 = cpu_s(proc.pid)
        for name in ("quiet", "heavy"):
            if args.only and name != args.only or args.only == "none":
                continue
            t0 = time.monotonic()
            c1 = cpu_s(proc.pid)
            out[name] = asyncio.run(
                phase(url, args.n, args.seconds, heavy=(name == "heavy"), heavy_wait=args.heavy_wait)
            )
            out[name]["wall_s"] = round(time.monotonic() - t0, 1)
            out[name]["server_cpu_s"] = round(cpu_s(proc.pid) - c1, 1)
            print(name, json.dumps(out[name]), flush=True)
        if args.cold_seeds:
            c1 = cpu_s(proc.pid)
            out["cold"] = asyncio.run(cold_seeds(url, 1, first_seed=900))  # one alone
            out["cold_many"] = asyncio.run(cold_seeds(url, args.cold_seeds))
            out["cold_many"]["server_cpu_s"] = round(cpu_s(proc.pid) - c1, 1)
            print("cold", json.dumps(out["cold"]), "\ncold_many", json.dumps(out["cold_many"]), flush=True)
        out["server_cpu_total_s"] = round(cpu_s(proc.pid) - c0, 1)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    for name in ("quiet", "heavy"):
        if name in out:
            r = out[name]
            print(
                f"{name:6s} reruns={r['reruns']} p50={r['p50_s']}s p95={r['p95_s']}s max={r['max_s']}s "
                f"errors={r['errors']} server_cpu={r['server_cpu_s']}s load_avg={r['load_avg']}"
            )
    return save_json(args.json, out, indent=2)


if __name__ == "__main__":
    sys.exit(main())
