"""Write one lesson view as a Jupyter notebook: ``make notebook PAGE=<stem> LANG=en|zh ARGS="name=value …"``.

    .venv/bin/python scripts/make_notebook.py two_point --lang zh beta=2.5 theta0=0.8 [--answers] [-o FILE]

``make notebook`` passes ARGS in the environment (``NOTEBOOK_ARGS``, split on blanks), never through a shell.
The values go through the page's own validation (its SCHEMA with the parameter file in force, as a
URL's would: types, ranges, steps, options); a value the page would refuse is replaced by the
default, with a note on stderr. Writes ``notebooks/<stem>.ipynb`` (ignored by git) unless ``-o``.
``--answers`` adds the worked answers (a page shows them once the instructor releases them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ui.kit import files
from ui.kit import notebook, spec  # noqa: E402
from ui.kit.nav import PAGES  # noqa: E402


def _differs(taken, given: str) -> bool:
    """True when the page took another value than the one typed (clamped, snapped, refused)."""
    try:
        return float(taken) != float(given)
    except (TypeError, ValueError):
        return str(taken) != given


def main(argv: list[str] | None = None) -> int:
    lessons = [e.stem for e in PAGES if notebook.recipe(e.stem) is not None]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", choices=lessons)
    ap.add_argument("values", nargs="*", metavar="name=value")
    ap.add_argument("--lang", default="en", choices=spec.LANGS)
    ap.add_argument("--answers", action="store_true", help="include the worked answers")
    ap.add_argument("-o", "--output", type=Path, help="default: notebooks/<page>.ipynb")
    a = ap.parse_intermixed_args(argv)
    a.values += os.environ.get("NOTEBOOK_ARGS", "").split()  # make notebook ARGS="…", split on blanks
    schema = files.page_module(a.page).SCHEMA
    res = spec.resolve(schema, known_pages=tuple(e.stem for e in PAGES))
    raw = {}
    for item in a.values:
        name, sep, value = item.partition("=")
        if not sep or name not in res.params:
            print(f"ignored {item[:60]!r}: expected name=value, name one of {', '.join(res.params)}", file=sys.stderr)
            continue
        raw[name] = value
    values = notebook.validated(res, raw)
    for name, value in raw.items():
        if _differs(values[name], value):
            print(f"{name}={value[:40]!r}: the page takes {values[name]!r}", file=sys.stderr)
    nb = notebook.build(notebook.recipe(a.page), res, values, a.lang, answers=a.answers)
    out = a.output or ROOT / "notebooks" / f"{a.page}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(notebook.dumps(nb))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
