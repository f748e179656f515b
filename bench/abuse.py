"""One client misbehaving, on loopback: each attack of the audit against one server (``python -m
ui.server.serve``), through ``deploy/nginx.conf`` where the attack needs the proxy, bounded in count and
time, while a normal student moves a slider on ``two_point``.

Prints one table: attack | the student's rerun p50 / p95 before and during | server CPU (cores)
and RSS during | outcome. Everything it starts is stopped at the end.

    .venv/bin/python bench/abuse.py [--seconds 8] [--only flood,keys,...]

Needs Debian ``nginx`` for the attacks through the proxy (``apt-get install nginx``; skipped
without it). The timings are what this machine gives; the outcome column is what must hold.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

from harness.classclient import ClassSession, Instructor  # noqa: E402
from harness.server import Server, free_port  # noqa: E402
from harness.wsclient import SessionError, StreamlitSession  # noqa: E402

KEY = "Ab3-kQ9_zX7wP2mL5nR8tY4vC6"
#: the costliest view the page allows (each simulation at its work cap)
HEAVY = "lang=en&n=512&d=8&dt=0.01&horizon=40&contrast_horizon=200"
#: another student's own view, also above the page's cold-load threshold (a queued job), smaller
VICTIM = "lang=en&n=256&horizon=40&contrast_horizon=200"


# --------------------------------------------------------------------------- measuring
def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS:")) / 1024


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


class Student:
    """A student on two_point moving the β slider every 0.25 s (one rerun at a time)."""

    def __init__(self, url: str):
        self.s = StreamlitSession(url)
        self.times: list[float] = []
        self.errors = 0

    async def start(self) -> None:
        await self.s.load_index("/")
        await self.s.connect()
        await self.s.rerun(page="two_point", query_string="lang=en")

    async def move(self, seconds: float, until: asyncio.Future | None = None) -> list[float]:
        """Reruns for ``seconds``, and on until ``until`` (the attack) is done."""
        out, i, end = [], 0, time.monotonic() + seconds
        while time.monotonic() < end or (until is not None and not until.done()):
            i += 1
            try:
                r = await self.s.rerun(widgets={"beta": 1.0 + (i % 5) * 0.5}, timeout=60)
                out.append(r.seconds)
                self.errors += bool(r.exceptions)
            except SessionError:
                self.errors += 1
                await self.s.reconnect()
            await asyncio.sleep(0.25)
        return out


def raw_rerun(
    s: StreamlitSession, widgets: dict | None = None, extra_ids: dict | None = None, url: str | None = None
) -> bytes:
    """The bytes of a rerun like :meth:`StreamlitSession.rerun` sends, for sending without waiting."""
    for k, v in (widgets or {}).items():
        s.set_widget(k, v)
    back = BackMsg()
    rs = back.rerun_script
    rs.query_string = s.query_string
    rs.page_script_hash = s.page_script_hash
    rs.widget_states.widgets.extend(s._states.values())
    for wid, v in (extra_ids or {}).items():
        w = rs.widget_states.widgets.add()
        w.id, w.string_value = wid, v
    s._fill_context_info(rs.context_info, "two_point")
    if url is not None:
        rs.context_info.url = url
    return back.SerializeToString()


async def drain(s: StreamlitSession, closed: list) -> None:
    try:
        async for _ in s._ws:
            pass
    except Exception:  # noqa: BLE001 - closed by the server
        pass
    code = getattr(s._ws, "close_code", None)
    closed.append(code)


# --------------------------------------------------------------------------- nginx
def start_nginx(app_port: int, tmp: str) -> tuple[subprocess.Popen | None, int]:
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if exe is None:
        return None, 0
    port = free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = re.sub(r"# BEGIN replicas.*?# END replicas", f"server 127.0.0.1:{app_port};", site, flags=re.S)
    site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
    conf = Path(tmp) / "nginx.conf"
    conf.write_text(f"""worker_processes 1; pid {tmp}/nginx.pid; error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{ access_log {tmp}/access.log; client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;
fastcgi_temp_path {tmp}/fcgi; uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
{site}
}}""")
    proc = subprocess.Popen(
        [exe, "-c", str(conf), "-p", tmp, "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(50):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read()
            return proc, port
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    proc.terminate()
    return None, 0


def post(url: str, data: bytes, headers: dict | None = None, method: str = "POST") -> int:
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return -1


# --------------------------------------------------------------------------- the attacks
class Bench:
    def __init__(self, srv: Server, proxy: str | None, params: Path, seconds: float):
        self.srv, self.proxy, self.params, self.seconds = srv, proxy, params, seconds
        self.rows: list[tuple] = []
        self.quiet: list[float] = []

    async def measure(self, name: str, attack, student: Student, prepare=None) -> None:
        """Run ``attack()`` (a coroutine returning the outcome text) while the student moves (at
        least ``seconds``, and until the attack ends); ``prepare()`` first, before the quiet sample."""
        pid = self.srv.pid
        if prepare is not None:
            await prepare()
        before = await student.move(self.seconds * 0.75)  # quiet, just before this attack
        self.quiet += before
        c0, t0 = cpu_s(pid), time.monotonic()
        task = asyncio.ensure_future(attack())
        during = await student.move(self.seconds, until=task)
        outcome = await task
        cpu, wall = cpu_s(pid) - c0, time.monotonic() - t0
        self.rows.append(
            (
                name,
                pct(before, 0.5),
                pct(before, 0.95),
                pct(during, 0.5),
                pct(during, 0.95),
                cpu / wall,
                cpu,
                rss_mb(pid),
                os.getloadavg()[0],
                outcome,
            )
        )
        print(f"  {name}: {outcome}", flush=True)

    # 1: 4 sessions x 20 reruns/s from one browser, through nginx
    async def flood(self) -> str:
        base = self.proxy or self.srv.url
        first = StreamlitSession(base)
        await first.load_index("/")
        sessions = [first] + [StreamlitSession(base, cookies=first.cookies) for _ in range(3)]
        closed: list = []
        for s in sessions:
            await s.connect()
            await s.rerun(page="two_point", query_string="lang=en")
        drains = [asyncio.ensure_future(drain(s, closed)) for s in sessions]
        sent, end = 0, time.monotonic() + self.seconds
        while time.monotonic() < end and len(closed) < len(sessions):
            for s in sessions:
                try:
                    await s._ws.send(raw_rerun(s, {"beta": 1.0 + (sent % 7) * 0.3}))
                    sent += 1
                except Exception:  # noqa: BLE001 - disconnected
                    pass
            await asyncio.sleep(1 / 20)
        for s in sessions:
            await s.close()
        await asyncio.gather(*drains, return_exceptions=True)
        n1008 = sum(c == 1008 for c in closed)
        return f"{sent} reruns sent; slowed, {n1008}/4 sessions disconnected (1008)"

    # 2: one session queues cold hemisphere loads; another student's own cold load, quiet and during
    async def _victim_load(self, seed: int) -> tuple[float, float]:
        """Another student opens the hemisphere with its own large view (a cold load in the load
        lane): (seconds until the page finished, server CPU seconds meanwhile)."""
        v = StreamlitSession(self.srv.url, timeout=300)
        await v.load_index("/")
        await v.connect()
        c0 = cpu_s(self.srv.pid)
        r = await v.rerun(page="hemisphere", query_string=VICTIM + f"&seed={seed}", timeout=300)
        c1 = cpu_s(self.srv.pid)
        await v.close()
        if r.exceptions:
            raise RuntimeError(f"the student's load raised: {r.exceptions[:1]}")
        return r.seconds, c1 - c0

    async def cold_loads_prepare(self) -> None:
        """Before the quiet sample: the attacker's page is open (its widget ids known), and the
        other student's quiet cold load is measured."""
        s = StreamlitSession(self.srv.url, timeout=300)
        await s.load_index("/")
        await s.connect()
        await s.rerun(page="hemisphere", query_string=HEAVY + "&seed=1", timeout=300)
        self._flooder = s
        self._quiet_load = await self._victim_load(501)

    async def cold_loads(self) -> str:
        quiet, quiet_cpu = self._quiet_load
        s = self._flooder
        closed: list = []
        d = asyncio.ensure_future(drain(s, closed))
        victim = None
        n, t0 = 0, time.monotonic()
        while not closed and n < 600:
            now = time.monotonic() - t0
            if victim is None and now > 2:  # the flood is on: the student loads
                victim = asyncio.ensure_future(self._victim_load(502))
            if now > self.seconds and (victim is None or victim.done()):
                break
            if now > 240:
                break
            n += 1
            try:
                await s._ws.send(raw_rerun(s, {"seed": 100 + n}))
            except Exception:  # noqa: BLE001
                break
            await asyncio.sleep(0.2)
        await s.close()
        await asyncio.gather(d, return_exceptions=True)
        during, during_cpu = await victim if victim is not None else (float("nan"), float("nan"))
        ok = during <= 2 * quiet + 0.2
        return (
            f"{n} loads asked by one session (one queued, one running at most); another student's "
            f"own cold load: quiet {quiet:.1f} s (server CPU meanwhile {quiet_cpu:.1f} s), during {during:.1f} s "
            f"({during_cpu:.1f} s): {'within' if ok else 'OVER'} 2x quiet + 0.2 s"
        )

    # 3: a huge client-reported address for the share box
    async def share_address(self) -> str:
        out = []
        for size in (900_000, 5_000_000):
            s = StreamlitSession(self.srv.url)
            await s.load_index("/")
            await s.connect()
            await s.rerun(page="two_point", query_string="lang=en")
            closed: list = []
            d = asyncio.ensure_future(drain(s, closed))
            try:
                await s._ws.send(raw_rerun(s, url="http://" + "a" * size + "/two_point"))
            except Exception:  # noqa: BLE001
                pass
            await asyncio.sleep(2)
            await s.close()
            await asyncio.gather(d, return_exceptions=True)
            out.append(
                f"{size // 1000} kB: "
                f"{'closed ' + str(closed[0]) if closed and closed[0] else 'run, QR from the server address'}"
            )
        return "; ".join(out)

    # 4: four 180 MiB websocket messages
    async def big_messages(self) -> str:
        r0 = rss_mb(self.srv.pid)
        blob, codes = b"\0" * (180 * 2**20), []
        for _ in range(4):
            s = StreamlitSession(self.srv.url)
            await s.connect()
            closed: list = []
            d = asyncio.ensure_future(drain(s, closed))
            try:
                await asyncio.wait_for(s._ws.send(blob), 30)
            except Exception:  # noqa: BLE001 - the server closed the connection
                pass
            await asyncio.sleep(0.5)
            await s.close()
            await asyncio.gather(d, return_exceptions=True)
            codes.append(closed[0] if closed else None)
        return f"RSS {r0:.0f} -> {rss_mb(self.srv.pid):.0f} MB; closed with {codes}"

    # 5: key guesses, each from a new connection, through nginx
    async def keys(self) -> str:
        base = self.proxy or self.srv.url
        codes = await asyncio.to_thread(
            lambda: [
                post(
                    f"{base}/_app/signin",
                    f"key=guess{i}&next=/".encode(),
                    {"Content-Type": "application/x-www-form-urlencoded"},
                )
                for i in range(40)
            ]
        )
        right = await asyncio.to_thread(
            post,
            f"{base}/_app/signin",
            f"key={KEY}&next=/".encode(),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        return f"40 guesses: {codes.count(403)} checked, {codes.count(429)} refused (429); the right key then: {right}"

    # 6: a session id alone
    async def session_id(self) -> str:
        t = Instructor(self.srv.url, headers={"X-Real-IP": "192.0.2.50"})  # not the guesser's address
        await t.sign_in(KEY)
        sid = t.session_id
        thief = ClassSession(self.srv.url)
        thief.session_id = sid
        await thief.connect(resume=True)
        await thief.rerun(page="", query_string="lang=en")
        teacher = any("Signed in as instructor" in x for x in thief.texts) or "_class_open" in thief.widget_values
        await thief.close()
        await t.close()
        reload = ClassSession(self.srv.url, cookies=t.cookies)  # the teacher presses F5
        await reload.connect()
        await reload.rerun(page="", query_string="lang=en")
        still = any("Signed in as instructor" in x for x in reload.texts)
        await reload.close()
        return (
            f"session id resumed without the cookie: {'INSTRUCTOR' if teacher else 'a student'}; "
            f"a reload with the cookie: {'instructor' if still else 'signed out'}"
        )

    # 7: two saves at once
    async def saves(self) -> str:
        import logging

        from ui.teaching import params_file as pf

        logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)  # no runtime here

        def rounds():
            wins = 0
            for i in range(8):
                text, h = pf.read(self.params)
                edits = [
                    pf.apply_edits(text, "two_point", {"beta": {"default": 1.0 + i * 0.1 + d}}, None)
                    for d in (0.01, 0.02)
                ]
                bar, out = threading.Barrier(2), []

                def go(e):
                    bar.wait()
                    try:
                        pf.save(self.params, e, h)
                        out.append("saved")
                    except pf.Conflict:
                        out.append("conflict")

                ths = [threading.Thread(target=go, args=(e,)) for e in edits]
                [th.start() for th in ths]
                [th.join() for th in ths]
                wins += sorted(out) == ["conflict", "saved"]
            return wins

        wins = await asyncio.to_thread(rounds)
        return f"{wins}/8 rounds: one saved, the other told (no edit lost)"

    # 8-10: files on disk that the pages read on every run
    async def bad_file(self, text: str, label: str, check: str | None = None) -> str:
        orig = self.params.read_text()
        self.params.write_text(text)
        try:
            s = ClassSession(self.srv.url)
            await s.load_index("/")
            await s.connect()
            exc, shown = 0, []
            end = time.monotonic() + self.seconds
            q = "lang=en&preset=hot" if check else "lang=en"
            while time.monotonic() < end:
                r = await s.rerun(page="two_point", query_string=q, timeout=60)
                exc += len(r.exceptions)
                shown += s.texts
                await asyncio.sleep(0.5)
            await s.close()
            live = check is not None and any(check in x for x in shown)
            return f"{label}: {exc} page exceptions" + (f"; title as a link: {live}" if check else "")
        finally:
            self.params.write_text(orig)

    async def editor(self) -> str:
        orig = self.params.read_text()
        self.params.write_text(
            orig + "".join(f"\n[hemisphere.presets.p{i}]\ntitle = 'p{i}'\nvalues = {{ n = 64 }}\n" for i in range(2000))
        )
        try:
            t = Instructor(self.srv.url, timeout=300, headers={"X-Real-IP": "192.0.2.51"})
            await t.sign_in(KEY)
            r = await t.rerun(page="instructor_params", timeout=300)
            t.set_widget("_ed_stem", "hemisphere")
            r2 = await t.rerun(timeout=300)
            await t.close()
            return (
                f"2000 presets: editor drawn in {r.seconds:.1f} s / hemisphere list {r2.seconds:.1f} s, "
                f"{len(r2.exceptions)} exceptions"
            )
        finally:
            self.params.write_text(orig)

    # 11: uploads through nginx
    async def uploads(self) -> str:
        if not self.proxy:
            return "skipped (no nginx)"
        big = b"x" * (2**20)
        up = await asyncio.to_thread(
            post,
            f"{self.proxy}/_stcore/upload_file/nosession/nofile",
            big,
            {"Content-Type": "application/octet-stream"},
            "PUT",
        )
        other = await asyncio.to_thread(
            post, f"{self.proxy}/_app/signin", big, {"Content-Type": "application/x-www-form-urlencoded"}
        )
        return f"1 MB on the upload route: {up} (not 413); 1 MB elsewhere: {other}"

    # 13: a widget state keyed by a bare session-state name
    async def widget_state(self) -> str:
        s = StreamlitSession(self.srv.url)
        await s.load_index("/")
        await s.connect()
        await s.rerun(page="two_point", query_string="lang=en")
        ex = 0
        for _ in range(3):
            payload = raw_rerun(s, extra_ids={"_instructor": "x", "preset": "y"})
            r = await s._run(payload, 60)
            ex += len(r.exceptions)
        await s.close()
        return f"3 reruns with ids '_instructor', 'preset': {ex} exceptions"


