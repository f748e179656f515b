"""make scale-check: app replicas behind nginx on loopback, one of them killed mid-run.

What it does (everything on loopback addresses, everything it starts is stopped at the end):

1. starts one app replica per ``server`` line of ``deploy/nginx.conf`` (three:
   app1..app3; ``python -m ui.server.serve`` (``streamlit run app.py``) with the ``make run`` server settings and
   one shared cookie secret) and Debian ``nginx`` on 127.0.0.1:8610 with that
   same file, the one docker compose mounts. The upstream block is used as
   deployed: nginx runs in a private mount namespace whose /etc/hosts maps
   app1, app2, app3 to 127.0.0.11, .12, .13, where the replicas listen on the
   deployed port. Only the listen line changes, and a response header naming the
   replica that answered is added to observe stickiness. (Without ``unshare``,
   or with --rewrite-servers, the server lines become 127.0.0.1:8611.. instead.)
   The file is first checked for the one-name pitfall: every replica must have
   its own name, else nginx's consistent hash round-robins and nothing is sticky;
2. warms each replica with one direct session per page (the first student's
   compile/load cost is not what this measures);
3. drives N websocket sessions through nginx (``harness/wsclient.py``): each loads
   the index page like a browser (getting the sticky cookie), opens its websocket,
   then opens the app's pages and moves a slider on them, with think time between
   reruns, fetching some of the CSV downloads the pages offer;
4. at 1/3 of the run kills (SIGKILL) the replica holding the most sessions; those
   sessions see their websocket drop, reconnect through nginx with the same
   cookie and rerun the same page with the same widget values on a survivor;
5. at 2/3 of the run opens M new sessions, which must all succeed on survivors;
   from 1/6 of the run on, alongside the class, one client floods nginx (``--flood`` requests, 32 at
   a time), once keeping its cookie and once without cookies, from the same loopback address as the
   class (a class behind one NAT): the rate limits of ``deploy/nginx.conf`` must answer the flood
   with 429 beyond what the limit allows (burst + rate x time) while every request of the class
   keeps getting through;
6. checks: every session's page load, websocket, later requests and downloads hit
   one replica (stickiness); every replica got sessions; sessions on the surviving
   replicas had zero errors and zero disconnects; every session of the killed
   replica reconnected to a survivor, stayed there and showed its view again
   (the moved value, or the URL's view of the last completed rerun); all new
   sessions succeeded; each flood was limited and no request of a browser that holds its cookie
   was. (A browser's very first request carries no cookie; right after a cookie-less flood from
   the class's own address it may be refused for a few seconds: it reloads, and the count of such
   reloads is reported.)

The last line summarises the figures (PASS/FAIL, spread, failover, survivors' p95).
Exit status 0 only if every check passed.

    .venv/bin/python scripts/scale_check.py [--sessions 30] [--new-sessions 6] [--duration 45]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from harness.server import serve_flags  # noqa: E402
from harness.server import wait_healthy as _wait_healthy  # noqa: E402
from harness.wsclient import SessionError, StreamlitSession, http_get, percentile  # noqa: E402

HOST = "127.0.0.1"
REPLICA_HEADER = "x-streamlit-replica"


def log(msg: str) -> None:
    print(f"[scale-check {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- processes
class Procs:
    """Processes this script started (each in its own process group)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, subprocess.Popen]] = []

    def start(
        self, name: str, argv: list[str], logfile: str, env: dict[str, str] | None = None, cwd: str = ROOT
    ) -> subprocess.Popen:
        fh = open(logfile, "wb")
        p = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        fh.close()
        self.items.append((name, p))
        return p

    @staticmethod
    def kill(p: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
        if p.poll() is not None:
            return
        try:
            os.killpg(p.pid, sig)  # the group we created with start_new_session
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(5)

    def stop_all(self) -> None:
        for name, p in reversed(self.items):
            self.kill(p)


def port_free(port: int, host: str = HOST) -> bool:
    import socket

    with socket.socket() as s:
        # like the servers themselves: TIME_WAIT leftovers do not block a bind
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            return True
        except OSError:
            return False


def wait_healthy(port: int, proc: subprocess.Popen, timeout: float, host: str = HOST) -> float:
    """Seconds until ``host:port`` is healthy (bench.classroom.wait_healthy; Procs stops ``proc``)."""
    t0 = time.perf_counter()
    _wait_healthy(f"http://{host}:{port}", proc, timeout, kill=False)
    return time.perf_counter() - t0


def make_replicas(servers: list[tuple[str, int]], verbatim: bool, first_host: int, first_port: int) -> list:
    """The replicas for the deployed upstream ``servers`` ((name, port) pairs): each on its own
    loopback address 127.0.0.<first_host + i> with its deployed port when ``verbatim`` (a private
    /etc/hosts maps the names), else on HOST:<first_port + i>. Registers their names for the logs."""
    if verbatim:
        replicas = [Replica(name, f"127.0.0.{first_host + i}", port) for i, (name, port) in enumerate(servers)]
    else:
        replicas = [Replica(f"{HOST}:{first_port + i}", HOST, first_port + i) for i in range(len(servers))]
    _ADDR_NAME.update({r.addr: r.name for r in replicas})
    return replicas


def prepare_run(name: str, args: argparse.Namespace, servers: list[tuple[str, int]], first_host: int):
    """Everything a run needs before it starts processes: the replicas (:func:`make_replicas`;
    verbatim when ``--rewrite-servers`` is not given and a private /etc/hosts is possible), a check
    that nginx's and the replicas' ports are free (else it prints why and returns None), the run's
    :class:`Procs`, its temporary folder, SIGTERM raising KeyboardInterrupt (so that :func:`run_check`
    cleans up) and the start time: ``(replicas, verbatim, procs, tmp, t_all)``. Shared with
    scripts/scale_class.py."""
    verbatim = not args.rewrite_servers and can_unshare()
    replicas = make_replicas(servers, verbatim, first_host, args.first_port)
    busy = [
        f"{h}:{p}" for h, p in [(HOST, args.nginx_port)] + [(r.host, r.port) for r in replicas] if not port_free(p, h)
    ]
    if busy:
        print(f"{name}: FAIL ports busy: {busy}", flush=True)
        return None
    tmp = tempfile.mkdtemp(prefix=f"{name}.")
    os.chmod(tmp, 0o755)

    def on_signal(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    return replicas, verbatim, Procs(), tmp, time.perf_counter()


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (MB)."""
    total = 0
    pids = [pid]
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
        pids += [int(x) for x in out.stdout.split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def ensure_nginx() -> str:
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if exe:
        return exe
    log("nginx missing: apt-get install nginx")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", RUNLEVEL="1")  # do not start the service
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "nginx"], check=True, env=env, stdout=subprocess.DEVNULL)
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(exe):
        raise RuntimeError("nginx not found after apt-get install")
    return exe


@dataclass
class Replica:
    name: str  # as nginx.conf names it (app1) or its address in rewrite mode
    host: str
    port: int
    proc: subprocess.Popen | None = None

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port}"


_SERVER_RE = re.compile(r"^\s*server\s+([^\s:;]+):(\d+)\b[^;]*;", re.M)
_BLOCK_RE = re.compile(r"(?ms)^[ \t]*# BEGIN replicas.*?^[ \t]*# END replicas[^\n]*\n")


def deploy_replicas(text: str, src: str) -> list[tuple[str, int]]:
    """The replica servers of deploy/nginx.conf, checked for the one-name pitfall."""
    m = _BLOCK_RE.search(text)
    if not m:
        raise RuntimeError(f"{src}: no '# BEGIN replicas' ... '# END replicas' block")
    servers = [(h, int(p)) for h, p in _SERVER_RE.findall(m.group(0))]
    names = [h for h, _ in servers]
    if len(servers) < 2 or len(set(names)) != len(names):
        raise RuntimeError(
            f"{src}: the upstream must list each replica under its own name (got {names}); with one "
            "name for all replicas nginx's consistent hash round-robins between them: no stickiness"
        )
    return servers


def can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def render_nginx(text: str, src: str, tmp: str, listen: int, replicas: list[Replica], verbatim: bool) -> str:
    """deploy/nginx.conf with the loopback listen port and a header naming the replica.

    ``verbatim``: the upstream block stays as deployed (app1:8501 ...); the names
    resolve to loopback addresses through a private /etc/hosts (see start_nginx).
    Otherwise the server lines are replaced by the replicas' loopback addresses.
    """
    new = text
    if not verbatim:
        servers = "".join(f"    server {r.addr} max_fails=1 fail_timeout=10s;\n" for r in replicas)
        new, n1 = _BLOCK_RE.subn("    # replicas (scale-check, rewritten)\n" + servers, new)
        assert n1 == 1
    new, n2 = re.subn(r"(?m)^([ \t]*)listen [^;]*;[^\n]*# LISTEN[^\n]*$", rf"\1listen {HOST}:{listen};", new)
    new, n3 = re.subn(r"(?m)^([ \t]*)# DEBUG[^\n]*$", r"\1add_header X-Streamlit-Replica $upstream_addr always;", new)
    if (n2, n3) != (1, 1):
        raise RuntimeError(
            f"{src}: markers LISTEN and DEBUG not found once each ({n2}, {n3}); "
            "scale-check must use the deploy configuration"
        )
    site = os.path.join(tmp, "streamlit.conf")
    with open(site, "w", encoding="utf-8") as fh:
        fh.write(new)
    main = os.path.join(tmp, "nginx.conf")
    for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    with open(main, "w", encoding="utf-8") as fh:
        fh.write(f"""worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 2048; }}
