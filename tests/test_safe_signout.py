"""Sign-out holds on every replica: the revoked cookie is kept in the shared class store (Redis when
configured, memory otherwise) until the cookie's own expiry, and every replica's check reads it.

Two replicas are two app instances that share one redis-server and nothing else: each has its own
store client and its own process record (``ui.teaching.signin._REVOKED``, emptied here to stand for the other
process)."""

from __future__ import annotations

import time

import pytest

from tests._instructor import KEY, TEST_COOKIES, router_only  # noqa: F401 - fixture
from tests.conftest import app_test
from tests.test_instructor_class import redis_url  # noqa: F401 - fixture
from ui.teaching import class_store as cs
from ui.teaching import signin
from ui.server import budgets, signin_routes
from ui.teaching import instructor


@pytest.fixture(autouse=True)
def _router(router_only):  # noqa: F811
    pass


@pytest.fixture
def other_process(monkeypatch):
    """This process's own record of sign-outs, empty: what another replica knows by itself."""
    monkeypatch.setattr(signin, "_REVOKED", {})
    monkeypatch.setattr(signin, "_UNSAVED", {})


@pytest.fixture
def shared(redis_url, monkeypatch):  # noqa: F811
    """APP_REDIS_URL set for this process (replica A); a fresh store made from it."""
    monkeypatch.setenv(cs.REDIS_ENV, redis_url)
    monkeypatch.setattr(cs, "_store", None)
    store = cs.get_store()
    store.r.flushdb()
    return redis_url


def _signed_in(at) -> bool:
    return any("Signed in as instructor" in c.value for c in at.caption)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_the_store_keeps_a_revocation_until_the_cookie_expires(kind, request):
    store = cs.MemoryStore() if kind == "memory" else cs.RedisStore(request.getfixturevalue("redis_url"))
    now = time.time()
    store.revoke("n1", now + 3600)
    store.revoke("gone", now - 1)  # an expired cookie needs no record
    assert store.revoked("n1") and not store.revoked("gone") and not store.revoked("n2")
    if kind == "redis":
        ttl = store.r.ttl("rev:n1")
        assert 3590 <= ttl <= 3601  # the cookie's expiry is the record's TTL
        assert not store.r.exists("rev:gone")
    else:
        store.revoke("n3", now + 0.2)
        time.sleep(0.3)
        assert not store.revoked("n3")


def test_sign_out_on_one_replica_holds_on_the_other(shared, monkeypatch):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    monkeypatch.setattr(signin_routes, "SIGNIN_ATTEMPTS", signin.Attempts(per_browser=5, per_address=30, total=120))
    monkeypatch.setattr(budgets, "TRUSTED_PROXIES", ("testclient",))
    a = TestClient(Starlette(routes=signin_routes.signin_routes()), base_url="http://app.test")
    r = a.post("/_app/signin", data={"key": KEY, "next": "/"}, follow_redirects=False)
    token = r.cookies.get(signin.COOKIE) or a.cookies.get(signin.COOKIE)
    kept = signin.make_token(KEY)  # another teacher's cookie, not signed out
    b_store = cs.RedisStore(shared)  # replica B: its own client, the same Redis
    assert signin.token_ok(token, KEY, store=b_store)
    assert a.post("/_app/signout", data={"next": "/"}, follow_redirects=False).status_code == 303
    monkeypatch.setattr(signin, "_REVOKED", {})  # B's process never saw the sign-out
    assert not signin.token_ok(token, KEY, store=b_store)
    assert signin.token_ok(kept, KEY, store=b_store)
    assert signin.token_ok(token, KEY)  # what B would answer without the store


def test_a_page_on_the_other_replica_signs_the_teacher_out(shared, monkeypatch, other_process):
    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    token = signin.make_token(KEY)
    at = app_test("home")
    at.session_state[TEST_COOKIES] = {signin.COOKIE: token}
    at.run()
    assert _signed_in(at)
    signin.revoke(token, store=cs.RedisStore(shared))  # signed out through replica A
    signin._REVOKED.clear()  # this page runs on B, which never saw it
    at.run()  # the next run of B's page (a reload, a slider)
    assert not at.exception and not _signed_in(at)


class _Down:
    def revoke(self, nonce, until):
        raise ConnectionError("store down")

    def revoked(self, nonce):
        raise ConnectionError("store down")


def test_a_store_out_of_reach_keeps_pages_working_and_the_sign_out_is_written_later(other_process, caplog):
    token = signin.make_token(KEY)
    nonce = token.split(".")[1]
    signin.revoke(token, store=_Down())  # the store is down at sign-out
    assert not signin.token_ok(token, KEY, store=_Down())  # this replica still refuses it
    assert nonce in signin._UNSAVED and "this process only" in caplog.text
    up = cs.MemoryStore()
    assert not signin.token_ok(token, KEY, store=up)  # the next check writes it
    assert up.revoked(nonce) and not signin._UNSAVED
    other = signin.make_token(KEY)
    assert signin.token_ok(other, KEY, store=_Down()) is True  # nothing known against it: no exception
