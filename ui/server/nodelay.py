"""Every HTTP and websocket connection of the server without Nagle's algorithm (``TCP_NODELAY``).

Streamlit 1.67 binds its listening socket itself (``socket.socket(family)``: protocol 0) and hands it
to uvicorn. asyncio turns Nagle's algorithm off only on sockets whose protocol is ``IPPROTO_TCP``
(``asyncio.base_events._set_nodelay``), so on the connections accepted from that socket it stays on.
A response is written as two segments (the headers, then the body); with Nagle on, the body waits
until the browser acknowledges the headers, and a browser delays that acknowledgement by up to
40 ms. On a kept-alive connection every request after the first paid it: a first visit's ~60
JavaScript modules arrived one round per 30-40 ms over Chromium's six connections (0.5 s on
localhost before Streamlit's code could start), and the page's websocket messages trickled the same
way. Measured: keep-alive requests 40 ms each before, ~1 ms after (``bench/first_visit.py``); the
option itself is checked by ``tests/test_nodelay.py``.

Two ways in, one per start:

- ``make run`` / ``make serve-class`` / the image (``python -m ui.server``): uvicorn's HTTP protocol
  (:func:`protocol`, given as uvicorn's ``http`` setting by ``ui.server.adapters``) sets
  ``TCP_NODELAY`` on each connection as it is made; the websocket upgrade keeps the connection.
- a plain ``streamlit run app.py``: at the first page run the running server's listening sockets get
  ``TCP_NODELAY`` (:func:`listeners`), which Linux passes on to every connection accepted after it.
"""

from __future__ import annotations

import functools
import socket

from ui import streamlit_internals as internals


def no_nagle(sock) -> bool:
    """Turn Nagle's algorithm off on a TCP socket; False for another kind (a Unix socket) or when
    the system refuses."""
    try:
        if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
            return False
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    except (OSError, AttributeError):
        return False


@functools.cache
def protocol():
    """The HTTP protocol class to give uvicorn (``uvicorn.Config(http=...)``): uvicorn's own (h11, or
    httptools when installed), each connection without Nagle; one class per process."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class NoDelayHTTP(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        def connection_made(self, transport) -> None:
            no_nagle(transport.get_extra_info("socket"))
            super().connection_made(transport)

    return NoDelayHTTP


def listeners() -> int:
    """``TCP_NODELAY`` on the running server's listening sockets (inherited by the connections
    accepted after it, on Linux); the number of sockets set."""
    return sum(no_nagle(s) for s in internals.listening_sockets())
