"""Every connection of the server without Nagle's algorithm (ui/server/nodelay.py).

Streamlit binds its listening socket with ``socket.socket(family)`` (protocol 0), and asyncio turns
Nagle off only on ``IPPROTO_TCP`` sockets: on a kept-alive connection each response's body then
waited for the browser's delayed acknowledgement of its headers (40 ms a request). These tests build
the same kind of socket and check the option on the connection the server accepts."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

import pytest

from ui import streamlit_internals as internals
from ui.server import nodelay


def _pair():
    """A listening socket made as Streamlit makes it, a client connected to it, and the accepted
    connection (protocol 0: asyncio leaves Nagle on there)."""
    lst = socket.socket(family=socket.AF_INET)
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    cli = socket.create_connection(lst.getsockname())
    srv, _ = lst.accept()
    return lst, cli, srv


def _nagle_off(sock) -> bool:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def _made(protocol_class, sock) -> None:
    """uvicorn's protocol made on an accepted socket, as uvicorn makes it (its transport by asyncio)."""
    import uvicorn
    from uvicorn.server import ServerState

    async def app(scope, receive, send):  # never called: no request is sent
        raise AssertionError

    config = uvicorn.Config(app, http=protocol_class, log_level="error")
    config.load()

    async def go():
        loop = asyncio.get_running_loop()
        sock.setblocking(False)
        proto = protocol_class(config=config, server_state=ServerState(), app_state={})
        transport, _ = await loop.connect_accepted_socket(lambda: proto, sock)
        transport.close()

    asyncio.run(go())


def test_the_problem_is_real_an_accepted_connection_keeps_nagle_with_uvicorns_own_protocol():
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    lst, cli, srv = _pair()
    try:
        assert srv.proto == 0  # what asyncio's own TCP_NODELAY skips
        probe = srv.dup()
        _made(AutoHTTPProtocol, srv)
        assert not _nagle_off(probe)
        probe.close()
    finally:
        cli.close(), lst.close()


def test_the_served_protocol_turns_nagle_off_on_each_connection():
    lst, cli, srv = _pair()
    try:
        probe = srv.dup()  # the same connection (the transport closes its own descriptor)
        _made(nodelay.protocol(), srv)
        assert _nagle_off(probe)
        probe.close()
    finally:
        cli.close(), lst.close()
    assert nodelay.protocol() is nodelay.protocol()


def test_the_served_process_gives_uvicorn_that_protocol():
    from streamlit.web.server.starlette import starlette_server

    from ui.server import adapters

    adapters.install_guards()
    assert starlette_server._get_uvicorn_config_kwargs()["http"] is nodelay.protocol()


def test_no_nagle_on_tcp_only():
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        assert nodelay.no_nagle(a) is False
    finally:
        a.close(), b.close()
    assert nodelay.no_nagle(None) is False
    lst, cli, srv = _pair()
    try:
        assert not _nagle_off(srv) and nodelay.no_nagle(srv) and _nagle_off(srv)
    finally:
        cli.close(), srv.close(), lst.close()


@pytest.fixture
def running_uvicorn():
    """A started uvicorn server on a socket made as Streamlit makes it, in a thread."""
    import uvicorn

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                pass
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    lst = socket.socket(family=socket.AF_INET)
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    th = threading.Thread(target=server.run, kwargs={"sockets": [lst]}, daemon=True)
    th.start()
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.01)
    assert server.started
    try:
        yield lst
    finally:
        server.should_exit = True
        th.join(10)
        lst.close()


def test_a_plain_streamlit_run_sets_the_running_servers_listening_socket(running_uvicorn):
    # what install_late does at the first page run of a plain `streamlit run app.py`
    assert any(s.fileno() == running_uvicorn.fileno() for s in internals.listening_sockets())
    assert not _nagle_off(running_uvicorn)
    assert nodelay.listeners() >= 1
    assert _nagle_off(running_uvicorn)
    cli = socket.create_connection(running_uvicorn.getsockname())  # the server still answers
    try:
        cli.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert cli.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        cli.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="what the late path relies on, on Linux")
def test_a_connection_accepted_from_a_listener_without_nagle_has_none():
    lst = socket.socket(family=socket.AF_INET)
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    nodelay.no_nagle(lst)
    cli = socket.create_connection(lst.getsockname())
    srv, _ = lst.accept()
    try:
        assert _nagle_off(srv)
    finally:
        cli.close(), srv.close(), lst.close()
