"""A held arrow key on one page, server side: every step supersedes the previous one.

    .venv/bin/python bench/held_key.py hemisphere --steps 10 --every 0.08 [--start 480]

One websocket session (``harness/wsclient.py``) opens the page, then sends ``--steps`` reruns of
its first slider, ``--every`` seconds apart, one slider step each (as a held arrow key does, values
nobody used before), without waiting for any of them to finish. Prints how long the server needed
after the last step until the run of the last value finished (*settle*), how many runs finished and
how many were stopped early because a newer one was waiting, and the server CPU of the whole
burst. Streamlit keeps only the newest rerun request while a run is going (coalescing); a stale run
stops at its next element, or, inside a long simulation, at the next stopping point between two
chunks (``sim._interrupt``). ``--repeat`` bursts at fresh values give a median. The browser's side
(drawing each value) is ``bench/latency.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.server import Server, cpu_s, url_path  # noqa: E402
from harness.wsclient import RunResult, StreamlitSession  # noqa: E402


VERBOSE = False
#: seconds without a message after which the burst counts as settled (its last run finished before)
QUIET_S = 5.0


def _slider(stem: str):
    from ui.kit import spec

    from ui.kit import files

    res = spec.resolve(files.page_module(stem).SCHEMA)
    return next(p for p in res.params.values() if p.kind in ("float", "int"))


async def _payload(s: StreamlitSession, name: str, value) -> bytes:
    """The BackMsg the browser sends for one slider value (built by ``rerun``, not sent)."""
    out: list[bytes] = []
    real = s._run

    async def capture(payload, timeout):
        out.append(payload)
        return RunResult(ok=True, seconds=0.0)

    s._run = capture
    try:
        await s.rerun(widgets={name: value})
    finally:
        s._run = real
    return out[0]


async def burst(s: StreamlitSession, pid: int, name: str, values: list, every: float) -> dict:
    payloads = [await _payload(s, name, v) for v in values]
    c0 = cpu_s(pid)
    for i, p in enumerate(payloads):
        await s._ws.send(p)
        if i + 1 < len(payloads):
            await asyncio.sleep(every)
    t_last = time.perf_counter()
    ok = 0
    finished_at = t_last
    while True:  # read until the server has been quiet for QUIET_S (longer than any one run here)
        r = await s._run(b"", QUIET_S)
        if VERBOSE:
            print(
                f"  +{time.perf_counter() - t_last:.2f} s: finished={r.finished} error={r.error} messages={r.messages}"
            )
        if r.finished == "ok":
            ok += 1
            finished_at = time.perf_counter()
        elif r.error and r.error.startswith("timeout"):
            break
    return {"settle_s": finished_at - t_last, "runs_ok": ok, "cpu_s": cpu_s(pid) - c0}


async def main_async(
    url: str, pid: int, stem: str, steps: int, every: float, repeat: int, start, query: str = ""
) -> list[dict]:
    p = _slider(stem)
    step = p.step or 1
    rows = []
    async with StreamlitSession(url, timeout=300) as s:
        await s.rerun(page=url_path(stem), query_string="lang=en" + (f"&{query}" if query else ""))
        await s.rerun()
        v0 = p.clamp(start if start is not None else p.default)
        for k in range(repeat):
            vals = [p.clamp(v0 + step * (k * (steps + 1) + i + 1)) for i in range(steps)]
            if len(set(vals)) < steps:  # ran into the end of the range: go down instead
                vals = [p.clamp(v0 - step * (k * (steps + 1) + i + 1)) for i in range(steps)]
            row = await burst(s, pid, p.name, vals, every)
            # the page shows the last value: one more plain rerun reads the widget back
            r = await s.rerun()
            el = s.widget(p.name)
            shown = list(getattr(el, "value", []) or [])
            row["last_value_shown"] = r.ok and (
                shown[:1] == [vals[-1]] if shown else s.widget_values.get(p.name) == vals[-1]
            )
            if VERBOSE:
                print(
                    f"  slider value {shown or s.widget_values.get(p.name)!r}, last sent {vals[-1]!r}, rerun ok {r.ok}"
                )
            rows.append(row)
            print(
                f"{stem} burst {k + 1}: settle {row['settle_s']:.2f} s after the last step, runs finished "
                f"{row['runs_ok']}/{steps}, server CPU {row['cpu_s']:.2f} s, last value shown: "
                f"{row['last_value_shown']}",
                flush=True,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stem")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--every", type=float, default=0.08, help="seconds between steps (key repeat ~ 30-80 ms)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--start", type=float, help="slider value the bursts start from (default: its default)")
    ap.add_argument("--url", help="an already running server (default: start one)")
    ap.add_argument("--pid", type=int, help="its process id (for the CPU column)")
    ap.add_argument("--query", default="", help="more URL parameters of the page, e.g. horizon=40&dt=0.05")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    start = int(args.start) if args.start is not None and float(args.start).is_integer() else args.start
    if args.url:
        rows = asyncio.run(
            main_async(args.url, args.pid or 0, args.stem, args.steps, args.every, args.repeat, start, args.query)
        )
    else:
        with Server() as srv:
            srv.wait_kernels_ready()
            rows = asyncio.run(
                main_async(srv.url, srv.pid, args.stem, args.steps, args.every, args.repeat, start, args.query)
            )
    print(f"median settle {statistics.median(r['settle_s'] for r in rows):.2f} s")
    return 0 if all(r["last_value_shown"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
