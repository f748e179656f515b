"""make scale-check, class part: one class on 3 replicas behind nginx with Redis, one replica killed.

Uses the machinery of ``scripts/scale_check.py`` (the deployed ``deploy/nginx.conf`` with its sticky
cookie, replicas ``python -m ui.server.serve``) and adds a private ``redis-server`` (Unix socket, no
persistence); every replica gets ``APP_REDIS_URL`` and the same instructor key and cookie secret.

1. An instructor session (websocket protocol, ``bench/classclient.py``) loads the index through
   nginx, signs in with the key, opens a class and opens ``two_point``.
2. N students load ``/?class=CODE`` through nginx (nginx's cookie spreads them over the replicas)
   and join; each polls like the browser's fragment timer (every ``POLL_S`` s).
3. Round 1: the instructor moves ``beta`` and pushes: every student must show it (latency from
   the click); the instructor asks a question; every student answers (each sends twice, a retry):
   exactly N answers.
4. The replica holding the most students is killed (SIGKILL). Its students' websockets drop; they
   reconnect through nginx with the same cookie and URL (``?class=CODE`` stays in the URL) to a
   survivor and are in the class again; their answer to round 1 is recognised (the answer id
   comes from the browser's cookie, not from the lost session), so the box says "sent".
5. Round 2 from a NEW instructor session (what an instructor does after their own replica died:
   sign in again, "Continue this class" with the code): push (every student, latency), question,
   every student answers twice: exactly N answers; round 1 still exactly N.
6. Sign-out on every replica: the second instructor's cookie, presented to another surviving
   replica directly, gives the instructor's controls; the instructor signs out through nginx (on
   their own replica); the same cookie presented to the other replica again is a student's (the
   revocation lives in Redis, not in the replica that took it).

Prints the figures and a last line ``scale-class: PASS|FAIL ...``; exit status 0 only if every check
passed. ``--nginx-port`` / replica addresses differ from scale_check.py's so the two never collide.

    .venv/bin/python scripts/scale_class.py [--students 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shutil
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from harness.classclient import ClassSession, Instructor, Student  # noqa: E402
from harness.server import redis_argv  # noqa: E402
from harness.wsclient import SessionError, percentile  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from scale_check import (  # noqa: E402
    HOST,
    Procs,
    Replica,
    deploy_replicas,
    ensure_nginx,
    prepare_run,
    start_fleet,
    replica_of,
    run_check,
    wait_healthy,
)
from ui.teaching import class_store as cs  # noqa: E402
from ui.teaching.live import POLL_S  # noqa: E402

TARGET_P95_S = 2.0


def log(msg: str) -> None:
    print(f"[scale-class {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Member:
    """A student and what happened to it."""

    def __init__(self, i: int, s: Student):
        self.i, self.s = i, s
        self.replica: str | None = None
        self.replicas: list[str] = []
        self.drops = 0
        self.unanswered = 0
        self.errors: list[str] = []
        self.seen: dict[str, float] = {}  # beta shown -> first wall time
        self.sent_after_failover: bool | None = None
        self.lock = asyncio.Lock()  # one run at a time on a websocket (poll timer vs. a click)


async def poll_loop(m: Member, stop: asyncio.Event) -> None:
    await asyncio.sleep(random.uniform(0, POLL_S))
    nxt = time.monotonic()
    while not stop.is_set():
        async with m.lock:
            if not await poll_once(m):
                return
        nxt += POLL_S
        await asyncio.sleep(max(0.0, nxt - time.monotonic()))


async def poll_once(m: Member) -> bool:
    s = m.s
    if True:
        try:
            r = await s.poll()
            err = r.error
        except SessionError as exc:
            r, err = None, str(exc)
        if r is not None and r.error and r.error.startswith("timeout"):
            m.unanswered += 1  # a tick without an answer (see Student.poll): the next one follows
        elif r is not None and r.ok:
            b = s.query("beta")
            if b is not None:
                m.seen.setdefault(f"{float(b):.1f}", time.time())
        elif err and (err.startswith("closed") or "not connected" in err or "Error" in err):
            m.drops += 1  # the replica died: reconnect like the frontend, rerun the page (URL kept)
            try:
                await s.reconnect(attempts=30, delay=0.3)
                m.replicas.append(replica_of(s.response_headers) or "?")
                r2 = await s.rerun()
                if not r2.ok:
                    m.errors.append(f"rerun after reconnect: {r2.error or r2.exceptions}")
                    return False
                m.sent_after_failover = s.answer_sent()
            except SessionError as exc:
                m.errors.append(f"reconnect: {exc}")
                return False
        else:
            m.errors.append(f"poll: {err or (r.exceptions if r else '?')}")
            return False
    return True


async def wait_for(cond, timeout: float, step: float = 0.05) -> bool:
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if cond():
            return True
        await asyncio.sleep(step)
    return cond()


async def push_round(
    teacher: Instructor, members: list[Member], beta: float, fails: list[str], label: str
) -> list[float]:
    await teacher.show("two_point", beta=beta)
    key = f"{beta:.1f}"
    t0 = await teacher.push()
    ok = await wait_for(lambda: all(key in m.seen for m in members), 30)
    lat = [m.seen[key] - t0 for m in members if key in m.seen]
    log(
        f"{label}: push beta={key} reached {len(lat)}/{len(members)} students; latency p50 "
        f"{percentile(lat, 50):.2f} s, p95 {percentile(lat, 95):.2f} s, max {max(lat, default=float('nan')):.2f} s; "
        f"load {load()}"
    )
    if not ok:
        fails.append(f"{label}: push reached {len(lat)}/{len(members)} students")
    return lat


async def answer_round(
    teacher: Instructor, members: list[Member], store: cs.RedisStore, code: str, fails: list[str], label: str
) -> tuple[int, int]:
    await teacher.ask()
    qid = store.question(code)["id"]
    if not await wait_for(lambda: all(m.s.question_shown() == qid for m in members), 20):
        missing = [m.i for m in members if m.s.question_shown() != qid]
        fails.append(f"{label}: question {qid} not shown to students {missing}")

    async def one(m: Member) -> int:
        if m.s.question_shown() != qid:
            return 0
        v = round(m.i + 0.25, 2)
        await asyncio.sleep(random.uniform(0, 2))  # a class answers within a few seconds
        try:
            async with m.lock:
                for _ in range(2):  # the send repeated (a double click): counted once
                    await m.s.answer(qid, v)
            return 1
        except SessionError as exc:
            m.errors.append(f"answer: {exc}")
            return 0

    sent = sum(await asyncio.gather(*(one(m) for m in members)))
    shown = await teacher.n_answers()
    stored = store.answers(code, qid)
    n = len(members)
    log(
        f"{label}: question {qid}: {sent}/{n} students sent (each twice), stored {len(stored)}, "
        f"instructor's panel shows {shown[1] if shown else '?'}"
    )
    if len(stored) != n or sorted(stored) != sorted(round(m.i + 0.25, 2) for m in members):
        fails.append(f"{label}: {len(stored)} answers stored for {n} students")
    if not shown or shown[1] != n:
        fails.append(f"{label}: the instructor's panel shows {shown}")
    return qid, len(stored)


async def teacher_on(addr: str, cookie: str) -> bool:
    """Whether a new session straight to replica ``addr`` with this instructor cookie gets the
    instructor's controls: "Open a class", or, for a sign-in that teaches a class already (the
    class store remembers it), that class's results and "Close the class"."""
    s = ClassSession(f"http://{addr}", timeout=90, cookies={"app_instructor": cookie})
    await s.connect()
    try:
        await s.checked(s.rerun("", query_string="lang=en"), "home page")
        mine = ("_class_open", "_class_close", "_class_csv")
        return any(k in s.widget_values for k in mine) or any(w.endswith(mine) for w in s._elements)
    finally:
        await s.close()


