"""Push latency of a class session on a real server, with browser-less students (no Chromium).

Starts a private ``redis-server`` and one app server (``python -m ui.serve``) with instructor mode
on and ``APP_REDIS_URL`` set, opens a class in Redis, and connects N students over the websocket
protocol (``bench/wsclient.py``) with the join link ``/?class=CODE``. Each student then does what
the browser does for the sidebar fragment (``st.fragment(run_every=1 s)``): every second it asks
the server to rerun that fragment. The script pushes a view (``two_point`` with a new ``beta``)
a few times and records, per student, the time from the push to the end of the run that shows
the pushed page with the pushed value. Then every student answers a live question and the
answers are counted in Redis.

    python scripts/class_latency.py -n 30 --pushes 3

Prints one line per push and a summary (p50/p95/max latency, views applied, answers counted).
Not part of ``make test`` (about a minute on 2 cores).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

from bench.classroom import Server  # noqa: E402
from bench.wsclient import StreamlitSession, percentile  # noqa: E402
from ui import class_store as cs  # noqa: E402
from ui.classroom import POLL_S  # noqa: E402


class Student(StreamlitSession):
    """A session that remembers the ids of the fragments it was shown (to rerun them)."""

    fragments: set

    def _note_delta(self, msg, res, counts):
        if msg.delta.fragment_id:
            self.fragments = getattr(self, "fragments", set()) | {msg.delta.fragment_id}
        super()._note_delta(msg, res, counts)

    async def rerun_fragment(self, timeout: float = 60.0):
        back = BackMsg()
        rs = back.rerun_script
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_script_hash
        rs.fragment_id = sorted(getattr(self, "fragments", {""}))[0]
        rs.is_auto_rerun = True
        rs.widget_states.widgets.extend(self._states.values())
        self._fill_context_info(rs.context_info, "")
        return await self._run(back.SerializeToString(), timeout)


def beta_shown(s: Student) -> str | None:
    q = parse_qs(s.query_string)
    return q.get("beta", [None])[0]


async def main(n: int, pushes: int, url: str, store: cs.RedisStore) -> int:
    code = store.create()
    students = [Student(url, timeout=120) for _ in range(n)]
    for s in students:
        await s.connect()
    first = await asyncio.gather(*(s.rerun(query_string=f"class={code}&lang=en") for s in students))
    bad = [r.error or r.exceptions for r in first if not r.ok]
    joined = sum(1 for s in students if getattr(s, "fragments", None))
    print(f"{n} students joined class {code}: {joined} with the follow fragment, errors: {bad[:3]}")
    if joined < n:
        return 1
    stop = asyncio.Event()
    applied: dict[int, dict[int, float]] = {}
    run_s: dict[int, list[float]] = {}  # seconds of the run that applied each push (page run included)

    async def poll(i: int, s: Student):
        await asyncio.sleep(random.uniform(0, POLL_S))
        while not stop.is_set():
            t0 = time.time()
            r = await s.rerun_fragment()
            b = beta_shown(s)
            if b is not None and i not in applied.get(int(float(b)), {}):
                applied.setdefault(int(float(b)), {})[i] = time.time()
                run_s.setdefault(int(float(b)), []).append(r.seconds)
            await asyncio.sleep(max(0.0, POLL_S - (time.time() - t0)))

    tasks = [asyncio.create_task(poll(i, s)) for i, s in enumerate(students)]
    await asyncio.sleep(2 * POLL_S)
    pushed_at, lat = {}, []
    for k in range(1, pushes + 1):
        beta = k + 1  # 2, 3, 4: never the default 1
        store.push(code, {"page": "two_point", "query": {"beta": f"{beta:.1f}"}})
        pushed_at[beta] = time.time()
        t_end = time.time() + 15
        while len(applied.get(beta, {})) < n and time.time() < t_end:
            await asyncio.sleep(0.05)
        got = applied.get(beta, {})
        ls = [t - pushed_at[beta] for t in got.values()]
        lat += ls
        print(f"push {k} (beta={beta}): {len(got)}/{n} students on it; latency p50={percentile(ls, 50):.2f}s "
              f"p95={percentile(ls, 95):.2f}s max={max(ls, default=float('nan')):.2f}s; the applying run "
              f"(fragment + page) took p50={percentile(run_s.get(beta, []), 50):.2f}s")
        await asyncio.sleep(POLL_S)
    stop.set()
    await asyncio.gather(*tasks)
    qid = store.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    for i in range(n):
        store.answer(code, qid, f"student{i}", float(i))
    counted = len(store.answers(code, qid))
    for s in students:
        await s.close()
    ok = len(lat) == n * pushes and percentile(lat, 95) < 2.0
    print(f"class_latency: {'PASS' if ok else 'FAIL'} students={n} pushes={pushes} applied={len(lat)}/{n * pushes} "
          f"p50={percentile(lat, 50):.2f}s p95={percentile(lat, 95):.2f}s max={max(lat, default=float('nan')):.2f}s "
          f"answers_counted={counted}/{n} (poll {POLL_S:g}s)")
    return 0 if ok else 1


def run() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--pushes", type=int, default=3)
    a = ap.parse_args()
    exe = shutil.which("redis-server")
    if exe is None:
        print("redis-server missing: run scripts/ensure_redis.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        sock = Path(d) / "redis.sock"
        redis = subprocess.Popen([exe, "--port", "0", "--unixsocket", str(sock), "--save", "",
                                  "--appendonly", "no", "--dir", d],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not sock.exists():
                time.sleep(0.05)
            env = {cs.REDIS_ENV: f"unix://{sock}", "APP_INSTRUCTOR_KEY": os.urandom(16).hex()}
            with Server(env=env) as srv:
                return asyncio.run(main(a.n, a.pushes, srv.url, cs.RedisStore(f"unix://{sock}")))
        finally:
            redis.terminate()
            redis.wait(10)


if __name__ == "__main__":
    sys.exit(run())
