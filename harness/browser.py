"""What a student's browser does, as small helpers over Playwright (sync API).

Used by the browser tests (``tests/e2e``) and the benchmarks that drive a browser
(``bench/latency.py``, ``bench/browser_cost.py``); :func:`chromium` starts the browser they use.
Widgets are found by their key: Streamlit gives every keyed widget's container the
class ``st-key-<key>``. Slider values are read from the DOM (the range input's
``value``, i.e. its ``aria-valuenow``), exactly what the student sees.
"""

from __future__ import annotations

import contextlib
import math
import shutil
from pathlib import Path

from harness.server import url_path

#: The system's Debian Chromium (``scripts/ensure_chromium.sh``) and the flags it is started with.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1400, "height": 1000}


@contextlib.contextmanager
def chromium():
    """The system's headless Chromium (:data:`CHROMIUM`, :data:`CHROMIUM_ARGS`) under Playwright's
    sync API, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        br = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield br
        finally:
            br.close()


PLOT = '[data-testid="appPlotlyChart"]'
PLOT_SVG = f"{PLOT} .main-svg"
EXCEPTION = '[data-testid="stException"]'

#: How long a browser test waits for something that must happen (a page drawn, a value shown). A
#: wait ends as soon as the thing happens, so a long limit costs nothing when the app is right; it
#: has to cover a page run while both cores are busy with other work (a run of ~1 s of CPU then
#: takes tens of seconds). Speed is measured by bench/latency.py, not by these limits.
WAIT_MS = 240_000
ALERT = '[data-testid="stAlert"]'

# A page is ready when the script is not running, nothing on it is stale from the previous run,
# no element is still a placeholder and every chart has drawn (plotly.js is loaded lazily: a chart's
# element is on the page a second or more before its figure is drawn).
_DRAWN = """
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  // a chart (ui/kit/chart.py) is a Streamlit component: its wrapper is there before its code has run
  for (const c of document.querySelectorAll('[data-testid="stBidiComponentRegular"], [data-testid="appPlotlyChart"]')) {
    if (!c.querySelector('.main-svg')) return false;
  }
  if (document.querySelector('[data-testid="appPlotlyChart"][data-drawing]')) return false;
  return true;
"""
# The page has been drawn: a title, no placeholder, every chart drawn (whether or not a script runs).
DRAWN_JS = "() => {" + _DRAWN + "}"
READY_JS = (
    """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;"""
    + _DRAWN
    + "}"
)

# One short hash per chart of what it draws: the SVG (paths' d, markers, heatmap images) and,
# for WebGL traces that draw on a canvas, the plotted data. Changes when the figure changes.
SIGNATURE_JS = """() => {
  const h = (s) => { let x = 0x811c9dc5; for (let i = 0; i < s.length; i++) {
      x ^= s.charCodeAt(i); x = Math.imul(x, 0x01000193); } return (x >>> 0).toString(16); };
  return [...document.querySelectorAll('[data-testid="appPlotlyChart"]')].map((c) => {
    let s = [...c.querySelectorAll('.main-svg')].map((m) => m.innerHTML).join('|');
    if (c.querySelector('canvas')) {
      const gd = c.querySelector('.js-plotly-plot');
      try { s += JSON.stringify(gd && gd.data); } catch (e) { /* circular: ignore */ }
    }
    return h(s);
  });
}"""


def schema(stem: str):
    from ui.kit import files

    return files.page_module(stem).SCHEMA


def resolved(stem: str):
    """The page's effective spec (built-ins + the instructor file the server reads)."""
    from ui.kit import spec

    return spec.resolve(schema(stem))


def wait_ready(page, timeout: float = WAIT_MS) -> None:
    page.wait_for_function(READY_JS, timeout=timeout)