http {{
    access_log {tmp}/nginx-access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {site};
}}
""")
    return main


def nginx_argv(nginx: str, tmp: str, conf: str, replicas: list[Replica], verbatim: bool, extra: list[str]) -> list[str]:
    """nginx, in a private mount namespace whose /etc/hosts maps app1.. to loopback addresses."""
    argv = [nginx, "-p", tmp, "-c", conf, *extra]
    if not verbatim:
        return argv
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w", encoding="utf-8") as fh:
        fh.write("127.0.0.1 localhost\n" + "".join(f"{r.host} {r.name}\n" for r in replicas))
    inner = 'mount --bind "$0" /etc/hosts && exec "$@"'
    return ["unshare", "-m", "sh", "-c", inner, hosts, *argv]


def start_fleet(
    procs: Procs,
    args: argparse.Namespace,
    tmp: str,
    env: dict,
    nginx: str,
    conf_text: str,
    replicas: list[Replica],
    verbatim: bool,
) -> subprocess.Popen:
    """Start every replica (``python -m ui.server.serve`` as ``make run`` starts it, on the replica's
    address) and nginx in front of them, after ``nginx -t`` accepts the rendered configuration; the
    nginx process. Shared by this check and ``scripts/scale_class.py``; neither waits here."""
    for r in replicas:
        r.proc = procs.start(
            f"replica {r.name}",
            [args.python, "-m", "ui.server.serve", *serve_flags(r.port, r.host)],
            os.path.join(tmp, f"replica-{r.name}.log"),
            env=env,
        )
    conf = render_nginx(conf_text, args.nginx_conf, tmp, args.nginx_port, replicas, verbatim)
    t = subprocess.run(nginx_argv(nginx, tmp, conf, replicas, verbatim, ["-t"]), capture_output=True, text=True)
    if t.returncode != 0:
        raise RuntimeError(f"nginx -t: {t.stderr.strip()}")
    return procs.start(
        "nginx",
        nginx_argv(nginx, tmp, conf, replicas, verbatim, ["-g", "daemon off;"]),
        os.path.join(tmp, "nginx.out"),
    )


# --------------------------------------------------------------------------- sessions
_ADDR_NAME: dict[str, str] = {}


def replica_of(headers: dict[str, str]) -> str | None:
    """The replica that answered (its name): the last address nginx tried."""
    v = headers.get(REPLICA_HEADER)
    if not v:
        return None
    addr = v.split(",")[-1].strip()
    return _ADDR_NAME.get(addr, addr)


@dataclass
class Sess:
    idx: int
    phase: str  # "initial" or "new"
    s: StreamlitSession
    http_replica: str | None = None
    ws_replica: str | None = None
    replicas_seen: list[str] = field(default_factory=list)
    checks: list[tuple[str, str | None]] = field(default_factory=list)  # (when, replica) of later GETs
    media: list[tuple[float, int, str | None, str | None]] = field(default_factory=list)
    # (t, HTTP status, replica that answered, replica the session was on) of download-file GETs
    reruns: list[tuple[float, float, str | None]] = field(default_factory=list)  # (t, seconds, replica)
    errors: list[str] = field(default_factory=list)
    drops: int = 0
    reconnects: list[float] = field(default_factory=list)  # seconds from drop to a good rerun
    after_reconnect: str | None = None
    restored: int = 0  # failovers mid-move after which every widget showed the moved value
    restored_url: int = 0  # ... showed the view of the last completed rerun (move in flight lost)
    first_load_429: int = 0  # reloads of the very first page load (no cookie yet) answered 429
    done: bool = False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a))
    return a == b


async def sticky_get(sess: Sess, path: str = "/_stcore/health") -> str | None:
    hdrs = {"Cookie": sess.s.cookie_header()} if sess.s.cookies else {}
    status, rh, _, _ = await asyncio.to_thread(http_get, sess.s.base_url + path, headers=hdrs, timeout=10)
    return replica_of(rh) if status == 200 else f"HTTP {status}"


def pick_slider(s: StreamlitSession) -> tuple[str, float] | None:
    """A keyed slider on the page and a value one step away from its current one."""
    vals = s.widget_values
    for key, val in vals.items():
        try:
            el = s.widget(key)
        except KeyError:
            continue
        if el.DESCRIPTOR.name != "Slider" or not isinstance(val, float) or el.options:
            continue
        step = el.step or (el.max - el.min) / 20
        new = val + step if val + step <= el.max else val - step
        return key, round(new, 10)
    return None


async def drive(
    sess: Sess, pages: list[str], until: float, t0: float, rng: random.Random, think: tuple[float, float]
) -> None:
    s = sess.s
    try:
        status, rh = await s.load_index("/")
        while status == 429 and sess.first_load_429 < 15:
            # A newcomer (no cookie yet) right after a cookie-less flood from the same address: the
            # per-address limit for newcomers is spent for a few seconds; a student presses reload.
            sess.first_load_429 += 1
            await asyncio.sleep(1.0)
            status, rh = await s.load_index("/")
        if status != 200:
            sess.errors.append(f"GET / -> {status}")
            return
        sess.http_replica = replica_of(rh)
        await s.connect()
        sess.ws_replica = replica_of(s.response_headers)
        sess.replicas_seen.append(sess.ws_replica or "?")
    except SessionError as exc:
        sess.errors.append(f"connect: {exc}")
        return
    i = rng.randrange(len(pages))
    plan: list[tuple[str | None, dict[str, Any] | None]] = []
    while time.monotonic() < until:
        if not plan:
            page = pages[i % len(pages)]
            i += 1
            plan = [(page, None), (None, "move")]  # open the page at defaults, then drag a slider
        page, action = plan.pop(0)
        widgets = None
        if action == "move":
            mv = pick_slider(s)
            if mv is None:
                continue
            widgets = {mv[0]: mv[1]}
        dropped_at: float | None = None
        # What the student sees after this rerun, failover or not (same page only).
        before = dict(s.widget_values) if page is None else None
        expected = {**before, **(widgets or {})} if before is not None else None
        for attempt in range(3):
            try:
                r = await s.rerun(page=page, widgets=widgets) if page is not None else await s.rerun(widgets=widgets)
            except SessionError as exc:
                r = None
                err = str(exc)
            else:
                err = r.error
            if r is not None and r.ok:
                rep = sess.replicas_seen[-1] if sess.replicas_seen else None
                sess.reruns.append((time.monotonic() - t0, r.seconds, rep))
                if dropped_at is not None:
                    sess.reconnects.append(time.monotonic() - dropped_at)
                    sess.after_reconnect = rep
                    if expected is not None and before is not None:
                        now = s.widget_values
                        lost = {k: (v, now.get(k)) for k, v in expected.items() if not _same(v, now.get(k))}
                        if not lost:
                            sess.restored += 1
                        elif all(_same(before.get(k), now.get(k)) for k in lost):
                            # The new replica rebuilt the view from the URL, i.e. as of the last
                            # completed rerun: the one move in flight when the replica died is lost.
                            sess.restored_url += 1
                        else:
                            sess.errors.append(f"view not restored on the new replica: {lost}")
                if r.media_urls and len(sess.media) < 4:
                    # A CSV download lives in the memory of the replica that ran the page.
                    hdrs = {"Cookie": s.cookie_header()} if s.cookies else {}
                    mu = r.media_urls[rng.randrange(len(r.media_urls))]
                    st_, mh, _, _ = await asyncio.to_thread(
                        http_get, s.base_url + "/" + mu.lstrip("/"), headers=hdrs, timeout=10
                    )
                    sess.media.append((time.monotonic() - t0, st_, replica_of(mh), rep))
                break
            if r is not None and r.error is None:
                # The page itself failed (exception / compile error): an app error.
                sess.errors.append(f"rerun {page or '(same page)'}: {r.exceptions or r.finished}")
                break
            if err and (err.startswith("closed") or "not connected" in err or "Error" in err):
                # The websocket dropped: reconnect like the frontend, rerun the same request.
                sess.drops += 1
                dropped_at = dropped_at or time.monotonic()
                try:
                    await s.reconnect(attempts=20, delay=0.3)
                except SessionError as exc:
                    sess.errors.append(f"reconnect: {exc}")
                    return
                sess.replicas_seen.append(replica_of(s.response_headers) or "?")
                continue
            sess.errors.append(f"rerun {page or '(same page)'}: {err}")
            break
        else:
            sess.errors.append("rerun failed three times")
        if len(sess.checks) < 3 and rng.random() < 0.3:
            sess.checks.append((f"{time.monotonic() - t0:.1f}", await sticky_get(sess)))
        await asyncio.sleep(rng.uniform(*think))
    # A last check that the browser's cookie still leads to the replica it is on.
    sess.checks.append(("end", await sticky_get(sess)))
    sess.done = True
    await s.close()


# --------------------------------------------------------------------------- flood
async def flood(url: str, n: int, keep_cookie: bool, concurrency: int = 32) -> dict[int, int]:
    """One client sending ``n`` GETs as fast as it can; returns {HTTP status: count}.

    ``keep_cookie``: a client that keeps its sticky cookie (its own rate-limit key); otherwise
    every request comes without cookies (the per-address limit for newcomers applies)."""
    hdrs: dict[str, str] = {}
    if keep_cookie:
        _, _, set_cookies, _ = await asyncio.to_thread(http_get, url + "/", timeout=10)
        cookie = "; ".join(c.split(";", 1)[0] for c in set_cookies)
        if cookie:
            hdrs["Cookie"] = cookie
    counts: dict[int, int] = {}
    todo = iter(range(n))

    async def worker() -> None:
        for _ in todo:
            try:
                status, _, _, _ = await asyncio.to_thread(http_get, url + "/_stcore/health", headers=hdrs, timeout=10)
            except OSError:
                status = 0
            counts[status] = counts.get(status, 0) + 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return counts


# --------------------------------------------------------------------------- scenario
async def scenario(args: argparse.Namespace, url: str, replicas: list[Replica]) -> tuple[bool, str]:
    rng = random.Random(args.seed)
    # pages from the app's navigation
    async with StreamlitSession(url, timeout=90) as probe:
        first = await probe.rerun()
        if not first.ok:
            return False, f"first page failed: {first.error or first.exceptions}"
        pages = sorted(probe.pages) or [""]
    log(f"pages: {[p or '/' for p in pages]}")

    t0 = time.monotonic()
    until = t0 + args.duration
    sessions: list[Sess] = []
    tasks: list[asyncio.Task] = []
    for k in range(args.sessions):
        sess = Sess(k, "initial", StreamlitSession(url, timeout=60))
        sessions.append(sess)
        tasks.append(
            asyncio.create_task(
                drive(sess, pages, until, t0, random.Random(rng.random()), (args.think_min, args.think_max))
            )
        )
        await asyncio.sleep(args.ramp / max(1, args.sessions))

    floods: dict[str, tuple[dict[int, int], float]] = {}

    async def run_floods() -> None:
        await asyncio.sleep(max(0.0, t0 + args.duration / 6 - time.monotonic()))
        for name, keep in (("cookie", True), ("no_cookie", False)):
            t1 = time.monotonic()
            counts = await flood(url, args.flood, keep)
            floods[name] = (counts, time.monotonic() - t1)
            log(
                f"flood from one client ({name}): {args.flood} requests in {floods[name][1]:.1f} s, "
                f"statuses {dict(sorted(counts.items()))}"
            )

    flood_task = asyncio.create_task(run_floods()) if args.flood else None

    await asyncio.sleep(max(0.0, t0 + args.duration / 3 - time.monotonic()))
    before: dict[str, int] = {}
    for x in sessions:
        if x.ws_replica:
            before[x.ws_replica] = before.get(x.ws_replica, 0) + 1
    by_name = {r.name: r for r in replicas}
    victim = max(before, key=lambda p: before[p]) if before else replicas[1].name
    t_kill = time.monotonic() - t0
    log(
        f"sessions per replica before the kill: {dict(sorted(before.items()))}; killing {victim} "
        f"({by_name[victim].addr}, pid {by_name[victim].proc.pid}) with SIGKILL"
    )
    Procs.kill(by_name[victim].proc, signal.SIGKILL)

    await asyncio.sleep(max(0.0, t0 + 2 * args.duration / 3 - time.monotonic()))
    log(f"opening {args.new_sessions} new sessions")
    for k in range(args.new_sessions):
        sess = Sess(args.sessions + k, "new", StreamlitSession(url, timeout=60))
        sessions.append(sess)
        tasks.append(
            asyncio.create_task(
                drive(sess, pages, until, t0, random.Random(rng.random()), (args.think_min, args.think_max))
            )
        )
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.duration + 120)
    if flood_task is not None:
        await asyncio.wait_for(flood_task, timeout=120)

    # ------------------------------------------------------------------ verdict
    survivors = {r.name for r in replicas} - {victim}
    fails: list[str] = []
    initial = [x for x in sessions if x.phase == "initial"]
    new = [x for x in sessions if x.phase == "new"]
    on_victim = [x for x in initial if x.ws_replica == victim]
    on_surv = [x for x in initial if x.ws_replica in survivors]

    spread = {r.name: sum(1 for x in initial if x.ws_replica == r.name) for r in replicas}
    if min(spread.values()) == 0:
        fails.append(f"not every replica got sessions: {spread}")
    sticky_ok = 0
    for x in sessions:
        first_rep = x.ws_replica
        ok = x.http_replica is not None and x.http_replica == x.ws_replica
        # before any failover every later request must hit the same replica
        final_rep = x.replicas_seen[-1] if x.replicas_seen else None
        for when, rep in x.checks:
            if x.drops == 0 and rep != first_rep:
                ok = False
            if when == "end" and rep != final_rep:
                ok = False
        if ok:
            sticky_ok += 1
        else:
            fails.append(
                f"session {x.idx}: not sticky: page load -> {x.http_replica}, websocket -> "
                f"{x.ws_replica}, later requests {x.checks}, replicas {x.replicas_seen}"
            )
    media_n = media_bad = 0
    for x in sessions:
        for t, status, got, expected in x.media:
            if expected == victim and t >= t_kill - 1.0:
                continue  # its replica may be gone already: that is the failover case
            media_n += 1
            if status != 200 or got != expected:
                media_bad += 1
                fails.append(f"session {x.idx}: download file -> HTTP {status} from {got}, session on {expected}")
    surv_err = [x for x in on_surv if x.errors or x.drops]
    for x in surv_err:
        fails.append(f"session {x.idx} on surviving replica {x.ws_replica}: drops={x.drops} errors={x.errors}")
    reconnected = [
        x
        for x in on_victim
        if x.drops and x.after_reconnect in survivors and not x.errors and x.replicas_seen[-1] in survivors
    ]
    for x in on_victim:
        if x not in reconnected:
            fails.append(
                f"session {x.idx} on killed replica: drops={x.drops} errors={x.errors} "
                f"replicas={x.replicas_seen} after={x.after_reconnect}"
            )
    new_ok = [x for x in new if not x.errors and x.reruns and x.ws_replica in survivors and x.done]
    for x in new:
        if x not in new_ok:
            fails.append(f"new session {x.idx}: replica={x.ws_replica} errors={x.errors} reruns={len(x.reruns)}")
    if not on_victim:
        fails.append("the killed replica held no session")
    surv_times = [sec for x in on_surv for (_, sec, _) in x.reruns]
    surv_after = [sec for x in on_surv for (t, sec, _) in x.reruns if t >= t_kill]
    all_times = [sec for x in sessions for (_, sec, _) in x.reruns]
    p95 = percentile(surv_times, 95)
    p95_after = percentile(surv_after, 95)
    rec = [r for x in on_victim for r in x.reconnects]
    moved = {}
    for x in reconnected:
        moved[x.after_reconnect] = moved.get(x.after_reconnect, 0) + 1

    log(
        f"reruns: {len(all_times)} in total, p50 {percentile(all_times, 50):.3f} s, "
        f"p95 {percentile(all_times, 95):.3f} s, max {max(all_times, default=float('nan')):.3f} s"
    )
    log(
        f"survivors' sessions: {len(on_surv)}, reruns {len(surv_times)}, p95 {p95:.3f} s "
        f"(after the kill {p95_after:.3f} s), sessions with errors {len(surv_err)}"
    )
    log(
        f"killed replica's sessions: {len(on_victim)}, reconnected to a survivor {len(reconnected)} "
        f"(to {dict(sorted(moved.items()))}), reconnect-to-rerun max "
        f"{max(rec, default=float('nan')):.2f} s, median {percentile(rec, 50):.2f} s"
    )
    restored = sum(x.restored for x in on_victim)
    restored_url = sum(x.restored_url for x in on_victim)
    log(
        f"failovers during a slider move: {restored} showed the moved value on the new replica, "
        f"{restored_url} the view of the last completed rerun (from the URL; the move in flight was lost), "
        f"0 allowed to lose more"
    )
    log(f"new sessions after the kill: {len(new_ok)}/{len(new)} ok on survivors")
    log(f"download files fetched through nginx: {media_n - media_bad}/{media_n} served by the session's replica")
    limited_s = ""
    if floods:
        waits = [x.first_load_429 for x in sessions if x.first_load_429]
        # once a browser has its cookie it has its own budget: none of its requests may be refused
        class_429 = sum(1 for x in sessions for (_, rep) in x.checks if rep == "HTTP 429")
        class_429 += sum(1 for x in sessions for m in x.media if m[1] == 429)
        class_429 += sum(1 for x in sessions for e in x.errors if "429" in e)
        parts = []
        for name, (c, secs) in floods.items():
            # what the limit lets through: the burst at once, then the rate (25 % + 10 slack)
            rate, burst = args.limits[{"cookie": "st_client", "no_cookie": "st_new"}[name]]
            allowed = 1.25 * (burst + rate * secs) + 10
            parts.append(f"{name}:{c.get(429, 0)}/{sum(c.values())}")
            if not c.get(429) or c.get(200, 0) > allowed:
                fails.append(
                    f"flood from one client ({name}) not limited: statuses {c} in {secs:.1f} s "
                    f"(the limit allows about {allowed:.0f})"
                )
        if class_429:
            fails.append(f"the class was rate-limited: {class_429} requests answered 429")
        limited_s = (
            f" flood_limited={','.join(parts)} class_429={class_429} "
            f"newcomer_reloads={sum(waits)}({len(waits)} sessions)"
        )
    for f in fails[:20]:
        log("FAIL " + f)
    ok = not fails
    spread_s = "/".join(str(spread[r.name]) for r in replicas)
    line = (
        f"scale-check: {'PASS' if ok else 'FAIL'} replicas={len(replicas)} sessions={len(initial)} "
        f"spread={spread_s} sticky={sticky_ok}/{len(sessions)} downloads={media_n - media_bad}/{media_n} "
        f"killed={victim}({len(on_victim)} sessions) "
        f"survivors_errors={len(surv_err)}/{len(on_surv)} reconnected={len(reconnected)}/{len(on_victim)}"
        f"(max {max(rec, default=float('nan')):.1f}s) new_sessions={len(new_ok)}/{len(new)} "
        f"survivors_p95={p95:.2f}s(after kill {p95_after:.2f}s) reruns={len(all_times)}{limited_s}"
    )
    return ok, line


def run_check(name: str, body, procs: Procs, tmp: str, t_all: float) -> int:
    """Run ``body() -> (ok, line)``, print its line (``<name>: FAIL …`` on an interrupt or an error,
    with the processes' logs dumped), always stop every process and remove ``tmp``; the exit code.
    Shared with scripts/scale_class.py."""
    ok, line = False, f"{name}: FAIL (did not finish)"
    try:
        ok, line = body()
    except KeyboardInterrupt:
        line = f"{name}: FAIL interrupted"
    except Exception as exc:  # noqa: BLE001 - report, clean up, fail
        line = f"{name}: FAIL {type(exc).__name__}: {exc}"
        dump_logs(tmp)
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"stopped {len(procs.items)} processes; total {time.perf_counter() - t_all:.0f} s")
    print(line, flush=True)
    return 0 if ok else 1


def dump_logs(tmp: str) -> None:
    """After a failure: the last 1500 characters of every process log in ``tmp``."""
    for name in sorted(os.listdir(tmp)):
        if name.endswith(".log") or name.endswith(".out"):
            with open(os.path.join(tmp, name), errors="replace") as fh:
                log(f"--- {name}\n{fh.read()[-1500:]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Replicas + nginx on loopback; kill one mid-run.")
    ap.add_argument("--sessions", type=int, default=30, help="sessions opened at the start")
    ap.add_argument("--new-sessions", type=int, default=6, help="sessions opened after the kill")
    ap.add_argument("--duration", type=float, default=45.0, help="seconds of load")
    ap.add_argument("--ramp", type=float, default=4.0, help="seconds over which sessions open")
    ap.add_argument("--think-min", type=float, default=2.0, help="seconds between a student's actions")
    ap.add_argument("--think-max", type=float, default=5.0)
    ap.add_argument("--nginx-port", type=int, default=8610)
    ap.add_argument("--first-port", type=int, default=8611, help="replica ports in --rewrite-servers mode")
    ap.add_argument(
        "--rewrite-servers",
        action="store_true",
        help="replace the upstream server lines by 127.0.0.1:PORT instead of resolving the "
        "deployed names to loopback addresses in a private /etc/hosts (needs unshare)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--flood",
        type=int,
        default=600,
        help="requests of the one flooding client, with and without its cookie (0: no flood)",
    )
    ap.add_argument(
        "--nginx-conf",
        default=os.path.join(ROOT, "deploy", "nginx.conf"),
        help="the site configuration to test (default: the deploy one)",
    )
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    args = ap.parse_args(argv)

    if not os.path.exists(os.path.join(ROOT, "app.py")):
        print("scale-check: FAIL no app.py", flush=True)
        return 1
    with open(args.nginx_conf, encoding="utf-8") as fh:
        conf_text = fh.read()
    args.limits = {}
    for zone in ("st_client", "st_new"):
        r = re.search(rf"zone={zone}:\S+\s+rate=(\d+)r/s", conf_text)
        b = re.search(rf"limit_req\s+zone={zone}\s+burst=(\d+)", conf_text)
        if args.flood and not (r and b):
            print(f"scale-check: FAIL {args.nginx_conf}: no per-client rate limit zone {zone}", flush=True)
            return 1
        args.limits[zone] = (int(r.group(1)), int(b.group(1))) if r and b else (0, 0)
    try:
        servers = deploy_replicas(conf_text, args.nginx_conf)
    except RuntimeError as exc:
        print(f"scale-check: FAIL {exc}", flush=True)
        return 1
    # verbatim: the deployed upstream block as-is: app1:8501 -> 127.0.0.11:8501, app2 -> .12, ...
    run = prepare_run("scale-check", args, servers, first_host=11)
    if run is None:
        return 1
    replicas, verbatim, procs, tmp, t_all = run

    def body() -> tuple[bool, str]:
        nginx = ensure_nginx()
        log(
            f"nginx with {os.path.relpath(args.nginx_conf, ROOT)}: "
            + (
                "upstream block as deployed, "
                + ", ".join(f"{r.name} -> {r.addr}" for r in replicas)
                + " (private /etc/hosts)"
                if verbatim
                else "server lines rewritten to " + ", ".join(r.addr for r in replicas)
            )
        )
        env = dict(os.environ, STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_hex(32), PYTHONUNBUFFERED="1")
        ng = start_fleet(procs, args, tmp, env, nginx, conf_text, replicas, verbatim)
        for r in replicas:
            sec = wait_healthy(r.port, r.proc, 120, r.host)
            log(f"replica {r.name} ({r.addr}) healthy after {sec:.1f} s")
        wait_healthy(args.nginx_port, ng, 20)

        # warm each replica directly (first run loads the Numba cache, builds caches)
        async def warm() -> list[float]:
            out = []
            for r in replicas:
                t1 = time.perf_counter()
                async with StreamlitSession(f"http://{r.addr}", timeout=120) as s:
                    res = await s.rerun()
                    if not res.ok:
                        raise RuntimeError(f"replica {r.name} default page: {res.error or res.exceptions}")
                    for page in sorted(s.pages):
                        res = await s.rerun(page=page)
                        if not res.ok:
                            raise RuntimeError(f"replica {r.name} page {page}: {res.error or res.exceptions}")
                out.append(time.perf_counter() - t1)
            return out

        warm_s = asyncio.run(warm())
        log("replicas warmed (every page once, directly): " + ", ".join(f"{x:.1f} s" for x in warm_s))
        rss0 = {r.name: rss_mb(r.proc.pid) for r in replicas}
        ok, line = asyncio.run(scenario(args, f"http://{HOST}:{args.nginx_port}", replicas))
        rss1 = {r.name: rss_mb(r.proc.pid) for r in replicas if r.proc.poll() is None}
        log(
            "replica RSS after warm-up: "
            + ", ".join(f"{k} {v:.0f} MB" for k, v in rss0.items())
            + "; at the end (survivors): "
            + ", ".join(f"{k} {v:.0f} MB" for k, v in rss1.items())
        )
        with open(os.path.join(tmp, "nginx-error.log"), encoding="utf-8", errors="replace") as fh:
            errs = [ln for ln in fh if "[emerg]" in ln or "[alert]" in ln]
        if errs:
            ok = False
            line = line.replace("PASS", "FAIL") + f" nginx_errors={len(errs)}"
        return ok, line

    return run_check("scale-check", body, procs, tmp, t_all)


if __name__ == "__main__":
    sys.exit(main())
