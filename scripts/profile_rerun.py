"""Profile one page's rerun in-process (AppTest): where does a rerun's time go?

    .venv/bin/python scripts/profile_rerun.py nonnormal [--set beta=3] [--top 25]

Runs the page once (warm caches), optionally changes URL parameters, then profiles the next
rerun of the page script (cProfile on the script thread) and prints the top functions by
cumulative and by own time. A developer tool, not a test."""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stem")
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE URL parameter for the profiled rerun")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sort", default="cumulative")
    args = ap.parse_args()

    from streamlit.navigation.page import StreamlitPage
    from streamlit.testing.v1 import AppTest

    from harness.apptest import open_page

    prof = cProfile.Profile()
    active = {"on": False}
    orig = StreamlitPage.run

    def run(self):  # profile only the page body, on the script thread
        if not active["on"]:
            return orig(self)
        prof.enable()
        try:
            return orig(self)
        finally:
            prof.disable()

    StreamlitPage.run = run
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    if args.stem != "home":
        open_page(at, args.stem)
    at.run()
    at.run()
    for kv in args.set:
        k, v = kv.split("=", 1)
        at.query_params[k] = v
    if args.set:  # URL values are read on a fresh session only: rebuild it
        q = dict(at.query_params)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.run()
        if args.stem != "home":
            open_page(at, args.stem)
        for k, v in q.items():
            at.query_params[k] = v
    active["on"] = True
    t0 = time.perf_counter()
    at.run()
    wall = time.perf_counter() - t0
    errs = [e.value for e in at.exception]
    print(f"rerun wall {wall * 1e3:.0f} ms; exceptions: {errs or 'none'}; charts {len(at.get('plotly_chart'))}")
    st = pstats.Stats(prof)
    st.sort_stats(args.sort).print_stats(args.top)
    st.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
