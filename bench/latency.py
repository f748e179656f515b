"""Latency budget per page: server rerun time, and in Chromium first load and slider -> figure.

Starts the server the way ``make run`` does (see ``bench/classroom.py``), then per page in
``ui.kit.nav.PAGES``:

server (one websocket session, ``harness/wsclient.py``; time from the rerun request to
``script_finished``):
  first   the first visit at the defaults (caches cold for this page),
  rerun   median of 7 reruns at the defaults (what a rerun costs when nothing changed;
          target <= 100 ms),
  cpu     server CPU per such rerun (/proc/<pid>/stat; unlike wall time not inflated by
          other work on the machine),
  slider  median of 5 reruns after moving the first slider to a value not seen before
          (cache miss: the page's real compute);

Chromium (a fresh browser context per page, i.e. an empty HTTP cache, like a new student):
  load    navigation start -> every figure drawn, script finished (cold cache),
  reload  the same in the same context (JS bundle cached),
  fig     keydown on the first slider -> the first figure's SVG changed (median of 5 one-step
          moves to new values),
  settled keydown -> script finished and every figure drawn again (target: median
          over pages <= 300 ms, worst page <= 600 ms),
  open    (``--sidebar``) from the home page, a click on the page's sidebar entry -> the run
          finished and every figure drawn (the app's JavaScript loaded; the home page left idle
          for 3 s first, as a student reading it would),
  held    (``--sidebar``) ten key-downs on the first slider at key-repeat pace (33-80 ms apart,
          dispatched in the page), the last one -> the page settled on the last value (URL,
          script finished, every figure drawn).

``--first-visit`` instead: per page a server of its own, started as ``make run`` starts it (the
kernel cache current), left idle for ``--idle`` seconds (a teacher starts it before the lesson),
then a new Chromium context opens the page by its address: navigation -> every figure drawn and
the run finished (target <= 3 s), with the server's CPU during that visit.

    .venv/bin/python bench/latency.py                 # all pages
    .venv/bin/python bench/latency.py --pages two_point --json out.json
    .venv/bin/python bench/latency.py --url http://127.0.0.1:8501   # a running server
    .venv/bin/python bench/latency.py --worst      # bounded work: the costliest slider corner
    .venv/bin/python bench/latency.py --flag runner.postScriptGC=true   # try a server option
                                                                        # (here: Streamlit's default GC)

Other work on the machine inflates every number: the table prints the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import add_flag_option, flag_args, save_json  # noqa: E402
from harness import browser as b  # noqa: E402
from harness.browser import HOLD_GAPS_MS, HOLD_JS, chromium, click_and_wait, page_title, sidebar_link  # noqa: E402
from harness.server import Server, cpu_s, first_visit, quiet_streamlit, url_path  # noqa: E402
from harness.wsclient import StreamlitSession  # noqa: E402

TARGET_RERUN_MS = 100.0
TARGET_SLIDER_MS = 600.0  # a page's settled step (the median over pages: <= 300 ms)
RERUNS = 7
MOVES = 5


def loadavg() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def _med(xs):
    return statistics.median(xs) if xs else float("nan")


# --------------------------------------------------------------------------- server side
async def server_times(url: str, stem: str, reruns: int = RERUNS, moves: int = MOVES, pid: int | None = None) -> dict:

    from ui.kit import spec

    from ui.kit import files

    res = spec.resolve(files.page_module(stem).SCHEMA)
    first = next((p for p in res.params.values() if p.kind in ("float", "int")), None)
    out: dict = {"page": stem}
    async with StreamlitSession(url, timeout=180.0) as s:
        await s.rerun(page="", query_string="lang=en")
        r = await s.rerun(page=url_path(stem), query_string="lang=en")
        problems = list(r.exceptions) + r.error_alerts + ([r.error] if r.error else [])
        out["first_ms"] = r.seconds * 1e3
        xs = []
        c0 = cpu_s(pid) if pid else float("nan")
        for _ in range(reruns):
            r = await s.rerun()
            xs.append(r.seconds * 1e3)
            problems += list(r.exceptions) + r.error_alerts + ([r.error] if r.error else [])
        out["rerun_cpu_ms"] = (cpu_s(pid) - c0) * 1e3 / reruns if pid else float("nan")
        out["rerun_ms"] = _med(xs)
        out["rerun_min_ms"] = min(xs)
        ys = []
        if first is not None:
            # Values from the top of the range downwards: not the ones the browser part visits.
            step = first.step or (1 if first.kind == "int" else (first.max - first.min) / 100)
            for k in range(moves):
                v = first.clamp(first.max - (k + 1) * step)
                if v == first.default:
                    v = first.clamp(first.max - (k + 1 + moves) * step)
                r = await s.rerun(widgets={first.name: v})
                ys.append(r.seconds * 1e3)
                problems += list(r.exceptions) + r.error_alerts + ([r.error] if r.error else [])
        out["slider_ms"] = _med(ys)
        out["elements"] = r.element_counts.get("plotly_chart", 0)
        out["problems"] = problems
    return out


# --------------------------------------------------------------------------- bounded work
async def worst_corner(url: str, stem: str, pid: int | None = None, passes: int = 2, timeout: float = 300.0) -> dict:
    """The slowest rerun the slider ranges allow, found by coordinate ascent ("bounded work").

    Starting from the defaults, each numeric parameter in turn is tried at its min and its max
    (others fixed at the current corner) and the costliest value is kept; ``passes`` sweeps.
    Before every probe the server's caches are cleared (``clear_cache``, as the frontend's menu
    does), so each probe is the full cold cost of that combination. The cost is the server's CPU
    time for the rerun (``/proc/<pid>/stat``; not inflated by other work on the machine; wall
    time without a pid). Reports the corner, its wall and CPU time, and the notices/errors the
    page showed there (a page that refuses an expensive combination with a message is fine).
    Buttons are not pressed: what sits behind an explicit button is not part of a rerun.
    Clearing the caches affects every session: use a server of its own (the default).
    """

    from ui.kit import spec
    from ui.kit.page import fmt_value

    from ui.kit import files

    res = spec.resolve(files.page_module(stem).SCHEMA)
    nums = [p for p in res.params.values() if p.kind in ("float", "int")]
    out: dict = {
        "page": stem,
        "corner": {},
        "worst_ms": float("nan"),
        "worst_cpu_ms": float("nan"),
        "probes": 0,
        "alerts": [],
        "problems": [],
    }
    if not nums:
        return out
    async with StreamlitSession(url, timeout=timeout) as s:
        await s.rerun(page="", query_string="lang=en")

        async def probe(corner: dict):
            q = {k: fmt_value(res.params[k], v) for k, v in corner.items()}
            await s.clear_caches()
            await s.rerun(page="", query_string="lang=en")  # the app's own warm-up after the clear
            c0 = cpu_s(pid) if pid else float("nan")
            r = await s.rerun(page=url_path(stem), query_string=urlencode({"lang": "en", **q}))
            cpu = (cpu_s(pid) - c0) * 1e3 if pid else float("nan")
            out["probes"] += 1
            out["problems"].extend(list(r.exceptions) + r.error_alerts + ([r.error] if r.error else []))
            return (cpu if pid else r.seconds * 1e3), r

        corner = {p.name: p.default for p in nums}
        best, _ = await probe(corner)
        default_cost = best
        for _ in range(passes):
            for p in nums:
                for v in (p.min, p.max):
                    if v == corner[p.name]:
                        continue
                    trial = {**corner, p.name: v}
                    cost, _ = await probe(trial)
                    if cost > best:
                        best, corner = cost, trial
        q = {k: fmt_value(res.params[k], v) for k, v in corner.items()}
        await s.clear_caches()
        await s.rerun(page="", query_string="lang=en")
        c0 = cpu_s(pid) if pid else float("nan")
        r = await s.rerun(page=url_path(stem), query_string=urlencode({"lang": "en", **q}))
        out.update(
            corner={k: v for k, v in corner.items() if v != res.params[k].default},
            default_cost_ms=default_cost,
            worst_ms=r.seconds * 1e3,
            worst_cpu_ms=(cpu_s(pid) - c0) * 1e3 if pid else float("nan"),
            alerts=[f"{fmt}: {body[:160]}" for fmt, body in r.alerts],
        )
        out["problems"].extend(list(r.exceptions) + r.error_alerts + ([r.error] if r.error else []))
    return out


# --------------------------------------------------------------------------- browser side
KEYDOWN_JS = """() => {
  window.__t0 = null; window.__tfig = null; window.__tdone = null;
  document.addEventListener('keydown', () => { window.__t0 = performance.now(); },
                            {capture: true, once: true});
}"""


def browser_times(browser, url: str, stem: str, moves: int = MOVES) -> dict:
    res = b.resolved(stem)
    first = b.first_slider(list(res.params.values()))
    out: dict = {}
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        page = ctx.new_page()
        target = f"{url}/{url_path(stem)}?lang=en"
        t0 = time.perf_counter()
        b.goto(page, target)
        out["load_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        b.goto(page, target)
        out["reload_s"] = time.perf_counter() - t0
        figs, done = [], []
        if first is not None and b.n_charts(page):
            for _ in range(moves):
                before = b.signature(page)
                v = b.widget_value(page, stem, first)
                key, want = b.step_target(first, v)
                page.evaluate(KEYDOWN_JS)
                b.nudge(page, first, key)
                page.wait_for_function(
                    f"(bf) => {{ const s = ({b.SIGNATURE_JS})();"
                    " if (s.some((h, i) => h !== bf[i]) || s.length !== bf.length) {"
                    " window.__tfig = window.__tfig ?? performance.now(); return true; } return false; }",
                    arg=before,
                    polling="raf",
                    timeout=120_000,
                )
                page.wait_for_function(
                    f"() => {{ if (({b.READY_JS})()"
                    f" && new URLSearchParams(location.search).get({json.dumps(first.name)})"
                    f" === {json.dumps(_fmt(first, want))}) {{ window.__tdone = performance.now(); return true; }}"
                    " return false; }",
                    polling="raf",
                    timeout=120_000,
                )
                t = page.evaluate("() => [window.__t0, window.__tfig, window.__tdone]")
                if None in t:
                    continue
                figs.append(t[1] - t[0])
                done.append(t[2] - t[0])
        out["fig_ms"] = _med(figs)
        out["settled_ms"] = _med(done)
        out["js_errors"] = []
    finally:
        ctx.close()
    return out


def sidebar_times(browser, url: str, stem: str) -> dict:
    """``open_s`` (sidebar click -> drawn), its Chromium CPU, and ``held_ms`` (see the docstring)."""
    from bench.browser_cost import tree_cpu_s

    res = b.resolved(stem)
    out: dict = {}
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        page = ctx.new_page()
        b.goto(page, f"{url}/?lang=en")
        page.wait_for_timeout(3000)
        link = sidebar_link(page, url_path(stem))
        c0, t0 = tree_cpu_s(), time.perf_counter()
        click_and_wait(page, link, url_path(stem), page_title(stem))
        out["open_s"] = time.perf_counter() - t0
        out["open_cpu_s"] = tree_cpu_s() - c0
        p = next(
            (
                q
                for q in res.params.values()
                if q.kind in ("float", "int")
                and q.clamp(q.default + 10 * (q.step or 1)) == round(q.default + 10 * (q.step or 1), 12)
            ),
            None,
        )
        if p is not None and b.n_charts(page):
            v = b.widget_value(page, stem, p)
            want = _fmt(p, p.clamp(v + 10 * (p.step or 1)))
            page.evaluate(HOLD_JS, [p.name, HOLD_GAPS_MS])
            page.wait_for_function(
                f"(v) => {{ if (new URLSearchParams(location.search).get({json.dumps(p.name)}) === v"
                f" && ({b.READY_JS})())"
                " { window.__tsettled = performance.now(); return true; } return false; }",
                arg=want,
                polling="raf",
                timeout=b.WAIT_MS,
            )
            out["held_ms"] = page.evaluate("() => window.__tsettled - window.__tlast")
            out["held_slider"] = p.name
    finally:
        ctx.close()
    return out


def first_visits(stems: list[str], idle_s: float = 10.0, extra: list[str] | None = None) -> list[dict]:
    """The first visit after a server starts, one fresh server per page (see the docstring)."""
    rows = []
    with chromium() as br:
        for i, stem in enumerate(stems):
            # the kernel cache is made current once (first server); later servers find it so
            with Server(warm=(i == 0), extra_flags=extra) as srv:
                ctx = br.new_context(viewport=b.VIEWPORT, locale="en-US")
                try:
                    page = ctx.new_page()
                    time.sleep(idle_s)
                    c0, t0 = cpu_s(srv.pid), time.perf_counter()
                    b.goto(page, f"{srv.url}/{url_path(stem)}?lang=en")
                    row = {
                        "page": stem,
                        "first_visit_s": time.perf_counter() - t0,
                        "first_visit_server_cpu_s": cpu_s(srv.pid) - c0,
                    }
                finally:
                    ctx.close()
            rows.append(row)
            print(
                f"{stem:<16} first visit {row['first_visit_s']:5.2f} s (server CPU "
                f"{row['first_visit_server_cpu_s']:.2f} s) after {idle_s:g} s idle",
                flush=True,
            )
    xs = [r["first_visit_s"] for r in rows]
    print(f"first visit: median {statistics.median(xs):.2f} s, worst {max(xs):.2f} s (target <= 3 s)")
    return rows


def _fmt(p, v) -> str:
    from ui.kit.page import fmt_value

    return fmt_value(p, v)


# --------------------------------------------------------------------------- report
#: the columns of :func:`table` after the page's name: (key, heading, width, format); "|" separates groups
TABLE_COLUMNS = (
    ("first_ms", "first ms", 8, ".0f"),
    ("rerun_ms", "rerun ms", 8, ".0f"),
    ("rerun_cpu_ms", "cpu ms", 6, ".0f"),
    ("slider_ms", "slider ms", 9, ".0f"),
    "|",
    ("load_s", "load s", 6, ".2f"),
    ("reload_s", "reload s", 8, ".2f"),
    ("fig_ms", "fig ms", 7, ".0f"),
    ("settled_ms", "settled ms", 10, ".0f"),
    "|",
)


def _cells(r: dict | None) -> str:
    """One row's cells (the heading's when ``r`` is None), in :data:`TABLE_COLUMNS`' order."""
    out = []
    for col in TABLE_COLUMNS:
        if col == "|":
            out.append("│")
            continue
        key, head, width, spec = col
        out.append(f"{head:>{width}}" if r is None else f"{r.get(key, float('nan')):>{width}{spec}}")
    return " ".join(out)


