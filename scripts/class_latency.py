"""Push latency of a class session on one real server, with browser-less students (no Chromium).

Starts one app server (``python -m ui.server.serve``) with instructor mode on, with the in-memory store
(``--store memory``) or a private ``redis-server`` and ``APP_REDIS_URL`` (``--store redis``).
An instructor session (``bench/classclient.py``, websocket protocol) signs in with the key, opens
a class, opens ``two_point``; N students load ``/?class=CODE`` and join; each student then does
what the browser does for the sidebar's timed fragment (``st.fragment(run_every=POLL_S)``): every
``POLL_S`` seconds it asks the server to rerun that fragment. The instructor moves ``beta`` and
presses "Push this view" a few times; per student, the latency is the time from the instructor's
click to the end of the run that shows the pushed page with the pushed ``beta``. Then the
instructor asks a question, every student answers (and sends the same answer a second time,
as a retry would), and the instructor's live panel must count exactly N.

CPU (load-independent): the server's CPU seconds (``/proc/PID/stat``) over an idle phase
(students polling, nothing new) divided by the polls served, and over each push divided by N.

    python scripts/class_latency.py -n 30 --pushes 3 --store memory|redis [--port 8741]

Prints one line per push and a summary; exit status 0 only if every push reached every student
with p95 <= 2 s and every answer was counted once. Not part of ``make test`` (about a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.classclient import Instructor, Student  # noqa: E402
from harness.server import Server, cpu_s  # noqa: E402
from harness.wsclient import percentile  # noqa: E402
from ui.teaching import class_store as cs  # noqa: E402
from ui.teaching.live import POLL_S  # noqa: E402

TARGET_P95_S = 2.0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def drive(n: int, pushes: int, url: str, key: str, pid: int, idle_s: float, mark: bool = False) -> dict:
    out: dict = {"fails": []}
    teacher = Instructor(url, timeout=120)
    await teacher.sign_in(key)
    code = await teacher.open_class()
    await teacher.show("two_point")
    students = [Student(url, timeout=120) for _ in range(n)]
    for s in students:  # joins one after the other, as a class arriving
        await s.join(code)
    joined = sum(1 for s in students if s.poll_fragment)
    print(
        f"{n} students joined class {code}: {joined} poll on a timer "
        f"({sorted({v for s in students for v in s.auto_reruns.values()})} s)",
        flush=True,
    )
    if joined < n:
        out["fails"].append(f"only {joined}/{n} students poll")
        return out

    stop = asyncio.Event()
    applied: dict[str, dict[int, float]] = {}
    polls, unanswered = [0], [0]
    errors: list[str] = []

    async def poll(i: int, s: Student):
        await asyncio.sleep(random.uniform(0, POLL_S))
        nxt = time.monotonic()
        while not stop.is_set():
            try:
                r = await s.poll()
            except Exception as exc:  # noqa: BLE001 - counted as a failure
                errors.append(f"student {i}: {exc}")
                return
            polls[0] += 1
            if r.error and r.error.startswith("timeout"):
                unanswered[0] += 1  # a tick without an answer (see Student.poll): the next one follows
            elif not r.ok:
                errors.append(f"student {i}: {r.error or r.exceptions}")
            b = s.query("beta")
            b = None if b is None else f"{float(b):.1f}"
            if b is not None and i not in applied.setdefault(b, {}):
                applied[b][i] = time.time()
            nxt += POLL_S  # the browser's timer: every POLL_S s (a late run delays the next one)
            await asyncio.sleep(max(0.0, nxt - time.monotonic()))

    tasks = [asyncio.create_task(poll(i, s)) for i, s in enumerate(students)]
    await asyncio.sleep(POLL_S + 0.5)
    # idle phase: nothing new; CPU per poll
    if mark:
        os.kill(pid, signal.SIGUSR1)
    p0, c0, t0 = polls[0], cpu_s(pid), time.perf_counter()
    await asyncio.sleep(idle_s)
    p1, c1, t1 = polls[0], cpu_s(pid), time.perf_counter()
    if mark:
        os.kill(pid, signal.SIGUSR1)
    out["idle_polls"] = p1 - p0
    out["idle_cpu_per_poll_ms"] = 1000 * (c1 - c0) / max(1, p1 - p0)
    out["idle_cpu_frac"] = (c1 - c0) / (t1 - t0)
    print(
        f"idle: {p1 - p0} polls in {t1 - t0:.1f} s, server CPU {1000 * (c1 - c0):.0f} ms = "
        f"{out['idle_cpu_per_poll_ms']:.2f} ms per poll ({100 * out['idle_cpu_frac']:.0f} % of a core); "
        f"load {load()}",
        flush=True,
    )

    lat: list[float] = []
    push_cpu: list[float] = []
    for k in range(1, pushes + 1):
        beta = f"{1.0 + k:.1f}"  # 2.0, 3.0, ...: never the default 1.0
        await teacher.show("two_point", beta=float(beta))
        c0, cc0 = cpu_s(pid), time.process_time()
        t_push = await teacher.push()
        t_end = time.time() + 20
        while len(applied.get(beta, {})) < n and time.time() < t_end:
            await asyncio.sleep(0.02)
        got = applied.get(beta, {})
        ls = [t - t_push for t in got.values()]
        lat += ls
        await asyncio.sleep(0.3)
        push_cpu.append((cpu_s(pid) - c0) / n)
        out.setdefault("client_cpu", []).append((time.process_time() - cc0) / n)
        print(
            f"push {k} (beta={beta}): {len(got)}/{n} students on it; latency p50={percentile(ls, 50):.2f} s "
            f"p95={percentile(ls, 95):.2f} s max={max(ls, default=float('nan')):.2f} s; server CPU per "
            f"student {1000 * push_cpu[-1]:.0f} ms (this client's own CPU per student "
            f"{1000 * out['client_cpu'][-1]:.0f} ms, on the same cores); load {load()}",
            flush=True,
        )
        await asyncio.sleep(POLL_S)

    # live answers: a question; every student answers twice (a retry): counted once each
    await teacher.ask()
    t_end = time.time() + 20
    while time.time() < t_end and sum(1 for s in students if s.question_shown()) < n:
        await asyncio.sleep(0.1)
    shown = sum(1 for s in students if s.question_shown())
    stop.set()
    await asyncio.gather(*tasks)
    values = [round(0.5 + 0.1 * i, 3) for i in range(n)]
    sent = 0
    for s, v in zip(students, values):
        qid = s.question_shown()
        if qid is None:
            continue
        try:
            await s.answer(qid, v)
            sent += s.answer_sent()
            await s.answer(qid, v)  # the same student again: replaced, not counted twice
        except Exception as exc:  # noqa: BLE001
            errors.append(f"answer: {exc}")
    counted = await teacher.n_answers()
    print(f"poll ticks without an answer (dropped during a full run): {unanswered[0]} of {polls[0]}", flush=True)
    out.update(
        code=code,
        lat=lat,
        n=n,
        pushes=pushes,
        push_cpu=push_cpu,
        shown=shown,
        sent=sent,
        counted=counted[1] if counted else None,
        errors=errors,
    )
    for s in students:
        await s.close()
    await teacher.close()
    return out


def run() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--pushes", type=int, default=3)
    ap.add_argument("--store", choices=["memory", "redis"], default="memory")
    ap.add_argument("--port", type=int, default=None)
    ap.add_argument("--idle", type=float, default=5.0, help="seconds of the idle-poll CPU measurement")
    ap.add_argument("--url", help="drive a server already running (with --pid and --key)")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--key")
    ap.add_argument(
        "--mark-idle",
        action="store_true",
        help="send SIGUSR1 to --pid at the start and end of the idle phase (a sampling profiler)",
    )
    a = ap.parse_args()
    if a.url:
        out = asyncio.run(drive(a.n, a.pushes, a.url, a.key, a.pid, a.idle, a.mark_idle))
        return report(a, out)
    key = os.urandom(16).hex()
    env = {"APP_INSTRUCTOR_KEY": key, cs.REDIS_ENV: ""}
    with tempfile.TemporaryDirectory() as d:
        redis = None
        if a.store == "redis":
            exe = shutil.which("redis-server")
            if exe is None:
                print("redis-server missing: run scripts/ensure_redis.sh", file=sys.stderr)
                return 2
            sock = Path(d) / "redis.sock"
            redis = subprocess.Popen(
                [exe, "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly", "no", "--dir", d],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            while not sock.exists():
                time.sleep(0.05)
            env[cs.REDIS_ENV] = f"unix://{sock}"
        try:
            with Server(port=a.port, env=env) as srv:
                out = asyncio.run(drive(a.n, a.pushes, srv.url, key, srv.pid, a.idle))
        finally:
            if redis is not None:
                redis.terminate()
                redis.wait(10)
    return report(a, out)


def report(a: argparse.Namespace, out: dict) -> int:
    lat, n, pushes = out.get("lat", []), a.n, a.pushes
    fails = list(out["fails"]) + out.get("errors", [])[:5]
    if len(lat) != n * pushes:
        fails.append(f"pushes applied {len(lat)}/{n * pushes}")
    if lat and percentile(lat, 95) > TARGET_P95_S:
        fails.append(f"push p95 {percentile(lat, 95):.2f} s > {TARGET_P95_S} s")
    if out.get("counted") != n or out.get("sent") != n:
        fails.append(f"answers: {out.get('sent')} sent, {out.get('counted')} counted, {n} expected")
    for f in fails:
        print("FAIL", f)
    pc = out.get("push_cpu") or [float("nan")]
    print(
        f"class_latency: {'PASS' if not fails else 'FAIL'} store={a.store} students={n} pushes={pushes} "
        f"applied={len(lat)}/{n * pushes} p50={percentile(lat, 50):.2f}s p95={percentile(lat, 95):.2f}s "
        f"max={max(lat, default=float('nan')):.2f}s answers_counted={out.get('counted')}/{n} "
        f"(each sent twice) idle_cpu_per_poll={out.get('idle_cpu_per_poll_ms', float('nan')):.2f}ms "
        f"push_cpu_per_student={1000 * sum(pc) / len(pc):.0f}ms poll={POLL_S:g}s load={load()}",
        flush=True,
    )
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(run())