WATCH_RUN_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__ranSince = false;
  if (window.__runWatch) window.__runWatch.disconnect();
  // A fast run can go running -> notRunning within one batch of mutations: the callback then sees
  // only the final state, so the records' old values are read too.
  window.__runWatch = new MutationObserver((records) => {
    if (app.getAttribute('data-test-script-state') === 'running'
        || records.some((r) => r.oldValue === 'running')) window.__ranSince = true;
  });
  window.__runWatch.observe(app, {attributes: true, attributeOldValue: true,
                                  attributeFilter: ['data-test-script-state']});
}"""


def after_rerun(page, action, timeout: float = WAIT_MS) -> None:
    """Do ``action()`` (an edit that changes a widget's value) and return once the rerun it causes
    has started and the page is ready again. A bare ``wait_ready`` right after an edit can see the
    previous run's finished page, before the browser has sent the new value (slow under load)."""
    page.evaluate(WATCH_RUN_JS)
    action()
    page.wait_for_function("() => window.__ranSince === true", timeout=timeout)
    wait_ready(page, timeout)


#: True when the text or number field ``el`` holds a value the app has taken: what it shows is
#: ``want`` (a number field shows it formatted: "6" for "6.0") and Streamlit's "Press Enter to
#: apply" hint, shown while a field holds an edit not yet sent, is gone.
COMMITTED_JS = """(el, want) => {
  const box = el.closest('[data-testid="stTextInput"], [data-testid="stNumberInput"]') || el.parentElement;
  const hint = box && box.querySelector('[data-testid="InputInstructions"]');
  if (hint && hint.innerText.trim()) return false;
  const a = el.value.trim(), b = String(want).trim();
  return a === b || (a !== '' && b !== '' && Number(a) === Number(b));
}"""


def commit_text(page, box, text: str, timeout: float = WAIT_MS, tries: int = 4) -> None:
    """Type ``text`` into the text or number field ``box`` (a locator) and press Enter, as a person
    does; return once the app has taken the value (the rerun it causes has started, or the field
    shows the value with no edit pending) and the page is ready again.

    Under load a run already going can redraw the field after the fill and put the server's value
    back, so the Enter commits nothing and no run follows. A person would see their text gone and
    type it again: so does this. A run can also start and end unseen by the run watch (seen once
    in 74 tests at load ~20: the number field then showed the value taken, "6" for "6.0"): the
    field's own state then says the value was taken. Typing the same text again is harmless: a
    field whose value is already taken sends nothing on Enter."""
    for attempt in range(tries):
        page.evaluate(WATCH_RUN_JS)
        if attempt and box.input_value() == text:
            # the text is there but still pending (a fresh CI run: Enter pressed four times, the
            # hint still shown): leave the field, as a person clicking elsewhere does (a text
            # field also commits when it loses focus)
            box.press("Enter")
            box.blur()
        else:
            box.fill(text)
            box.press("Enter")
        try:
            page.wait_for_function("() => window.__ranSince === true", timeout=timeout / tries)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            wait_ready(page, timeout)
            if box.evaluate(COMMITTED_JS, text):
                break
            if attempt == tries - 1:
                pending = box.evaluate(
                    COMMITTED_JS.replace(
                        "if (hint && hint.innerText.trim()) return false;", "return !!(hint && hint.innerText.trim());"
                    ),
                    text,
                )
                raise AssertionError(
                    f"the app did not take {text!r} after {tries} tries (typed, Enter, "
                    f"focus left); the field shows {box.input_value()!r}"
                    f"{' with its edit pending' if pending else ''}"
                ) from None
    wait_ready(page, timeout)


def until(page, action, done, tries: int = 3) -> None:
    """``action()`` (a click), then wait for ``done(timeout)`` (raises on timeout); again up to
    ``tries`` times. A click that lands while a fragment (the banner, the live panel: redrawn every
    few seconds) is being redrawn is lost with the element it hit; a person clicks again, and so
    does the test (a second send replaces the first: counted once, checked in the results).
    :func:`click_until` is the same for a locator to click and one to wait for."""
    for attempt in range(tries):
        action()
        try:
            done(WAIT_MS / tries)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            if attempt == tries - 1:
                raise
            wait_ready(page)


def click_until(target, done, tries: int = 3, timeout: float = WAIT_MS) -> None:
    """Click ``target`` (a locator) until ``done`` (a locator) is visible, at most ``tries`` times.

    A click that lands while a timed fragment (the class banner, the teacher's live panel: they
    rerun every few seconds) is being redrawn can be dropped by Streamlit with the element it hit;
    a person clicks again, and so does this. Each click is clicked only while ``target`` is still
    shown: a toggle already flipped (its label changed) is not flipped back."""
    for attempt in range(tries):
        if attempt == 0 or target.is_visible():
            target.click()
        try:
            done.wait_for(state="visible", timeout=timeout / tries)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            if attempt == tries - 1:
                raise


def open_page(page, server: str, stem: str, lang: str = "en", timeout: float = WAIT_MS) -> None:
    """Open ``stem`` at its defaults, in ``lang``, the cheaper way a student does: from the sidebar
    when the tab already shows this server's app in that language on another page (the app's code
    and the chart library are loaded: about a third less browser CPU than a load), else by a load
    of its address. Returns once the page's title is shown and it is ready."""
    from urllib.parse import parse_qs, urlsplit

    here = urlsplit(page.url)
    path = url_path(stem)
    same_app = page.url.startswith(server.rstrip("/") + "/") and parse_qs(here.query).get("lang") == [lang]
    if same_app and here.path.strip("/") != path and not page.locator(EXCEPTION).count():
        click_and_wait(page, sidebar_link(page, path), path, page_title(stem, lang))
    else:
        goto(page, f"{server}/{path}?lang={lang}", timeout)


def sidebar_link(page, url_path: str):
    """The page's link in the sidebar (opening "View more" when the list is collapsed)."""
    sel = f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]' if url_path else '[data-testid="stSidebarNav"] a'
    link = page.locator(sel).first
    if not link.count() or not link.is_visible():
        more = page.locator('[data-testid="stSidebarNavViewButton"]')
        if more.count():
            more.first.click()
            link.wait_for(state="visible")
    return link


