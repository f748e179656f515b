"""The mock OpenID provider of the browser tests (tests/e2e/oidc_provider.py) refuses what a real
one refuses, so the browser test's "signed in" means the app did the flow right: a wrong client
secret, a reused code, a wrong PKCE verifier, another redirect URI. Its id_token verifies against
its published key and carries iss, aud, nonce, exp."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.e2e.oidc_provider import MockOIDC

REDIRECT = "http://127.0.0.1:1/oauth2callback"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url: str, headers: dict | None = None) -> tuple[int, dict, dict]:
    try:
        r = OPENER.open(urllib.request.Request(url, headers=headers or {}), timeout=10)
        status, hdrs, raw = r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, raw = e.code, dict(e.headers), e.read()
    return status, hdrs, (json.loads(raw) if raw else {})


def post(url: str, form: dict, basic: tuple[str, str] | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if basic:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()
    req = urllib.request.Request(url, data=urlencode(form).encode(), headers=headers)
    try:
        r = OPENER.open(req, timeout=10)
        return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture(scope="module")
def idp():
    with MockOIDC("cid", "csecret", REDIRECT) as p:
        yield p


def authorize(idp, verifier: str = "v" * 50, redirect: str = REDIRECT, scope: str = "openid email"):
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    q = urlencode(
        {
            "response_type": "code",
            "client_id": "cid",
            "redirect_uri": redirect,
            "scope": scope,
            "state": "st4te",
            "nonce": "n0nce",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    status, hdrs, body = get(f"{idp.issuer}/authorize?{q}")
    return status, hdrs, body


def code_of(hdrs) -> str:
    loc = urlsplit(hdrs["Location"])
    q = parse_qs(loc.query)
    assert loc.geturl().startswith(REDIRECT) and q["state"] == ["st4te"]
    return q["code"][0]


def token(idp, code: str, verifier: str = "v" * 50, secret: str = "csecret", redirect: str = REDIRECT):
    return post(
        f"{idp.issuer}/token",
        {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier},
        basic=("cid", secret),
    )


def test_discovery_and_a_good_flow_give_a_verifiable_id_token(idp):
    status, _, meta = get(idp.metadata_url)
    assert status == 200 and meta["issuer"] == idp.issuer and "S256" in meta["code_challenge_methods_supported"]
    idp.sign_in_as("teacher@example.org")
    status, hdrs, _ = authorize(idp)
    assert status == 302
    status, tok = token(idp, code_of(hdrs))
    assert status == 200, tok
    _, _, jwks = get(meta["jwks_uri"])
    claims = jwt.decode(tok["id_token"], KeySet.import_key_set(jwks)).claims
    assert claims["iss"] == idp.issuer and claims["aud"] == "cid" and claims["nonce"] == "n0nce"
    assert claims["email"] == "teacher@example.org" and claims["email_verified"] is True
    assert 0 < claims["exp"] - time.time() <= 300
    status, _, info = get(meta["userinfo_endpoint"], {"Authorization": f"Bearer {tok['access_token']}"})
    assert status == 200 and info["email"] == "teacher@example.org"


def test_refuses_wrong_secret_reused_code_wrong_verifier_other_redirect(idp):
    idp.sign_in_as("teacher@example.org")
    n = len(idp.errors)
    _, hdrs, _ = authorize(idp)
    code = code_of(hdrs)
    assert token(idp, code, secret="wrong")[0] == 401
    _, hdrs, _ = authorize(idp)
    code = code_of(hdrs)
    assert token(idp, code, verifier="w" * 50) == (400, {"error": "invalid_grant"})
    assert token(idp, code)[0] == 400, "a code is used once, even after a failed attempt"
    _, hdrs, _ = authorize(idp)
    assert token(idp, code_of(hdrs), redirect=REDIRECT + "x")[0] == 400
    assert authorize(idp, redirect="http://evil.example/cb")[0] == 400
    assert len(idp.errors) == n + 5


def test_user_refusal_and_missing_openid_scope_go_back_as_errors(idp):
    idp.sign_in_as(None)
    status, hdrs, _ = authorize(idp)
    assert status == 302 and parse_qs(urlsplit(hdrs["Location"]).query)["error"] == ["access_denied"]
    idp.sign_in_as("a@example.org")
    status, hdrs, _ = authorize(idp, scope="email")
    assert parse_qs(urlsplit(hdrs["Location"]).query)["error"] == ["invalid_request"]


def test_logout_redirects_only_to_the_registered_uri(idp):
    status, hdrs, _ = get(f"{idp.issuer}/logout?" + urlencode({"post_logout_redirect_uri": REDIRECT, "state": "s"}))
    assert status == 302 and hdrs["Location"].startswith(REDIRECT)
    assert get(f"{idp.issuer}/logout?post_logout_redirect_uri=http://evil.example/")[0] == 400
