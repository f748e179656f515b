"""Prove that a served app renders every page and honours APP_PARAMS_FILE.

Two steps, used by ``scripts/image_check.sh`` (and handy by hand)::

    # 1. a copy of the parameter file with one default moved per page
    python scripts/params_probe.py make assets/params.toml /tmp/custom.toml > /tmp/expect.json
    # 2. against a server started with APP_PARAMS_FILE=/tmp/custom.toml:
    python scripts/params_probe.py verify http://127.0.0.1:8501 /tmp/expect.json

``make`` picks, on every page, the first numeric parameter (with a step) whose
effective default (the page's SCHEMA and what the file already overrides) can
move by one step inside [min, max], and adds an override of that default, as
the in-app editor writes one: a ``[<page>.params.<key>]`` table with
``default = …`` (ui.teaching.params_file.apply_edits; re-resolved to make sure).  ``verify`` opens
every page listed by the app's navigation in a websocket session (harness/wsclient.py): each must finish
without an exception element or an ``st.error``; on each page named in the
expectation the widget with that key must show the moved default.  It prints
one JSON line and exits non-zero on any failure.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import tomllib
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from harness.wsclient import SessionError, StreamlitSession  # noqa: E402


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _moved(p) -> float | int | None:
    """A default one step away from ``p``'s (a resolved ui.kit.spec.Param), inside its range; None if
    there is none. Only parameters with a step: their slider shows exactly the moved value."""
    if p.kind not in ("float", "int") or not _is_num(p.step) or p.step <= 0:
        return None
    for cand in (p.default + p.step, p.default - p.step):
        if p.min <= cand <= p.max and not math.isclose(cand, p.default, rel_tol=1e-12, abs_tol=1e-12):
            return int(round(cand)) if p.kind == "int" else round(float(cand), 10)
    return None


def make(src: str, dst: str) -> dict[str, dict[str, Any]]:
    """Write ``dst``: ``src`` plus, for every page with a stepped numeric parameter, an override of
    its first such parameter's default by one step, as the in-app editor writes it
    (``[<page>.params.<name>]`` with ``default = …``, ui.teaching.params_file.apply_edits). The built-in
    ranges live in the pages' SCHEMA; the file holds only what it overrides, so the effective
    values (``ui.kit.spec.resolve`` of ``src``) are the starting point. Returns ``{page: {name: value}}``."""
    import streamlit.logger

    streamlit.logger.set_log_level("error")  # "No runtime found" for every cached function imported
    from ui.kit import spec
    from ui.teaching import params_file
    from ui.kit.nav import PAGES

    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    stems = tuple(e.stem for e in PAGES)
    base = tomllib.loads(text)
    expect: dict[str, dict[str, Any]] = {}
    for stem in stems:
        from ui.kit import files

        schema = files.page_module(stem).SCHEMA
        res = spec.resolve(schema, base, "src", stems)
        for name, p in res.params.items():
            new = _moved(p)
            if new is None:
                continue
            candidate = params_file.apply_edits(text, stem, {name: {"default": new}}, None)
            got = spec.resolve(schema, tomllib.loads(candidate), "dst", stems)
            if got.params[name].default != new or len(got.errors) > len(res.errors):
                continue
            text = candidate
            expect[stem] = {name: new}
            break
    if not expect:
        raise SystemExit(f"params_probe: no numeric default to move on any page ({src})")
    problems = params_file.validate_text(text, os.path.basename(dst))
    if problems:
        raise SystemExit(f"params_probe: the written file is refused: {problems[:3]}")
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
    return expect


async def _verify(url: str, expect: dict[str, dict[str, Any]], locale: str) -> dict[str, Any]:
    out: dict[str, Any] = {"pages": {}, "params": {}, "failures": []}
    async with StreamlitSession(url, locale=locale, timeout=90) as probe:
        first = await probe.rerun()
        pages = sorted(probe.pages) or [""]
        if not first.ok:
            out["failures"].append(f"default page: {first.error or first.exceptions}")
    for page in pages:
        async with StreamlitSession(url, locale=locale, timeout=90) as s:
            r = await s.rerun(page=page)
            out["pages"][page or "/"] = round(r.seconds, 3)
            if not r.ok or r.error_alerts:
                out["failures"].append(
                    f"page {page or '/'}: error={r.error} exceptions={r.exceptions} st.error={r.error_alerts}"
                )
            for key, want in expect.get(page, {}).items():
                got = s.widget_values.get(key)
                out["params"][f"{page}.{key}"] = {"expected": want, "shown": got}
                if not (_is_num(got) and math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-9)):
                    out["failures"].append(f"{page}.{key}: expected default {want}, page shows {got!r}")
    missing = sorted(set(expect) - set(pages))
    for page in missing:
        out["failures"].append(f"page {page!r} from the parameter file is not in the navigation {pages}")
    out["ok"] = not out["failures"]
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "make":
        print(json.dumps(make(argv[1], argv[2])))
        return 0
    if len(argv) in (3, 4) and argv[0] == "verify":
        with open(argv[2], encoding="utf-8") as fh:
            expect = json.load(fh)
        try:
            out = asyncio.run(_verify(argv[1], expect, argv[3] if len(argv) == 4 else "en-US"))
        except SessionError as exc:
            out = {"ok": False, "failures": [str(exc)]}
        print(json.dumps(out, ensure_ascii=False))
        return 0 if out["ok"] else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