def click_and_wait(page, link, path: str, title: str) -> None:
    """Click a sidebar link; return once the address is the page's, the main area's title is
    ``title`` (the page's own, in the language shown) and the page is ready (run finished, every
    figure drawn). The title tells the new page from the old one however fast its run was (a watch
    for the run's start could miss a run that began and ended between two observations)."""
    link.click()
    page.wait_for_function(
        "([p, t]) => { if (!(location.pathname.replace(/\\/$/, '').endsWith('/' + p) || !p)) return false;"
        " const h = document.querySelector('[data-testid=\"stMain\"] h1');"
        " return !!h && h.innerText.trim() === t; }",
        arg=[path, title],
        timeout=WAIT_MS,
    )
    wait_ready(page)


def page_title(stem: str, lang: str = "en") -> str:
    from ui.kit.i18n import Text

    return Text(stem, lang)("title")


def goto(page, url: str, timeout: float = WAIT_MS) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    wait_ready(page, timeout)


def signature(page) -> list[str]:
    return page.evaluate(SIGNATURE_JS)


def wait_signature_change(page, before: list[str], timeout: float = WAIT_MS) -> list[str]:
    page.wait_for_function(
        f"(b) => JSON.stringify(({SIGNATURE_JS})()) !== JSON.stringify(b)", arg=before, timeout=timeout
    )
    return signature(page)


def exceptions(page) -> list[str]:
    return page.locator(EXCEPTION).all_inner_texts()


def title(page) -> str:
    return page.locator('[data-testid="stMain"] h1').first.inner_text().strip()


def n_charts(page) -> int:
    return page.locator(PLOT).count()


def n_drawn(page) -> int:
    return page.locator(PLOT_SVG).evaluate_all(
        "els => new Set(els.map(e => e.closest('[data-testid=\"appPlotlyChart\"]'))).size"
    )


# --------------------------------------------------------------------------- widgets
def option_label(stem: str, p, o, lang: str) -> str:
    """The text a select widget shows for option ``o`` (as ui.kit.page formats it)."""
    from ui.kit.i18n import Text

    t = Text(stem, lang)
    key = f"params.{p.name}.options.{o}"
    return t(key) if t.has(key) else str(o)


