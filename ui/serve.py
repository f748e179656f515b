"""Serve the app: ``python -m ui.serve [options]`` is ``streamlit run app.py [options]`` plus one fix.

Streamlit treats an app with a folder named ``pages/`` beside its main script as a
legacy (v1) multipage app until some session has executed ``st.navigation`` — a
process-wide flag decided when the first session starts. The first visitor after a
server start therefore ran in legacy mode: a deep link ran the page script without
app.py, and that session's widget ids came from the legacy run, so its first
interaction (a slider, the language switch) was silently dropped. This app always
routes with ``st.navigation``, so the flag is cleared before the server starts.
``make run``, the Docker image, the tests and the benchmarks all start the server
this way. (Checked against the pinned streamlit 1.67; ``ui.page`` keeps a fallback
for a plain ``streamlit run``.)
"""
from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    args = sys.argv[1:] if argv is None else argv
    cli.main(["run", str(APP), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
