"""A mock OpenID Connect provider for the tests (never for production): a threaded HTTP server
on loopback that Streamlit's ``st.login`` (Authlib's Starlette client) talks to.

It implements the authorization-code flow as a real provider does, and checks what the client
sends:

- ``/.well-known/openid-configuration``: the discovery document (PKCE S256 supported, an
  ``end_session_endpoint`` for RP-initiated logout);
- ``/authorize``: approves at once (no login form) as the identity the test chose with
  :meth:`MockOIDC.sign_in_as`, redirecting to ``redirect_uri`` with a one-time ``code`` and the
  client's ``state``; refuses an unknown client, a redirect URI other than the registered one, a
  request without ``openid`` in its scope; ``sign_in_as(None)`` answers ``access_denied``;
- ``/token``: the client authenticated (HTTP Basic or form), the code used once, the same
  ``redirect_uri``, the PKCE verifier matching the challenge; returns an ``id_token`` signed
  RS256 with a key made at start (``iss``, ``aud``, ``nonce``, ``iat``/``exp``, ``sub``,
  ``email``, ``email_verified``, ``name``) and an access token;
- ``/jwks``: the public key; ``/userinfo``: the claims for a bearer access token;
- ``/logout``: forgets the session and redirects to ``post_logout_redirect_uri``.

Signed with ``joserfc`` (Authlib's own JOSE dependency; ``authlib.jose`` is deprecated in Authlib 1.9).
Every request is recorded in :attr:`MockOIDC.log` (path, parameters), failures in :attr:`errors`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import RSAKey

ID_TOKEN_TTL_S = 300


def _b64url_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


class MockOIDC:
    """``with MockOIDC(client_id, client_secret, redirect_uri) as idp: idp.sign_in_as(email)``."""

    def __init__(self, client_id: str, client_secret: str, redirect_uri: str, host: str = "127.0.0.1", port: int = 0):
        self.client_id, self.client_secret, self.redirect_uri = client_id, client_secret, redirect_uri
        self.key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig", "alg": "RS256"})
        self._lock = threading.Lock()
        self._user: dict | None = None
        self._codes: dict[str, dict] = {}
        self._tokens: dict[str, dict] = {}
        self.log: list[tuple[str, dict]] = []
        self.errors: list[str] = []
        self.issued = 0  # id_tokens issued
        self.logouts = 0
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self.issuer = f"http://{host}:{self._httpd.server_address[1]}"
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ test controls
    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def sign_in_as(self, email: str | None, name: str | None = None, email_verified: bool = True) -> None:
        """The identity the next ``/authorize`` approves (None: the user refuses, ``access_denied``)."""
        with self._lock:
            if email is None:
                self._user = None
            else:
                self._user = {
                    "sub": "user-" + hashlib.sha256(email.encode()).hexdigest()[:16],
                    "email": email,
                    "email_verified": email_verified,
                    "name": name or email.split("@")[0].title(),
                }

    def paths(self) -> list[str]:
        with self._lock:
            return [p for p, _ in self.log]

    def start(self) -> MockOIDC:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mock-oidc", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> MockOIDC:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ the protocol
    def discovery(self) -> dict:
        i = self.issuer
        return {
            "issuer": i,
            "authorization_endpoint": f"{i}/authorize",
            "token_endpoint": f"{i}/token",
            "jwks_uri": f"{i}/jwks",
            "userinfo_endpoint": f"{i}/userinfo",
            "end_session_endpoint": f"{i}/logout",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "nonce", "email", "email_verified", "name"],
        }

    def jwks(self) -> dict:
        return {"keys": [self.key.as_dict(private=False)]}

    def authorize(self, q: dict) -> tuple[int, dict]:
        """(status, headers) for GET /authorize."""
        redirect_uri = q.get("redirect_uri", "")
        if q.get("client_id") != self.client_id or redirect_uri != self.redirect_uri:
            return self._fail(400, f"authorize: unknown client or redirect_uri {q.get('client_id')!r} {redirect_uri!r}")
        state = q.get("state", "")
        if q.get("response_type") != "code" or "openid" not in q.get("scope", "").split():
            return 302, {"Location": self._with(redirect_uri, error="invalid_request", state=state)}
        with self._lock:
            user = dict(self._user) if self._user else None
        if user is None:
            return 302, {"Location": self._with(redirect_uri, error="access_denied", state=state)}
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = {
                "user": user,
                "nonce": q.get("nonce"),
                "redirect_uri": redirect_uri,
                "challenge": q.get("code_challenge"),
                "method": q.get("code_challenge_method", "plain"),
                "t": time.time(),
            }
        return 302, {"Location": self._with(redirect_uri, code=code, state=state)}

    def token(self, form: dict, auth_header: str | None) -> tuple[int, dict]:
        """(status, JSON body) for POST /token."""
        cid, secret = form.get("client_id"), form.get("client_secret")
        if auth_header and auth_header.startswith("Basic "):
            raw = base64.b64decode(auth_header[6:]).decode()
            from urllib.parse import unquote

            cid, _, secret = (unquote(x) for x in raw.partition(":"))
        if cid != self.client_id or secret != self.client_secret:
            return self._fail(401, "token: client authentication failed", body={"error": "invalid_client"})
        if form.get("grant_type") != "authorization_code":
            return self._fail(400, "token: grant_type", body={"error": "unsupported_grant_type"})
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)
        if grant is None or time.time() - grant["t"] > 60:
            return self._fail(400, "token: unknown, used or expired code", body={"error": "invalid_grant"})
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return self._fail(400, "token: redirect_uri differs", body={"error": "invalid_grant"})
        if grant["challenge"]:
            verifier = form.get("code_verifier", "")
            want = _b64url_sha256(verifier) if grant["method"] == "S256" else verifier
            if want != grant["challenge"]:
                return self._fail(400, "token: PKCE verifier does not match", body={"error": "invalid_grant"})
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + ID_TOKEN_TTL_S,
            "auth_time": now,
            **grant["user"],
        }
        if grant["nonce"]:
            claims["nonce"] = grant["nonce"]
        id_token = jwt.encode({"alg": "RS256", "kid": self.key.kid, "typ": "JWT"}, claims, self.key)
        access = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[access] = grant["user"]
            self.issued += 1
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ID_TOKEN_TTL_S,
            "scope": "openid email profile",
            "id_token": id_token,
        }

    def userinfo(self, auth_header: str | None) -> tuple[int, dict]:
        token = (auth_header or "")[7:] if (auth_header or "").startswith("Bearer ") else ""
        with self._lock:
            user = self._tokens.get(token)
        if user is None:
            return self._fail(401, "userinfo: bad token", body={"error": "invalid_token"})
        return 200, user

    def logout(self, q: dict) -> tuple[int, dict]:
        with self._lock:
            self.logouts += 1
            self._tokens.clear()
        target = q.get("post_logout_redirect_uri")
        if target and target != self.redirect_uri:
            return self._fail(400, f"logout: unregistered post_logout_redirect_uri {target!r}")
        if not target:
            return 200, {}
        return 302, {"Location": self._with(target, state=q["state"]) if q.get("state") else target}

    # ------------------------------------------------------------------ plumbing
    @staticmethod
    def _with(uri: str, **params) -> str:
        params = {k: v for k, v in params.items() if v}
        return uri + ("&" if urlsplit(uri).query else "?") + urlencode(params)

    def _fail(self, status: int, why: str, body: dict | None = None):
        with self._lock:
            self.errors.append(why)
        return status, (body if body is not None else {"error": why})

    def _handler(self):
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body=None, headers: dict | None = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802
                u = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
                with idp._lock:
                    idp.log.append((u.path, q))
                if u.path == "/.well-known/openid-configuration":
                    self._send(200, idp.discovery())
                elif u.path == "/jwks":
                    self._send(200, idp.jwks())
                elif u.path in ("/authorize", "/logout"):
                    # (302, {"Location": ...}) or (status, error body)
                    status, out = (idp.authorize if u.path == "/authorize" else idp.logout)(q)
                    if status == 302:
                        self._send(302, None, out)
                    else:
                        self._send(status, out)
                elif u.path == "/userinfo":
                    self._send(*idp.userinfo(self.headers.get("Authorization")))
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):  # noqa: N802
                u = urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n).decode() if n else ""
                form = {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}
                with idp._lock:
                    idp.log.append((u.path, {k: v for k, v in form.items() if k != "client_secret"}))
                if u.path == "/token":
                    self._send(*idp.token(form, self.headers.get("Authorization")))
                else:
                    self._send(404, {"error": "not found"})

        return Handler