def widget_value(page, stem: str, p, lang: str = "en"):
    """The value the page shows for parameter ``p`` (a ui.kit.spec.Param), as a Python value."""
    box = page.locator(f".st-key-{p.name}").first
    if p.kind in ("float", "int"):
        raw = box.locator('input[type="range"]').evaluate("e => e.getAttribute('aria-valuenow') ?? e.value")
        x = float(raw)
        return int(round(x)) if p.kind == "int" else x
    if p.kind == "bool":
        return box.locator('input[type="checkbox"]').is_checked()
    if p.kind == "select":
        shown = box.locator('input[role="combobox"]').input_value()
        for o in p.options:
            if option_label(stem, p, o, lang) == shown:
                return o
        return shown
    raise ValueError(p.kind)


def widget_values(page, stem: str, params, lang: str = "en") -> dict:
    return {p.name: widget_value(page, stem, p, lang) for p in params}


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return a == b


def slider(page, name: str):
    return page.locator(f'.st-key-{name} input[type="range"]').first


def nudge(page, p, key: str = "ArrowRight") -> None:
    """Move slider ``p`` one step with the keyboard, as a student would."""
    s = slider(page, p.name)
    s.focus()
    s.press(key)


def first_slider(params):
    return next((p for p in params if p.kind in ("float", "int")), None)


def step_target(p, v):
    """(key, expected value) of a one-step keyboard move from ``v``."""
    step = p.step or (1 if p.kind == "int" else (p.max - p.min) / 100)
    if v + step <= p.max + 1e-12:
        return "ArrowRight", p.clamp(v + step)
    return "ArrowLeft", p.clamp(v - step)


def url_param(page, name: str) -> str | None:
    from urllib.parse import parse_qs, urlsplit

    vals = parse_qs(urlsplit(page.url).query, keep_blank_values=True).get(name)
    return vals[0] if vals else None


def wait_url_param(page, name: str, value: str, timeout: float = WAIT_MS) -> None:
    page.wait_for_function(
        "([n, v]) => new URLSearchParams(location.search).get(n) === v", arg=[name, value], timeout=timeout
    )


# --------------------------------------------------------------------------- screenshots
def open_expanders(page) -> None:
    """Open every collapsed expander in the main area (for screenshots)."""
    for s in page.locator('[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary').all():
        try:
            s.click(timeout=5_000)
        except Exception:  # noqa: BLE001 - a screenshot without it is still useful
            pass


def full_screenshot(page, path: Path, width: int = 1400, min_height: int = 1000, max_height: int = 16_000) -> None:
    """The whole page: Streamlit scrolls inside its main container, so grow the viewport to fit."""
    h = page.evaluate("""() => {
      const m = document.querySelector('[data-testid="stMain"]');
      const s = document.querySelector('[data-testid="stSidebarContent"]');
      return Math.max(m ? m.scrollHeight : 0, s ? s.scrollHeight : 0, document.body.scrollHeight);
    }""")
    page.set_viewport_size({"width": width, "height": int(min(max(h + 40, min_height), max_height))})
    page.wait_for_timeout(300)  # let responsive charts settle at the new size
    page.screenshot(path=str(path), full_page=True, animations="disabled")


#: A held arrow key: ten key-downs at the pace a key repeats (ms between them), dispatched in the
#: page so that the pace holds however busy the driving process is; ``window.__tlast`` is the
#: time of the last one (``performance.now()``). bench/latency.py and tests/e2e/test_held_key.py.
HOLD_GAPS_MS = [33, 50, 80, 40, 60, 33, 70, 45, 80]  # between ten key-downs of one held key
HOLD_JS = """([n, gaps]) => new Promise((done) => {
  const e = document.querySelector('.st-key-' + n + ' input[type="range"]');
  e.focus();
  const ev = (type, repeat) => new KeyboardEvent(type, {key: 'ArrowRight', code: 'ArrowRight',
      keyCode: 39, which: 39, bubbles: true, cancelable: true, repeat});
  let i = 0;
  const down = () => {
    e.dispatchEvent(ev('keydown', i > 0));
    if (i < gaps.length) setTimeout(down, gaps[i++]);
    else { window.__tlast = performance.now(); e.dispatchEvent(ev('keyup', false)); done(); }
  };
  down();
})"""
