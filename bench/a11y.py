"""Accessibility measurements: the axe-core table (every page, both languages, 1400 px and 390 px)
and Lighthouse's accessibility score. Not part of ``make test`` (``tests/e2e/test_a11y.py`` asserts
on the same axe scan; this prints the whole table, moderate and minor included).

    .venv/bin/python bench/a11y.py                      # the axe table, all 13 pages
    .venv/bin/python bench/a11y.py --pages home two_point --langs en
    .venv/bin/python bench/a11y.py --lighthouse home two_point hemisphere

axe-core is the copy the pinned ``axe-playwright-python`` ships (:data:`AXE_VERSION`). A page is
scanned with the whole of it in view: every expander open, the viewport as tall as the page
(Streamlit scrolls inside its main container, so what is below the fold would otherwise be judged
off-screen), every chart drawn. A cell of the table is ``critical/serious/moderate/minor``: the
number of elements (axe's nodes) failing a rule of that impact.

Lighthouse (``npx --yes lighthouse@12``, needs the npm registry) runs against a server this script
starts, with ``harness.browser.CHROMIUM`` and its flags; only the accessibility category.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness import browser as b  # noqa: E402
from harness.server import Server, first_visit, quiet_streamlit, url_path  # noqa: E402

IMPACTS = ("critical", "serious", "moderate", "minor")
WIDTHS = (1400, 390)
MAX_HEIGHT = 16_000


def axe_script() -> str:
    """axe-core's code as the pinned package ships it."""
    from axe_playwright_python.base import AXE_SCRIPT

    return AXE_SCRIPT


def axe_version() -> str:
    m = re.search(r"axe v(\d+\.\d+\.\d+)", axe_script()[:200])
    return m.group(1) if m else "?"


def whole_page_in_view(page, width: int) -> None:
    """Every expander open and the viewport ``width`` wide and as tall as the page (at most
    :data:`MAX_HEIGHT`), every chart drawn again at that size."""
    page.set_viewport_size({"width": width, "height": 1000})
    page.evaluate("""() => { for (const d of document.querySelectorAll('details:not([open])')) d.open = true; }""")
    page.wait_for_timeout(200)
    h = page.evaluate("""() => {
      const m = document.querySelector('[data-testid="stMain"]');
      const s = document.querySelector('[data-testid="stSidebarContent"]');
      return Math.max(m ? m.scrollHeight : 0, s ? s.scrollHeight : 0, document.body.scrollHeight);
    }""")
    page.set_viewport_size({"width": width, "height": int(min(max(h + 40, 1000), MAX_HEIGHT))})
    page.wait_for_timeout(400)
    b.wait_ready(page)


def scan(page, script: str | None = None) -> list[dict]:
    """axe-core's violations on the page as it is (every rule axe runs by default)."""
    page.evaluate(script or axe_script())
    return page.evaluate("""() => axe.run(document, {resultTypes: ['violations']}).then((r) =>
      r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({target: n.target.join(' '), html: n.html.slice(0, 300),
                                    impact: n.impact, summary: (n.failureSummary || '').slice(0, 300)}))})))""")


def counts(violations: list[dict]) -> dict[str, int]:
    out = dict.fromkeys(IMPACTS, 0)
    for v in violations:
        for n in v["nodes"]:
            out[n.get("impact") or v["impact"]] += 1
    return out


def cell(c: dict[str, int]) -> str:
    return "/".join(str(c[k]) for k in IMPACTS)


def axe_table(url: str, stems: list[str], langs: list[str], out: Path | None) -> list[dict]:
    rows = []
    script = axe_script()
    with b.chromium() as br:
        for lang in langs:
            ctx = br.new_context(viewport=b.VIEWPORT, locale="en-US")
            ctx.set_default_timeout(b.WAIT_MS)
            pg = ctx.new_page()
            for stem in stems:
                row = {"page": stem, "lang": lang}
                for w in WIDTHS:
                    pg.set_viewport_size(b.VIEWPORT)
                    b.goto(pg, f"{url}/{url_path(stem)}?lang={lang}")
                    whole_page_in_view(pg, w)
                    v = scan(pg, script)
                    row[w] = counts(v)
                    row[f"v{w}"] = v
                rows.append(row)
                print(f"{stem:16} {lang}  " + "  ".join(f"{w}px {cell(row[w]):>12}" for w in WIDTHS), flush=True)
            ctx.close()
    if out:
        out.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| page | lang | 1400 px | 390 px |", "| --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['page']} | {r['lang']} | {cell(r[1400])} | {cell(r[390])} |")
    return "\n".join(lines)


def lighthouse(url: str, stems: list[str]) -> dict[str, float]:
    scores = {}
    flags = " ".join(a for a in b.CHROMIUM_ARGS)
    for stem in stems:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "lh.json"
            cmd = ["npx", "--yes", "lighthouse@12", f"{url}/{url_path(stem)}?lang=en", "--quiet",
                   f"--chrome-path={b.CHROMIUM}", f"--chrome-flags={flags}",
                   "--only-categories=accessibility", "--output=json", f"--output-path={out}",
                   "--max-wait-for-load=120000"]
            subprocess.run(cmd, check=False, timeout=600, capture_output=True)
            try:
                rep = json.loads(out.read_text())
                scores[stem] = round(100 * rep["categories"]["accessibility"]["score"])
                fails = [a for a in rep["audits"].values()
                         if a.get("score") == 0 and a.get("scoreDisplayMode") == "binary"]
                print(f"{stem:16} {scores[stem]:>4}  failing: {', '.join(a['id'] for a in fails) or '-'}",
                      flush=True)
            except (OSError, ValueError, KeyError, TypeError):
                scores[stem] = float("nan")
                print(f"{stem:16} lighthouse gave no report", flush=True)
    return scores


def main(argv=None) -> None:
    from ui.kit.nav import PAGES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", nargs="*", default=[e.stem for e in PAGES])
    ap.add_argument("--langs", nargs="*", default=["en", "zh"])
    ap.add_argument("--url", help="a running server (else one is started)")
    ap.add_argument("--json", type=Path, help="write every violation here")
    ap.add_argument("--lighthouse", nargs="*", help="pages to score with Lighthouse instead of the axe table")
    args = ap.parse_args(argv)
    quiet_streamlit()
    srv = None
    url = args.url
    if not url:
        srv = Server(warm=False).start()
        url = srv.url
        first_visit(url)
    try:
        if args.lighthouse is not None:
            lighthouse(url, args.lighthouse or ["home", "two_point", "hemisphere"])
        else:
            print(f"axe-core {axe_version()}; cells: critical/serious/moderate/minor (elements)")
            print(markdown(axe_table(url, args.pages, args.langs, args.json)))
    finally:
        if srv is not None:
            srv.stop()


if __name__ == "__main__":
    main()