def post_signout(url: str, cookie_header: str) -> int:
    import http.client
    from urllib.parse import urlsplit

    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.request(
            "POST",
            "/_app/signout",
            "next=/",
            {"Cookie": cookie_header, "Content-Type": "application/x-www-form-urlencoded"},
        )
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


async def signout_everywhere(
    teacher: Instructor, url: str, replicas: list[Replica], victim: str, fails: list[str]
) -> str:
    own = replica_of(teacher.response_headers)
    other = next((r for r in replicas if r.name not in (victim, own)), None)
    cookie = teacher.cookies.get("app_instructor")
    if other is None or not cookie:
        fails.append(f"sign-out check: no other survivor than {own} or no cookie")
        return "signout=?"
    before = await teacher_on(other.addr, cookie)
    status = await asyncio.to_thread(post_signout, url, teacher.cookie_header())
    after = await teacher_on(other.addr, cookie)
    log(
        f"sign-out through nginx on {own}: HTTP {status}; the cookie on {other.name} before: "
        f"{'instructor' if before else 'student'}, after: {'instructor' if after else 'student'}"
    )
    if not before or status != 303 or after:
        fails.append(f"sign-out on {own} does not hold on {other.name} (before={before}, HTTP {status}, after={after})")
    return f"signout={'held' if before and not after and status == 303 else 'FAILED'}({own}->{other.name})"