SHAPES = {
    'presets = ["hot"]': '[two_point]\npresets = ["hot"]\n',
    "[[two_point.params]]": "[[two_point.params]]\nbeta = 1\n",
    "deep array": "x = " + "[" * 3000 + "]" * 3000 + "\n",
}


async def main_async(a) -> int:
    tmp = tempfile.mkdtemp(prefix="abuse-")
    params = Path(tmp) / "params.toml"
    shutil.copy(ROOT / "assets" / "params.toml", params)
    srv = Server(
        warm=False, env={"APP_INSTRUCTOR_KEY": KEY, "APP_PARAMS_FILE": str(params), "APP_SIGNIN_TOTAL_PER_MIN": "60"}
    )
    nginx = None
    try:
        srv.start(timeout=600)
        nginx, nport = start_nginx(srv.port, tmp)
        proxy = f"http://127.0.0.1:{nport}" if nginx else None
        b = Bench(srv, proxy, params, a.seconds)
        st = Student(srv.url)
        await st.start()
        await st.move(2)  # warm the page
        plan = {
            "1 rerun flood 4x20/s, one browser": b.flood,
            "2 cold loads from one session": (b.cold_loads, b.cold_loads_prepare),
            "3 huge client address (share box)": b.share_address,
            "4 four 180 MiB ws messages": b.big_messages,
            "5 key guesses via nginx": b.keys,
            "6 session id alone": b.session_id,
            "7 two saves at once": b.saves,
            "8 bad file shapes": lambda: _shapes(b),
            "9 2000 presets (editor)": b.editor,
            "10 bare URL in a preset title": lambda: b.bad_file(
                '[two_point.presets.hot]\ntitle = "see https://evil.example/x www.evil.example"\n'
                "values = { beta = 2.0 }\n",
                "title",
                check="evil.example",
            ),
            "11 1 MB upload via nginx": b.uploads,
            "12 OIDC without email_verified": _oidc,
            "13 widget state '_instructor'": b.widget_state,
        }
        only = [s.strip() for s in a.only.split(",")] if a.only else None
        for name, fn in plan.items():
            if only and not any(name.split()[0] == o or (not o.isdigit() and o in name) for o in only):
                continue
            print(f"{name} …", flush=True)
            fn, prep = fn if isinstance(fn, tuple) else (fn, None)
            try:
                await b.measure(name, fn, st, prep)
            except Exception as exc:  # noqa: BLE001 - one attack failing does not stop the table
                b.rows.append((name, *(float("nan"),) * 8, f"ERROR {type(exc).__name__}: {exc}"[:120]))
        await st.s.close()
        print()
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
        print(
            "| attack | student p50/p95 before (s) | during (s) | within bound | server CPU: cores (s) "
            "| RSS (MB) | load (1 min) | outcome |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, q50, q95, d50, d95, cores, cpu, rss, load, out in b.rows:
            ok = "yes" if d95 <= 2 * q95 + 0.2 else ("NO" if d95 == d95 else "–")
            print(
                f"| {name} | {q50:.3f} / {q95:.3f} | {d50:.3f} / {d95:.3f} | {ok} | {cores:.2f} ({cpu:.1f} s) "
                f"| {rss:.0f} | {load:.1f} | {out} |"
            )
        print(
            "\nthe bound for 'during': p95 <= 2 x its 'before' p95 + 0.2 s (server CPU seconds do not "
            "depend on the machine's other load; the latencies do)"
        )
        return 0
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(10)
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


async def _shapes(b: Bench) -> str:
    out = []
    for label, text in SHAPES.items():
        out.append(await b.bad_file(text, label))
    return "; ".join(out)


async def _oidc() -> str:
    from ui.teaching import instructor

    return f"verified: missing -> {instructor._verified({})}, true -> {instructor._verified({'email_verified': True})}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="length of each attack (and the quiet sample)")
    ap.add_argument("--only", default="", help="comma-separated attack numbers or words")
    a = ap.parse_args(argv)
    return asyncio.run(main_async(a))


if __name__ == "__main__":
    raise SystemExit(main())
