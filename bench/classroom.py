"""A classroom at once: N concurrent Streamlit sessions over the websocket protocol.

Starts the server the way ``make run`` does (``python -m sim.warm``, then ``python -m ui.server.serve``,
i.e. ``streamlit run app.py`` with the Makefile's ``SERVE_FLAGS``, on a free loopback port), stops it
at the end, and drives N browser-less sessions (``harness/wsclient.py``) that all start together.
Each session opens the app, then for every page in ``ui.kit.nav.PAGES``:

1. ``defaults``: opens the page (a fresh visit: defaults);
2. ``slider``:   moves the first slider to a value of its own (a widget state, like a drag);
3. ``link``:     opens the page from a shared link with every parameter changed (query string).

Reports per page the p50/p95 rerun time (request sent -> ``script_finished``), total wall time,
server RSS (``/proc/<pid>/status`` VmRSS) before and after, dropped sessions (connection lost,
timeouts) and exceptions (``delta.new_element.exception``) and error alerts::

    .venv/bin/python bench/classroom.py            # N = 50, everyone clicks at the same instant
    .venv/bin/python bench/classroom.py -n 10 --json out.json
    .venv/bin/python bench/classroom.py --think 2 --spread 20   # pauses ~2 s, arrivals over 20 s
    .venv/bin/python bench/classroom.py --rounds 2  # a second class: does memory keep growing?
    .venv/bin/python bench/classroom.py --flag runner.postScriptGC=true   # try a server option
                                                                          # (here: Streamlit's default GC)

The first slider takes a different value in every session (cache misses: the page's real
compute), the link is the same for all (cache hits after the first).

Targets: N = 50 with zero errors, p95 <= 2 s, RSS growth <= 5 MB per session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import add_flag_option, flag_args  # noqa: E402
from harness.plans import PagePlan, plans  # noqa: E402,F401 - plans: the CLI's and test_classroom's
from harness.server import Server, cpu_s, rss_mb, serve_flags, url_path  # noqa: E402
from harness.wsclient import SessionError, StreamlitSession, percentile  # noqa: E402

TARGET_P95_S = 2.0
TARGET_MB_PER_SESSION = 5.0
KINDS = ("defaults", "slider", "link")


# --------------------------------------------------------------------------- one student
@dataclass
class Sample:
    stem: str
    kind: str
    seconds: float
    ok: bool
    exceptions: list[str]
    error_alerts: list[str]
    error: str | None


@dataclass
class SessionReport:
    index: int
    samples: list[Sample] = field(default_factory=list)
    dropped: str | None = None  # why the session was lost, if it was
    finished_at: float = 0.0


async def student(
    i: int,
    url: str,
    plan: list[PagePlan],
    start: asyncio.Event,
    timeout: float,
    lang: str,
    hold: asyncio.Event | None = None,
    finished: list | None = None,
    think: float = 0.0,
    spread: float = 0.0,
) -> SessionReport:
    """One student: open the app, then every page three ways. With ``hold`` the websocket stays
    open until the event is set (so the server's memory is read with the whole class connected).

    ``spread``: the student arrives uniformly within that many seconds after the start;
    ``think``: mean pause (uniform in [0, 2*think]) before each action. Both 0 (the default) is
    the worst case: the whole class clicks at the same instant, and again as soon as it can."""
    rep = SessionReport(i)
    s = StreamlitSession(url, locale="zh-CN" if lang == "zh" else "en-US", timeout=timeout)
    rng = random.Random(i)
    await start.wait()
    if spread > 0:
        await asyncio.sleep(rng.uniform(0.0, spread))
    try:
        await s.connect()
        r = await s.rerun(page="", query_string=f"lang={lang}")
        rep.samples.append(Sample("(open app)", "defaults", r.seconds, r.ok, r.exceptions, r.error_alerts, r.error))
        if r.error:
            rep.dropped = r.error
            return rep
        for pp in plan:
            path = url_path(pp.stem)
            steps = [("defaults", dict(page=path, query_string=f"lang={lang}"))]
            if pp.slider:
                v = pp.slider_values[i % len(pp.slider_values)]
                steps.append(("slider", dict(widgets={pp.slider: v})))
            steps.append(("link", dict(page=path, query_string=urlencode({**pp.link_query, "lang": lang}))))
            for kind, kw in steps:
                if think > 0:
                    await asyncio.sleep(rng.uniform(0.0, 2.0 * think))
                try:
                    r = await s.rerun(**kw)
                except KeyError as exc:  # the widget was not on the page
                    rep.samples.append(Sample(pp.stem, kind, 0.0, False, [f"missing widget: {exc}"], [], None))
                    continue
                rep.samples.append(
                    Sample(pp.stem, kind, r.seconds, r.ok and not r.error_alerts, r.exceptions, r.error_alerts, r.error)
                )
                if r.error:
                    rep.dropped = f"{pp.stem}/{kind}: {r.error}"
                    return rep
    except SessionError as exc:
        rep.dropped = str(exc)
    finally:
        rep.finished_at = time.perf_counter()
        if finished is not None:
            finished.append(rep)
        if hold is not None and rep.dropped is None:
            await hold.wait()
        await s.close()
    return rep


# --------------------------------------------------------------------------- the class
@dataclass
class ClassroomResult:
    n: int
    wall_s: float
    rss_before_mb: float
    rss_after_mb: float
    rss_idle_mb: float
    sessions: list[SessionReport]
    stems: list[str]
    cpu_s: float = float("nan")  # server CPU seconds while the class ran
    rss_rounds_mb: list = field(default_factory=list)  # RSS after each later round (same plan)

    @property
    def samples(self) -> list[Sample]:
        return [x for s in self.sessions for x in s.samples]

    @property
    def dropped(self) -> list[str]:
        return [f"session {s.index}: {s.dropped}" for s in self.sessions if s.dropped]

    @property
    def exceptions(self) -> list[str]:
        return [f"{x.stem}/{x.kind}: {e}" for x in self.samples for e in x.exceptions]

    @property
    def error_alerts(self) -> list[str]:
        return [f"{x.stem}/{x.kind}: {e[:200]}" for x in self.samples for e in x.error_alerts]

    @property
    def errors(self) -> list[str]:
        return self.dropped + self.exceptions + self.error_alerts

    @property
    def mb_per_session(self) -> float:
        return (self.rss_after_mb - self.rss_before_mb) / max(self.n, 1)

    def per_page(self) -> list[dict]:
        rows = []
        for stem in self.stems:
            xs = [x for x in self.samples if x.stem == stem and x.error is None]
            row = {
                "page": stem,
                "reruns": len(xs),
                "p50_s": percentile([x.seconds for x in xs], 50),
                "p95_s": percentile([x.seconds for x in xs], 95),
                "max_s": max((x.seconds for x in xs), default=float("nan")),
                "errors": sum(len(x.exceptions) + len(x.error_alerts) for x in xs),
            }
            for k in KINDS:
                row[f"p95_{k}_s"] = percentile([x.seconds for x in xs if x.kind == k], 95)
            rows.append(row)
        return rows

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "wall_s": self.wall_s,
            "rss_before_mb": self.rss_before_mb,
            "rss_after_mb": self.rss_after_mb,
            "rss_idle_mb": self.rss_idle_mb,
            "cpu_s": self.cpu_s,
            "rss_rounds_mb": self.rss_rounds_mb,
            "mb_per_session": self.mb_per_session,
            "pages": self.per_page(),
            "dropped": self.dropped,
            "exceptions": self.exceptions,
            "error_alerts": self.error_alerts,
        }

    def table(self) -> str:
        lines = [
            f"{'page':<16} {'reruns':>6} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
            f"{'p95 dflt':>8} {'p95 sldr':>8} {'p95 link':>8} {'errors':>6}"
        ]
        for r in self.per_page():
            lines.append(
                f"{r['page']:<16} {r['reruns']:>6} {r['p50_s']:>7.3f} {r['p95_s']:>7.3f} "
                f"{r['max_s']:>7.3f} {r['p95_defaults_s']:>8.3f} {r['p95_slider_s']:>8.3f} "
                f"{r['p95_link_s']:>8.3f} {r['errors']:>6}"
            )
        allx = [x.seconds for x in self.samples if x.error is None and x.stem in self.stems]
        lines.append(
            f"{'all pages':<16} {len(allx):>6} {percentile(allx, 50):>7.3f} "
            f"{percentile(allx, 95):>7.3f} {max(allx, default=float('nan')):>7.3f}"
        )
        lines.append("")
        lines.append(
            f"sessions {self.n}, wall {self.wall_s:.1f} s, dropped {len(self.dropped)}, "
            f"exceptions {len(self.exceptions)}, error alerts {len(self.error_alerts)}"
        )
        nrun = len(allx)
        lines.append(
            f"server CPU {self.cpu_s:.1f} s for {nrun} reruns = {1e3 * self.cpu_s / max(nrun, 1):.0f} ms "
            f"per rerun (not inflated by other work on the machine; the wall time is)"
        )
        lines.append(
            f"server RSS: after one warm-up visit {self.rss_before_mb:.0f} MB, with {self.n} sessions "
            f"done {self.rss_after_mb:.0f} MB -> {self.mb_per_session:+.2f} MB/session "
            f"(target <= {TARGET_MB_PER_SESSION:g}); idle server before warm-up {self.rss_idle_mb:.0f} MB"
        )
        for k, r in enumerate(self.rss_rounds_mb, start=2):
            lines.append(
                f"  round {k} (a new class of {self.n} sessions, same plan, previous class disconnected): "
                f"RSS {r:.0f} MB ({r - self.rss_after_mb:+.0f} MB vs round 1)"
            )
        return "\n".join(lines)


async def _warm_up(url: str, plan: list[PagePlan], timeout: float) -> list[str]:
    """One session visits every page once (imports, Numba, caches of the defaults)."""
    rep = await student(0, url, plan, _set_event(), timeout, "en")
    return [
        *([rep.dropped] if rep.dropped else []),
        *(f"{x.stem}/{x.kind}: {e}" for x in rep.samples for e in x.exceptions + x.error_alerts),
    ]


def _set_event() -> asyncio.Event:
    ev = asyncio.Event()
    ev.set()
    return ev


def _sum(f, pids) -> float:
    return sum(f(p) for p in pids) if pids else float("nan")


async def run_classroom(
    url: str | list[str],
    n: int,
    pid: int | list[int] | None = None,
    *,
    stems: list[str] | None = None,
    timeout: float = 120.0,
    lang_mix: bool = True,
    warm_up: bool = True,
    rounds: int = 1,
    think: float = 0.0,
    spread: float = 0.0,
    same_values: bool = False,
    distinct: int | None = None,
) -> ClassroomResult:
    """Drive ``n`` concurrent sessions against a running server; ``pid`` for RSS/CPU readings.

    ``url`` may be a list of replicas: student ``i`` then uses ``url[i % len(url)]`` for its whole
    session, which is what a sticky load balancer does (minus the proxy); RSS and CPU are summed
    over ``pid`` (a list, one per replica).

    With ``rounds > 1`` further classes with the same plan follow (after the previous one
    disconnected); their RSS shows whether memory keeps growing per session or is the bounded
    ``st.cache_data`` filling up (same values: cache hits)."""
    urls = [url] if isinstance(url, str) else list(url)
    pids = [] if pid is None else [pid] if isinstance(pid, int) else list(pid)
    plan = plans(n, stems, same_values, distinct)
    idle = _sum(rss_mb, pids)
    if warm_up:
        for u in urls:
            problems = await _warm_up(u, plan, timeout)
            if problems:
                print("warm-up problems:", *problems[:5], sep="\n  ", file=sys.stderr)
    before = _sum(rss_mb, pids)
    cpu0 = _sum(cpu_s, pids)
    sessions, wall, after = await _one_class(urls, n, plan, timeout, lang_mix, pids, think, spread)
    cpu = _sum(cpu_s, pids) - cpu0
    later = []
    for _ in range(rounds - 1):
        await _one_class(urls, n, plan, timeout, lang_mix, pids, think, spread)
        later.append(_sum(rss_mb, pids))
    return ClassroomResult(n, wall, before, after, idle, list(sessions), [p.stem for p in plan], cpu, later)


async def _one_class(
    urls: list[str],
    n: int,
    plan: list[PagePlan],
    timeout: float,
    lang_mix: bool,
    pids: list[int],
    think: float = 0.0,
    spread: float = 0.0,
) -> tuple[list[SessionReport], float, float]:
    start, hold, finished = asyncio.Event(), asyncio.Event(), []
    tasks = [
        asyncio.create_task(
            student(
                i,
                urls[i % len(urls)],
                plan,
                start,
                timeout,
                "zh" if (lang_mix and i % 2) else "en",
                hold,
                finished,
                think,
                spread,
            )
        )
        for i in range(n)
    ]
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    start.set()
    # Wait until every student has done its work (each then holds its websocket open).
    while len(finished) < n and not all(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    wall = max((r.finished_at for r in finished), default=time.perf_counter()) - t0
    after = _sum(rss_mb, pids)
    hold.set()
    sessions = await asyncio.gather(*tasks)
    return list(sessions), wall, after


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--sessions", type=int, default=50)
    ap.add_argument("--url", help="use a running server instead of starting one (no RSS unless --pid)")
    ap.add_argument("--pid", type=int, help="server pid for RSS readings with --url")
    ap.add_argument("--pages", nargs="*", help="only these page stems")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one rerun may take")
    ap.add_argument(
        "--think", type=float, default=0.0, help="mean pause in seconds before each action (default 0: worst case)"
    )
    ap.add_argument(
        "--spread", type=float, default=0.0, help="students arrive within this many seconds (default 0: all at once)"
    )
    ap.add_argument(
        "--same-values", action="store_true", help="every student moves the slider to the same value (cache hits)"
    )
    ap.add_argument("--rounds", type=int, default=1, help="classes one after another (memory check)")
    add_flag_option(ap)
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the server, e.g. NUMBA_NUM_THREADS=1",
    )
    ap.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="servers started side by side; student i stays on replica i mod K (what the "
        "sticky load balancer does, without the proxy)",
    )
    ap.add_argument("--port", type=int, help="first server port (replica k uses port + k); default: free ports")
    ap.add_argument("--json", type=Path, help="also write the result as JSON here")
    args = ap.parse_args(argv)
    env = dict(e.split("=", 1) for e in args.env)
    extra = flag_args(args.flag)

    def go(url: str, pid: int | None) -> ClassroomResult:
        return asyncio.run(
            run_classroom(
                url,
                args.sessions,
                pid,
                stems=args.pages,
                timeout=args.timeout,
                rounds=args.rounds,
                think=args.think,
                spread=args.spread,
                same_values=args.same_values,
            )
        )

    if args.url:
        res = go(args.url, args.pid)
    else:
        servers = [
            Server(args.port + k if args.port else None, extra_flags=extra, env=env, warm=(k == 0))
            for k in range(max(1, args.replicas))
        ]
        try:
            for srv in servers:
                srv.start()
                print(
                    f"server {srv.url} (pid {srv.pid}) up in {srv.startup_s:.1f} s"
                    + (" incl. python -m sim.warm; " if srv.warm else "; ")
                    + f"flags: {' '.join(serve_flags(srv.port) + extra)}"
                    + (f"; env {env}" if env else "")
                )
            res = go([s.url for s in servers], [s.pid for s in servers])
        finally:
            for srv in servers:
                srv.stop()
    print(res.table())
    for e in res.errors[:20]:
        print("  ERROR", e)
    rows = res.per_page()
    worst = max((r["p95_s"] for r in rows), default=float("nan"))
    verdict = (not res.errors, worst <= TARGET_P95_S, not res.mb_per_session > TARGET_MB_PER_SESSION)
    print(
        f"targets: zero errors {'OK' if verdict[0] else 'MISS'}; p95 <= {TARGET_P95_S:g} s "
        f"{'OK' if verdict[1] else 'MISS'} (worst {worst:.3f} s); memory "
        f"{'OK' if verdict[2] else 'MISS'}"
    )
    if args.json:
        args.json.write_text(json.dumps(res.as_dict(), indent=1, default=float))
    return 0 if verdict[0] else 1


if __name__ == "__main__":
    sys.exit(main())