async def scenario(
    args: argparse.Namespace, url: str, replicas: list[Replica], key: str, store: cs.RedisStore
) -> tuple[bool, str]:
    fails: list[str] = []
    teacher = Instructor(url, timeout=90)
    await teacher.sign_in(key)
    t_rep = replica_of(teacher.response_headers)
    code = await teacher.open_class()
    await teacher.show("two_point")
    log(f"instructor on {t_rep} opened class {code}")
    members = [Member(i, Student(url, timeout=90)) for i in range(args.students)]
    for m in members:
        await m.s.join(code)
        m.replica = replica_of(m.s.response_headers)
        m.replicas.append(m.replica or "?")
    spread = {r.name: sum(1 for m in members if m.replica == r.name) for r in replicas}
    log(f"{len(members)} students joined through nginx: {spread}")
    if min(spread.values()) == 0:
        fails.append(f"not every replica got students: {spread}")
    if not all(m.s.poll_fragment for m in members):
        fails.append("a student has no poll fragment")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(poll_loop(m, stop)) for m in members]
    await asyncio.sleep(POLL_S + 0.5)

    lat1 = await push_round(teacher, members, 2.0, fails, "round 1")
    q1, n1 = await answer_round(teacher, members, store, code, fails, "round 1")

    victim = max(spread, key=lambda k: spread[k])
    by_name = {r.name: r for r in replicas}
    on_victim = [m for m in members if m.replica == victim]
    log(
        f"killing {victim} ({by_name[victim].addr}, {len(on_victim)} students"
        f"{', the instructor' if t_rep == victim else ''}) with SIGKILL"
    )
    t_kill = time.monotonic()
    Procs.kill(by_name[victim].proc, signal.SIGKILL)
    back = await wait_for(
        lambda: (
            all(m.drops and m.sent_after_failover is not None for m in on_victim) or any(m.errors for m in on_victim)
        ),
        60,
    )
    rec_s = time.monotonic() - t_kill
    moved = [m for m in on_victim if m.drops and m.replicas[-1] not in (victim, "?")]
    recognised = sum(1 for m in on_victim if m.sent_after_failover)
    log(
        f"{len(moved)}/{len(on_victim)} students of {victim} reconnected to survivors "
        f"({sorted({m.replicas[-1] for m in moved})}) within {rec_s:.1f} s; their round-1 answer recognised "
        f"(box says sent): {recognised}/{len(on_victim)}"
    )
    if not back or len(moved) != len(on_victim):
        fails.append(f"{len(on_victim) - len(moved)} students of the killed replica did not come back")
    if recognised != len(on_victim):
        fails.append(f"round-1 answer of {len(on_victim) - recognised} reconnected students not recognised")

    # round 2 from a new instructor session that takes the class over with the code
    if t_rep == victim:
        await teacher._drop()
    else:
        await teacher.close()
    teacher2 = Instructor(url, timeout=90)
    await teacher2.sign_in(key)
    await teacher2.resume(code)
    log(f"a new instructor session on {replica_of(teacher2.response_headers)} took class {code} over")
    lat2 = await push_round(teacher2, members, 3.0, fails, "round 2")
    q2, n2 = await answer_round(teacher2, members, store, code, fails, "round 2")
    n1_after = len(store.answers(code, q1))
    if n1_after != len(members):
        fails.append(f"round 1 answers after the kill: {n1_after}")
    stop.set()
    await asyncio.gather(*tasks)
    survivors_err = [m for m in members if m.errors or (m.replica != victim and m.drops)]
    for m in survivors_err:
        fails.append(f"student {m.i} ({m.replicas}): drops={m.drops} errors={m.errors[:2]}")
    for m in members:
        await m.s.close()
    await teacher2.close()
    signout = await signout_everywhere(teacher2, url, replicas, victim, fails)
    lat = lat1 + lat2
    log(
        f"poll ticks without an answer (dropped by the server during a full run; the next tick follows): "
        f"{sum(m.unanswered for m in members)}"
    )
    for f in fails[:20]:
        log("FAIL " + f)
    n = len(members)
    line = (
        f"scale-class: {'PASS' if not fails else 'FAIL'} replicas={len(replicas)} students={n} "
        f"spread={'/'.join(str(spread[r.name]) for r in replicas)} killed={victim}({len(on_victim)} students"
        f"{'+instructor' if t_rep == victim else ''}) reconnected={len(moved)}/{len(on_victim)} "
        f"push1 p50={percentile(lat1, 50):.2f}s p95={percentile(lat1, 95):.2f}s "
        f"push2(after kill) p50={percentile(lat2, 50):.2f}s p95={percentile(lat2, 95):.2f}s "
        f"max={max(lat, default=float('nan')):.2f}s reached={len(lat)}/{2 * n} "
        f"answers q1={n1}->{n1_after}/{n} q2={n2}/{n} (each sent twice) {signout} load={load()}"
    )
    if lat and percentile(lat, 95) > TARGET_P95_S:
        line += f" (p95 above the {TARGET_P95_S:g} s target)"
    return not fails, line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A class on replicas + nginx + Redis; kill one replica.")
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--nginx-port", type=int, default=8620)
    ap.add_argument("--first-host", type=int, default=21, help="replicas on 127.0.0.N, N from this")
    ap.add_argument("--first-port", type=int, default=8621, help="replica ports in --rewrite-servers mode")
    ap.add_argument("--rewrite-servers", action="store_true")
    ap.add_argument("--nginx-conf", default=os.path.join(ROOT, "deploy", "nginx.conf"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    random.seed(args.seed)
    redis_exe = shutil.which("redis-server")
    if redis_exe is None:
        print("scale-class: FAIL redis-server missing (scripts/ensure_redis.sh)", flush=True)
        return 1
    with open(args.nginx_conf, encoding="utf-8") as fh:
        conf_text = fh.read()
    servers = deploy_replicas(conf_text, args.nginx_conf)
    run = prepare_run("scale-class", args, servers, args.first_host)
    if run is None:
        return 1
    replicas, verbatim, procs, tmp, t_all = run

    def body() -> tuple[bool, str]:
        nginx = ensure_nginx()
        sock = os.path.join(tmp, "redis.sock")
        procs.start(
            "redis",
            redis_argv(redis_exe, sock, tmp),
            os.path.join(tmp, "redis.log"),
        )
        t0 = time.monotonic()
        while not os.path.exists(sock):
            if time.monotonic() - t0 > 10:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        key = secrets.token_hex(16)
        env = dict(
            os.environ,
            STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_hex(32),
            PYTHONUNBUFFERED="1",
            APP_INSTRUCTOR_KEY=key,
            **{cs.REDIS_ENV: f"unix://{sock}"},
        )
        ng = start_fleet(procs, args, tmp, env, nginx, conf_text, replicas, verbatim)
        for r in replicas:
            wait_healthy(r.port, r.proc, 120, r.host)
        wait_healthy(args.nginx_port, ng, 20)

        async def warm() -> None:  # the pages the class uses, once per replica (first-run cost)
            for r in replicas:
                s = Student(f"http://{r.addr}", timeout=120)
                await s.connect()
                for page in ("", "two_point"):
                    res = await s.rerun(page=page)
                    if not res.ok:
                        raise RuntimeError(f"replica {r.name} page {page!r}: {res.error or res.exceptions}")
                await s.close()

        asyncio.run(warm())
        log(
            f"redis + {len(replicas)} replicas + nginx on {HOST}:{args.nginx_port} up and warm "
            f"({time.perf_counter() - t_all:.0f} s); load {load()}"
        )
        store = cs.RedisStore(f"unix://{sock}")
        ok, line = asyncio.run(scenario(args, f"http://{HOST}:{args.nginx_port}", replicas, key, store))
        return ok, line

    return run_check("scale-class", body, procs, tmp, t_all)


if __name__ == "__main__":
    sys.exit(main())
