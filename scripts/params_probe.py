"""Prove that a served app renders every page and honours APP_PARAMS_FILE.

Two steps, used by ``scripts/image_check.sh`` (and handy by hand)::

    # 1. a copy of the parameter file with one default moved per page
    python scripts/params_probe.py make assets/params.toml /tmp/custom.toml > /tmp/expect.json
    # 2. against a server started with APP_PARAMS_FILE=/tmp/custom.toml:
    python scripts/params_probe.py verify http://127.0.0.1:8501 /tmp/expect.json

``make`` picks, in every page section ``[<page>.params.<key>]``, the first
numeric parameter whose default can move by one step inside [min, max], and
writes the moved value (text edit of that one line; the result is re-read
with tomllib to make sure).  ``verify`` opens every page listed by the app's
navigation in a websocket session (bench/wsclient.py): each must finish
without an exception element or an ``st.error``; on each page named in the
expectation the widget with that key must show the moved default.  It prints
one JSON line and exits non-zero on any failure.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import sys
import tomllib
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.wsclient import SessionError, StreamlitSession  # noqa: E402


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _moved(spec: dict[str, Any]) -> float | int | None:
    lo, hi, d = spec.get("min"), spec.get("max"), spec.get("default")
    step = spec.get("step")
    if not all(_is_num(v) for v in (lo, hi, d)):
        return None
    if not _is_num(step) or step <= 0:
        step = (hi - lo) / 10 if isinstance(d, float) else 1
    is_int = all(isinstance(v, int) for v in (lo, hi, d, step))
    for cand in (d + step, d - step):
        if lo <= cand <= hi and cand != d:
            return int(cand) if is_int else round(float(cand), 10)
    return None


def make(src: str, dst: str) -> dict[str, dict[str, Any]]:
    with open(src, "rb") as fh:
        data = tomllib.load(fh)
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    expect: dict[str, dict[str, Any]] = {}
    for page, section in data.items():
        params = section.get("params") if isinstance(section, dict) else None
        if not isinstance(params, dict):
            continue
        for key, spec in params.items():
            if not isinstance(spec, dict):
                continue
            new = _moved(spec)
            if new is None:
                continue
            header = re.compile(
                r"^\[\s*" + re.escape(page) + r"\s*\.\s*params\s*\.\s*" + re.escape(key) + r"\s*\]\s*$",
                re.M,
            )
            m = header.search(text)
            if not m:
                continue
            nxt = re.compile(r"^\s*\[", re.M).search(text, m.end())
            end = nxt.start() if nxt else len(text)
            block = text[m.end() : end]
            block2, n = re.subn(r"^(\s*default\s*=\s*)[^\n#]*", lambda g: f"{g.group(1)}{new!r}", block, count=1, flags=re.M)
            if n != 1:
                continue
            candidate = text[: m.end()] + block2 + text[end:]
            if tomllib.loads(candidate)[page]["params"][key]["default"] != new:
                continue
            text = candidate
            expect[page] = {key: new}
            break
    if not expect:
        raise SystemExit(f"params_probe: no numeric default to move in {src}")
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(text)
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
