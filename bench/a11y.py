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

Lighthouse (12, from the npm registry, installed once under artifacts/lighthouse) runs in snapshot
mode once the page is drawn (:func:`lighthouse`), in ``harness.browser.CHROMIUM`` with its flags;
only the accessibility category.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness import browser as b  # noqa: E402
from harness.server import quiet_streamlit, served, url_path  # noqa: E402

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


#: Lighthouse in snapshot mode on a page Streamlit has drawn: the CLI audits the page at its load
#: event, when Streamlit has drawn nothing yet (every such run scores 100: no list, no text, no
#: contrast to judge). Puppeteer (Lighthouse's own dependency) opens the page, waits for
#: harness.browser.READY_JS, then Lighthouse's accessibility category runs on what is there.
_SNAPSHOT_MJS = r"""
import puppeteer from 'puppeteer-core';
import {snapshot} from 'lighthouse';
const [url, chrome, flags, readyJs] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4]), process.argv[5]];
const browser = await puppeteer.launch({executablePath: chrome, args: flags, headless: true});
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 1000});
  await page.goto(url, {waitUntil: 'domcontentloaded', timeout: 240000});
  await page.waitForFunction('(' + readyJs + ')()', {timeout: 240000, polling: 250});
  await new Promise((r) => setTimeout(r, 1500));
  const res = await snapshot(page, {config: {extends: 'lighthouse:default',
                                              settings: {onlyCategories: ['accessibility']}}});
  const lhr = res.lhr;
  const fails = Object.values(lhr.audits).filter((a) => a.score === 0 && a.scoreDisplayMode === 'binary')
    .map((a) => a.id);
  console.log(JSON.stringify({score: lhr.categories.accessibility.score, fails}));
} finally { await browser.close(); }
"""
LIGHTHOUSE = "lighthouse@12"


def ensure_lighthouse() -> Path:
    """The folder where Lighthouse (:data:`LIGHTHOUSE`) is installed, installing it the first time
    (npm, from the npm registry: only for these benchmarks)."""
    home = ROOT / "artifacts" / "lighthouse"
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "node_modules" / "lighthouse").is_dir():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(home), LIGHTHOUSE],
            check=True,
            timeout=600,
            capture_output=True,
        )
    return home


def lighthouse(url: str, stems: list[str], lang: str = "en") -> dict[str, float]:
    """Lighthouse's accessibility score of each page (0-100) and the audits it fails. Lighthouse
    (:data:`LIGHTHOUSE`, from the npm registry) is installed once under artifacts/lighthouse."""
    home = ensure_lighthouse()
    script = home / "snapshot.mjs"
    script.write_text(_SNAPSHOT_MJS, encoding="utf-8")
    scores = {}
    for stem in stems:
        r = subprocess.run(
            [
                "node",
                str(script),
                f"{url}/{url_path(stem)}?lang={lang}",
                b.CHROMIUM,
                json.dumps(b.CHROMIUM_ARGS),
                b.READY_JS,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        try:
            rep = json.loads(r.stdout.strip().splitlines()[-1])
            scores[stem] = round(100 * rep["score"])
            print(f"{stem:16} {scores[stem]:>4}  failing: {', '.join(rep['fails']) or '-'}", flush=True)
        except (IndexError, ValueError, KeyError, TypeError):
            scores[stem] = float("nan")
            print(f"{stem:16} Lighthouse gave no score: {r.stderr.strip()[-300:]}", flush=True)
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
    with served(args.url, warm=False) as (url, _):
        if args.lighthouse is not None:
            lighthouse(url, args.lighthouse or ["home", "two_point", "hemisphere"])
        else:
            print(f"axe-core {axe_version()}; cells: critical/serious/moderate/minor (elements)")
            print(markdown(axe_table(url, args.pages, args.langs, args.json)))


if __name__ == "__main__":
    main()
