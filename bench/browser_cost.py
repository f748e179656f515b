"""What opening a page costs the browser, per page: figures, points, KaTeX, messages, CPU by library.

Starts the server the way ``make run`` does (or uses ``--url``), then per page in ``ui.kit.nav.PAGES``,
in a fresh Chromium context (1400 × 1000): opens the home page, leaves it alone for 3 s
(``--idle-ms``: a student reading it), then clicks the page's entry in the
sidebar (what a student does between lessons: the app's JavaScript is already loaded) and waits
until the run has finished and every figure is drawn. Reports

  open s     click -> ready (``harness/browser.py``'s READY_JS); the first page with charts in a
             session also loads and evaluates Streamlit's Plotly chunk (4.7 MB),
  again      the same page opened a second time in that session (home page in between): the
             chart code is loaded, what every later lesson costs,
  cpu s      CPU of Chromium's process tree during that open (``/proc``; other work on the machine
             inflates it less than wall time),
  plotly/katex/md/other s   where the renderer's main thread spent it (a V8 CPU profile of the
             open, self time by the script a function comes from: Streamlit's PlotlyChart chunk,
             the KaTeX chunks, the Markdown chunks, everything else incl. React, style and layout),
  figs, traces, points   Plotly charts, their traces, the points they plot (x/y/z lengths, a
             heatmap's cells), from the drawn figures' data (``gd.data``),
  gl         WebGL traces (scattergl, scatter3d …),
  katex      KaTeX-rendered formulas on the page,
  msgs, kB   websocket messages from the server during the open and their bytes,
  dom        elements on the page.

    .venv/bin/python bench/browser_cost.py                       # all pages
    .venv/bin/python bench/browser_cost.py --pages two_point --repeat 3 --json out.json
    .venv/bin/python bench/browser_cost.py --figures             # per figure: traces, points, kB

``--figures`` also prints each figure's traces (type, points) and the size of its JSON as sent.
Other work on the machine inflates every number: the table prints the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._timing import save_json  # noqa: E402
from harness import browser as b  # noqa: E402
from harness.browser import chromium, click_and_wait, page_title, sidebar_link  # noqa: E402
from harness.server import Server, first_visit, quiet_streamlit, url_path  # noqa: E402

_CLK = os.sysconf("SC_CLK_TCK")

# Per chart: its traces (type, points) and how the chart's JSON as drawn measures.
FIGURES_JS = """() => [...document.querySelectorAll('[data-testid="appPlotlyChart"]')].map((c) => {
  const gd = c.querySelector('.js-plotly-plot');
  const data = (gd && (gd._fullData || gd.data)) || [];
  const len = (a) => (a && typeof a.length === 'number') ? a.length
    : (a && a.bdata) ? Math.floor(atob(a.bdata).length / ({f8: 8, f4: 4, i4: 4, u4: 4, i2: 2, u2: 2}[a.dtype] || 1))
    : 0;
  const traces = data.map((t) => {
    let n = Math.max(len(t.x), len(t.y), len(t.z), len(t.lat), len(t.r), len(t.values));
    if (t.type === 'heatmap' || t.type === 'contour' || t.type === 'surface') {
      const z = t.z || [];
      n = (z.length && len(z[0])) ? z.length * len(z[0]) : len(z);
    }
    return {type: t.type || 'scatter', points: n, mode: t.mode || ''};
  });
  const frames = (gd && gd._transitionData && gd._transitionData._frames) || [];
  return {title: ((gd && gd.layout && gd.layout.title && gd.layout.title.text) || '').slice(0, 60),
          traces, frames: frames.length, shapes: len(gd && gd.layout && gd.layout.shapes)};
})"""

COUNTS_JS = """() => ({
  katex: document.querySelectorAll('[data-testid="stMain"] .katex').length,
  dom: document.getElementsByTagName('*').length,
  expanders: document.querySelectorAll('[data-testid="stMain"] [data-testid="stExpander"]').length,
})"""

GL_TYPES = {
    "scattergl",
    "scatter3d",
    "surface",
    "mesh3d",
    "cone",
    "streamtube",
    "heatmapgl",
    "splom",
    "scatterpolargl",
    "parcoords",
}


def loadavg() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_cpu_s(root: int | None = None, name: str = "chrom") -> float:
    """CPU seconds (user + system) of the live processes under ``root`` (this process) whose
    command name contains ``name`` (Chromium's browser, renderer, GPU and utility processes)."""
    root = root or os.getpid()
    kids = _children()
    total, todo = 0.0, [root]
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            stat = open(f"/proc/{p}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name in comm.lower():
            f = stat.rsplit(")", 1)[1].split()
            total += (int(f[11]) + int(f[12])) / _CLK
    return total


def _bucket(url: str, fn: str) -> str:
    base = url.rsplit("/", 1)[-1]
    if base.startswith(("PlotlyChart", "plotly-")):
        return "plotly"
    if base.startswith(("katex", "rehype-katex")):
        return "katex"
    if base.startswith(("StreamlitMarkdown", "rehype", "remark", "micromark", "mdast", "hast", "unified")):
        return "md"
    if fn in ("(idle)", "(program)", "(garbage collector)") and not url:
        return {"(idle)": "idle", "(program)": "program", "(garbage collector)": "gc"}[fn]
    return "other"


def profile_split(profile: dict) -> dict[str, float]:
    """Seconds of self time by bucket in a CDP ``Profiler.stop`` profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    out: dict[str, float] = {}
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    # timeDeltas[i] is the time before sample i: the time of sample i is deltas[i + 1].
    for i, nid in enumerate(samples):
        dt = deltas[i + 1] if i + 1 < len(deltas) else 0
        cf = nodes[nid]["callFrame"]
        b = _bucket(cf.get("url", ""), cf.get("functionName", ""))
        out[b] = out.get(b, 0.0) + dt / 1e6
    return out


def open_cost(browser, url: str, stem: str, lang: str = "en", idle_ms: int = 3000, preload: bool = True) -> dict:
    """One page opened from the sidebar in a fresh context; see the module docstring."""
    ctx = browser.new_context(viewport=b.VIEWPORT, locale="en-US")
    msgs: list[tuple[float, int]] = []
    counting = {"on": False}

    def on_ws(ws):
        def rec(payload):
            if counting["on"]:
                msgs.append((time.perf_counter(), len(payload)))

        ws.on("framereceived", rec)

    path = url_path(stem)

    def one_open(page, link) -> dict:
        cdp = ctx.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        page.wait_for_timeout(idle_ms)  # the previous page left alone a moment (a student reads it)
        try:  # ... long enough for the chart code fetched ahead to be ready (ui/kit/style.py)
            page.wait_for_function(
                "() => !window.__tosChartsPreloaded || window.__tosChartsLoaded === true", timeout=30_000
            )
        except Exception:  # noqa: BLE001 - measured as it is
            pass
        msgs.clear()
        cdp.send("Profiler.start")
        counting["on"] = True
        c0 = tree_cpu_s()
        t0 = time.perf_counter()
        click_and_wait(page, link, path, page_title(stem, lang))
        open_s = time.perf_counter() - t0
        c1 = tree_cpu_s()
        counting["on"] = False
        prof = cdp.send("Profiler.stop")["profile"]
        cdp.detach()
        split = profile_split(prof)
        return {
            "open_s": open_s,
            "cpu_s": c1 - c0,
            "plotly_s": split.get("plotly", 0.0),
            "katex_s": split.get("katex", 0.0),
            "md_s": split.get("md", 0.0),
            "other_s": split.get("other", 0.0) + split.get("program", 0.0) + split.get("gc", 0.0),
            "msgs": len(msgs),
            "kB": sum(n for _, n in msgs) / 1024,
        }

    try:
        page = ctx.new_page()
        if not preload:  # as if the app did not fetch the chart code ahead (ui/kit/style.py)
            page.add_init_script("window.__tosChartsPreloaded = true;")
        page.on("websocket", on_ws)
        b.goto(page, f"{url}/?lang={lang}")
        cold = one_open(page, sidebar_link(page, url_path(stem)))
        cold["preloaded"] = page.evaluate(
            "() => performance.getEntriesByType('resource')"
            ".some((e) => /\\/_app\\/plotly-[0-9.]+\\.min\\.js$/.test(e.name))"
            " && !!window.__tosChartsPreloaded"
        )
        figs = page.evaluate(FIGURES_JS)
        counts = page.evaluate(COUNTS_JS)
        errors = b.exceptions(page)
        # back to the home page, then the same page again: the chart code is loaded now
        click_and_wait(page, sidebar_link(page, ""), "", page_title("home", lang))
        warm = one_open(page, sidebar_link(page, url_path(stem)))
    finally:
        ctx.close()
    traces = [t for f in figs for t in f["traces"]]
    return {
        "page": stem,
        **cold,
        **{f"warm_{k}": v for k, v in warm.items()},
        "figs": len(figs),
        "traces": len(traces),
        "points": sum(t["points"] for t in traces),
        "max_trace": max((t["points"] for t in traces), default=0),
        "gl": sum(1 for t in traces if t["type"] in GL_TYPES),
        "katex": counts["katex"],
        "dom": counts["dom"],
        "expanders": counts["expanders"],
        "figures": figs,
        "exceptions": errors,
    }


def figure_bytes(stems: list[str]) -> dict[str, list[dict]]:
    """Per page at its defaults (AppTest, no browser): each chart's JSON as sent, in bytes, with its
    traces' types and point counts."""
    from harness.apptest import app_test  # imports the app's pages: only when asked

    out = {}
    for stem in stems:
        at = app_test(stem, {"lang": "en"})
        rows = []
        for el in at.get("plotly_chart"):
            spec = json.loads(el.proto.spec)
            trs = []
            for tr in spec.get("data", []):
                n = 0
                for k in ("x", "y", "z"):
                    v = tr.get(k)
                    if isinstance(v, dict) and "bdata" in v:
                        import base64

                        import numpy as np

                        n = max(n, len(base64.b64decode(v["bdata"])) // np.dtype(v["dtype"]).itemsize)
                    elif isinstance(v, list):
                        n = max(n, len(v) if not (v and isinstance(v[0], list)) else len(v) * len(v[0]))
                trs.append((tr.get("type", "scatter"), n, len(json.dumps(tr))))
            title = ((spec.get("layout", {}).get("title") or {}).get("text") or "")[:50]
            rows.append(
                {
                    "title": re.sub(r"<[^>]+>", "", title),
                    "bytes": len(el.proto.spec),
                    "frames": len(spec.get("frames", []) or []),
                    "traces": trs,
                }
            )
        out[stem] = rows
    return out


def table(rows: list[dict]) -> str:
    head = (
        f"{'page':<16} {'open s':>6} {'cpu s':>6} {'plotly':>6} {'katex':>5} {'md':>5} {'other':>6} │ "
        f"{'again':>5} {'cpu s':>5} {'plotly':>6} │ "
        f"{'figs':>4} {'traces':>6} {'points':>7} {'max/tr':>6} {'gl':>3} {'katex#':>6} {'msgs':>4} "
        f"{'kB':>6} {'dom':>5}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['page']:<16} {r['open_s']:>6.2f} {r['cpu_s']:>6.2f} {r['plotly_s']:>6.2f} "
            f"{r['katex_s']:>5.2f} {r['md_s']:>5.2f} {r['other_s']:>6.2f} │ {r['warm_open_s']:>5.2f} "
            f"{r['warm_cpu_s']:>5.2f} {r['warm_plotly_s']:>6.2f} │ {r['figs']:>4} "
            f"{r['traces']:>6} {r['points']:>7} {r['max_trace']:>6} {r['gl']:>3} {r['katex']:>6} "
            f"{r['msgs']:>4} {r['kB']:>6.0f} {r['dom']:>5}"
        )
    return "\n".join(lines)


def _median_row(rs: list[dict]) -> dict:
    out = dict(rs[-1])
    for k in (
        "open_s",
        "cpu_s",
        "plotly_s",
        "katex_s",
        "md_s",
        "other_s",
        "warm_open_s",
        "warm_cpu_s",
        "warm_plotly_s",
    ):
        out[k] = statistics.median(r[k] for r in rs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="a running server instead of starting one")
    ap.add_argument("--pages", nargs="*", help="only these page stems")
    ap.add_argument("--repeat", type=int, default=1, help="opens per page (the table shows medians)")
    ap.add_argument("--figures", action="store_true", help="also per figure: traces, points, JSON bytes")
    ap.add_argument("--lang", default="en")
    ap.add_argument(
        "--ab",
        action="store_true",
        help="also open each page without and with the chart code fetched ahead, interleaved",
    )
    ap.add_argument(
        "--idle-ms", type=int, default=3000, help="how long the home page is left alone before the click (default 3000)"
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from ui.kit.nav import PAGES

    quiet_streamlit()
    stems = [e.stem for e in PAGES if (not args.pages or e.stem in args.pages) and e.stem != "home"]
    la0 = loadavg()
    srv = None
    if args.url:
        url = args.url
    else:
        srv = Server().start()
        url = srv.url
    rows = []
    ab: dict = {}
    try:
        first_visit(url)
        with chromium() as br:
            for stem in stems:
                if args.ab:  # interleaved: without, with the chart code fetched ahead
                    for _ in range(max(1, args.repeat)):
                        for pre in (False, True):
                            r = open_cost(br, url, stem, args.lang, args.idle_ms, preload=pre)
                            print(
                                f"  {stem} preload={pre}: open {r['open_s']:.2f} s, cpu {r['cpu_s']:.2f} s,"
                                f" plotly {r['plotly_s']:.2f} s; load {loadavg()}",
                                flush=True,
                            )
                            ab.setdefault((stem, pre), []).append(r)
                rs = [open_cost(br, url, stem, args.lang, args.idle_ms) for _ in range(max(1, args.repeat))]
                rows.append(_median_row(rs))
                print(f"{stem}: open {rows[-1]['open_s']:.2f} s, cpu {rows[-1]['cpu_s']:.2f} s", flush=True)
    finally:
        if srv is not None:
            srv.stop()
    print(table(rows))
    for (stem, pre), rs in sorted(ab.items()):
        print(
            f"{stem:<16} chart code fetched ahead {'yes' if pre else 'no ':<3}: open median "
            f"{statistics.median(r['open_s'] for r in rs):.2f} s, Chromium CPU median "
            f"{statistics.median(r['cpu_s'] for r in rs):.2f} s, Plotly chunk "
            f"{statistics.median(r['plotly_s'] for r in rs):.2f} s ({len(rs)} opens)"
        )
    print(f"load average at start {la0}, at end {loadavg()} (2 cores; other work inflates the times)")
    for r in rows:
        if r["exceptions"]:
            print(f"  {r['page']}: EXCEPTION {r['exceptions'][0][:200]}")
    if args.figures:
        fb = figure_bytes(stems)
        for stem, figs in fb.items():
            print(f"\n{stem}: {sum(f['bytes'] for f in figs) / 1024:.0f} kB in {len(figs)} figures")
            for f in figs:
                trs = ", ".join(f"{t}:{n}" for t, n, _ in f["traces"])
                print(f"  {f['bytes'] / 1024:7.1f} kB  {f['frames']:>3} frames  {f['title'][:40]:<40} {trs[:150]}")
            for r in rows:
                if r["page"] == stem:
                    r["figure_bytes"] = figs
    return save_json(args.json, rows)


if __name__ == "__main__":
    sys.exit(main())
