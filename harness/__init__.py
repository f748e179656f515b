"""What the tests and the benchmarks share: the infrastructure that drives the app from outside.

- :mod:`harness.apptest`: Streamlit's AppTest on one page (in-process: no server, no browser);
- :mod:`harness.server`: a server started as ``make run`` starts it, on a free loopback port, and
  what is read off it (health, CPU, RSS); the first browser-less visit after a start;
- :mod:`harness.wsclient`: a browser-less session over Streamlit's websocket protocol;
- :mod:`harness.browser`: what a student's browser does, over Playwright and the system's Chromium.

harness/ imports the product (``ui``, ``sim``, ``pages``) and itself, never ``bench``, ``scripts``
or ``tests``; those three import it.
"""