def table(rows: list[dict]) -> str:
    head = f"{'page':<16} {_cells(None)} targets (rerun<={TARGET_RERUN_MS:g} ms, settled<={TARGET_SLIDER_MS:g} ms)"
    lines = [head]
    for r in rows:
        ok_r = r.get("rerun_ms", float("nan")) <= TARGET_RERUN_MS
        st_ = r.get("settled_ms", float("nan"))
        ok_f = st_ <= TARGET_SLIDER_MS if st_ == st_ else None
        verdict = ("rerun OK" if ok_r else "rerun MISS") + (
            "" if ok_f is None else (", settled OK" if ok_f else ", settled MISS")
        )
        if r.get("problems"):
            verdict += f", {len(r['problems'])} problem(s)"
        lines.append(f"{r['page']:<16} {_cells(r)} {verdict}")
    return "\n".join(lines)


def sidebar_table(rows: list[dict]) -> str:
    lines = [
        f"{'page':<16} {'open s':>6} {'cpu s':>6} {'held ms':>8}  (targets: open <= 1.5 s median, <= 3 s worst;"
        " held <= 1500 ms)"
    ]
    for r in rows:
        lines.append(
            f"{r['page']:<16} {r.get('open_s', float('nan')):>6.2f} {r.get('open_cpu_s', float('nan')):>6.2f} "
            f"{r.get('held_ms', float('nan')):>8.0f}"
        )
    opens = [r["open_s"] for r in rows if "open_s" in r]
    if opens:
        lines.append(f"open: median {statistics.median(opens):.2f} s, worst {max(opens):.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="a running server instead of starting one")
    ap.add_argument("--pid", type=int, help="server pid with --url (for the CPU column)")
    ap.add_argument("--pages", nargs="*", help="only these page stems")
    ap.add_argument("--no-browser", action="store_true", help="server times only")
    ap.add_argument(
        "--sidebar", action="store_true", help="also: open from the sidebar, and a held arrow key (Chromium)"
    )
    add_flag_option(ap)
    ap.add_argument(
        "--worst",
        action="store_true",
        help="instead: the slowest rerun the slider ranges allow, per page (bounded work)",
    )
    ap.add_argument(
        "--first-visit",
        action="store_true",
        help="instead: the first visit after a server starts, a fresh server per page",
    )
    ap.add_argument("--idle", type=float, default=10.0, help="with --first-visit: seconds the server is idle first")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    extra = flag_args(args.flag)
    quiet_streamlit()
    from ui.kit.nav import PAGES

    stems = [e.stem for e in PAGES if not args.pages or e.stem in args.pages]
    la0 = loadavg()
    if args.first_visit:
        rows = first_visits(stems, args.idle, extra)
        print(f"load average at start {la0}, at end {loadavg()}")
        return save_json(args.json, rows)
    srv = None
    if args.url:
        url = args.url
    else:
        srv = Server(extra_flags=extra).start()
        url = srv.url
        print(f"server {url} up in {srv.startup_s:.1f} s (incl. python -m sim.warm) {' '.join(extra)}")
    rows = []
    try:
        # The first session after a start is special (see harness.server.first_visit).
        first_visit(url)
        if args.worst:
            for stem in stems:
                w = asyncio.run(worst_corner(url, stem, pid=srv.pid if srv else args.pid))
                rows.append(w)
                print(
                    f"{stem:<16} cold rerun at the defaults {w.get('default_cost_ms', float('nan')):6.0f} ms CPU; "
                    f"worst corner {w['worst_ms']:7.0f} ms wall, {w['worst_cpu_ms']:7.0f} ms CPU "
                    f"({w['probes']} probes) at {w['corner']}",
                    flush=True,
                )
                for a in w["alerts"][:4]:
                    print(f"{'':<18}notice {a}")
                for pr in w["problems"][:4]:
                    print(f"{'':<18}PROBLEM {pr[:200]}")
            return save_json(args.json, rows)
        for stem in stems:
            rows.append(asyncio.run(server_times(url, stem, pid=srv.pid if srv else args.pid)))
        if not args.no_browser:
            with chromium() as br:
                for row in rows:
                    row.update(browser_times(br, url, row["page"]))
                    if args.sidebar:
                        row.update(sidebar_times(br, url, row["page"]))
    finally:
        if srv is not None:
            srv.stop()
    print(table(rows))
    if args.sidebar:
        print(sidebar_table(rows))
    print(f"load average at start {la0}, at end {loadavg()} (2 cores; other work inflates the times)")
    for r in rows:
        for pr in r.get("problems", [])[:3]:
            print(f"  {r['page']}: {pr[:200]}")
    return save_json(args.json, rows)


if __name__ == "__main__":
    sys.exit(main())
