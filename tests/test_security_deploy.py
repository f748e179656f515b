"""Static checks of the deployment files: per-client rate limits and a small body limit in
nginx (and the Kubernetes gateway example), no public cookie secret, images versioned and
third-party ones pinned by digest, TLS on."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"


# --------------------------------------------------------------------------- a small nginx parser
def _tokens(text: str):
    """nginx tokens: words (quotes kept together), ``{``, ``}``, ``;``; comments dropped."""
    tok, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c in "{};":
            tok.append(c)
            i += 1
        elif c in "\"'":
            j = text.index(c, i + 1)
            tok.append(text[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "{};":
                j += 1
            tok.append(text[i:j])
            i = j
    return tok


def parse_nginx(text: str) -> list:
    """[(name, args, children or None)] of a configuration file."""
    toks = _tokens(text)
    pos = 0

    def block():
        nonlocal pos
        out, words = [], []
        while pos < len(toks):
            t = toks[pos]
            pos += 1
            if t == ";":
                out.append((words[0], words[1:], None))
                words = []
            elif t == "{":
                out.append((words[0], words[1:], block()))
                words = []
            elif t == "}":
                assert not words, f"dangling {words}"
                return out
            else:
                words.append(t)
        assert not words, f"dangling {words}"
        return out

    return block()


def _find(dirs, name):
    return [d for d in dirs if d[0] == name]


def _size(v: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", v)
    assert m, v
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2).lower()]


@pytest.fixture(scope="module")
def nginx():
    return parse_nginx((DEPLOY / "nginx.conf").read_text())


def _maps(conf) -> dict[str, tuple[str, dict]]:
    """variable -> (source variable, {value: result}) of every ``map`` block."""
    return {d[1][1]: (d[1][0], {k[0]: (k[1][0] if k[1] else "") for k in d[2]}) for d in _find(conf, "map")}


def test_nginx_rate_limits_are_per_client_by_cookie(nginx):
    """Request and connection limits keyed by the sticky cookie (a class behind one NAT address is 50
    clients, not one), a per-address limit only for requests without a cookie, answered with 429."""
    maps = _maps(nginx)
    zones = {}
    for d in _find(nginx, "limit_req_zone") + _find(nginx, "limit_conn_zone"):
        key = d[1][0]
        zone = next(a for a in d[1] if a.startswith("zone=")).split("=", 1)[1].split(":")[0]
        zones[zone] = (d[0], key)
    server = _find(nginx, "server")[0][2]
    req = [d[1][0].split("=", 1)[1] for d in _find(server, "limit_req")]
    conn = [d[1][0] for d in _find(server, "limit_conn")]
    assert req and conn, "no limit_req / limit_conn in the server block"

    def by_cookie(var):
        src, table = maps.get(var, ("", {}))
        return src == "$cookie_st_replica" and table.get("default") == "$cookie_st_replica" and table.get("") == ""

    req_keys = [zones[z][1] for z in req]
    conn_keys = [zones[z][1] for z in conn]
    assert any(by_cookie(k) for k in req_keys), f"no request limit keyed by the cookie: {req_keys}"
    assert any(by_cookie(k) for k in conn_keys), f"no connection limit keyed by the cookie: {conn_keys}"
    # cookie-less requests: per address, and only those (an empty key is not counted)
    new = [k for k in req_keys if maps.get(k, ("", {}))[0] == "$cookie_st_replica" and not by_cookie(k)]
    assert new and maps[new[0]][1] == {"": "$binary_remote_addr", "default": ""}
    for d in _find(server, "limit_req"):
        if zones[d[1][0].split("=", 1)[1]][1] == "$binary_remote_addr":
            burst = int(next(a for a in d[1] if a.startswith("burst=")).split("=")[1])
            assert burst >= 50 * 40, "the per-address ceiling must let a class of 50 load the app at once"
    assert _find(server, "limit_req_status")[0][1] == ["429"]
    assert _find(server, "limit_conn_status")[0][1] == ["429"]


def test_nginx_takes_large_bodies_on_the_upload_route_only(nginx):
    from ui.teaching.params_file import MAX_IMPORT_BYTES

    server = _find(nginx, "server")[0][2]
    sizes = [_size(d[1][0]) for d in _find(server, "client_max_body_size")]
    assert sizes and max(sizes) <= 64 * 1024, f"client_max_body_size {sizes}"
    locs = {d[1][0]: d[2] for d in _find(server, "location")}
    upload = locs["/_stcore/upload_file/"]
    big = _size(_find(upload, "client_max_body_size")[0][1][0])
    assert MAX_IMPORT_BYTES < big <= MAX_IMPORT_BYTES + 100 * 1024, big
    assert _find(upload, "access_log")[0][1] == ["off"], "upload URLs hold the session id"
    assert [k for k, v in locs.items() if _find(v, "client_max_body_size")] == ["/_stcore/upload_file/"]


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx not installed (make scale-check installs it)")
def test_nginx_accepts_the_file(tmp_path):
    """``nginx -t`` on the deploy file (replica names pointed at loopback, as scale_check does)."""
    site = (DEPLOY / "nginx.conf").read_text()
    site = re.sub(r"server app(\d):8501", lambda m: f"server 127.0.0.1:{18500 + int(m.group(1))}", site)
    site = site.replace("listen 80;", "listen 127.0.0.1:18599;")
    (tmp_path / "site.conf").write_text(site)
    main = (
        f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{ access_log off; client_body_temp_path {tmp_path}; proxy_temp_path {tmp_path};\n"
        f"fastcgi_temp_path {tmp_path}; uwsgi_temp_path {tmp_path}; scgi_temp_path {tmp_path};\n"
        f"include {tmp_path}/site.conf; }}\n"
    )
    (tmp_path / "nginx.conf").write_text(main)
    r = subprocess.run(
        [shutil.which("nginx"), "-t", "-q", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- compose and k8s
def _yaml_lines(path) -> list[str]:
    """Lines without comments (a '#' after whitespace or at the start), blank lines dropped."""
    out = []
    for ln in path.read_text().splitlines():
        ln = re.sub(r"(^|\s)#.*$", "", ln).rstrip()
        if ln.strip():
            out.append(ln)
    return out


def _images(path) -> list[str]:
    return [ln.split("image:", 1)[1].strip().strip("\"'") for ln in _yaml_lines(path) if "image:" in ln]


def _versioned(image: str) -> bool:
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag not in ("", "latest") and not tag.startswith("$")


def test_compose_refuses_to_start_without_a_cookie_secret():
    lines = _yaml_lines(DEPLOY / "docker-compose.yml")
    secret = [ln for ln in lines if "STREAMLIT_SERVER_COOKIE_SECRET" in ln]
    assert secret, "the replicas need one shared cookie secret"
    for ln in secret:
        value = ln.split(":", 1)[1]
        assert re.search(r"\$\{STREAMLIT_COOKIE_SECRET:\?[^}]+\}", value), f"no ${{VAR:?message}}: {ln}"
        assert ":-" not in value and "change-me" not in value, f"a public fallback secret: {ln}"


def test_images_are_versioned():
    for path in (DEPLOY / "docker-compose.yml", DEPLOY / "k8s" / "deployment.yaml"):
        imgs = _images(path)
        assert imgs, path
        for img in imgs:
            img = re.sub(r"\$\{TAG:-([^}]+)\}", r"\1", img)  # compose: a versioned default tag
            assert _versioned(img), f"{path.name}: image {img!r} is not a versioned tag or digest"


def test_k8s_requires_the_cookie_secret():
    text = "\n".join(_yaml_lines(DEPLOY / "k8s" / "deployment.yaml"))
    block = text[text.index("STREAMLIT_SERVER_COOKIE_SECRET") :]
    assert re.search(r"optional:\s*false", block[:400]), "the pods must not start without the shared secret"


def _k8s_docs(name: str) -> dict[tuple[str, str], str]:
    """``(kind, metadata.name) -> the object's text without comments`` of a multi-object file."""
    out = {}
    for doc in "\n".join(_yaml_lines(DEPLOY / "k8s" / name)).split("\n---"):
        kind = re.search(r"^kind: (\S+)", doc, re.M)
        meta = re.search(r"^metadata:\n  name: (\S+)", doc, re.M)
        if kind and meta:
            out[(kind.group(1), meta.group(1))] = doc
    return out


def _ki(v: str) -> int:
    m = re.fullmatch(r"(\d+)(Ki|Mi)?", v)
    assert m, v
    return int(m.group(1)) * {None: 1, "Ki": 1024, "Mi": 1024**2}[m.group(2)]


def test_gateway_ships_tls_stickiness_rate_limits_and_small_bodies():
    """deploy/k8s/gateway.yaml (Gateway API + Envoy Gateway policies; ingress-nginx is no longer
    maintained): HTTPS with a documented certificate Secret, HTTP only redirected, one browser on one
    pod (cookie session persistence on every route that reaches the pods), no request timeout on the
    websocket route, a client's X-Real-IP removed (the pods believe it first), per-browser and
    per-address rate limits, and a body limit of about 1 MB on the upload route only."""
    docs = _k8s_docs("gateway.yaml")
    raw = (DEPLOY / "k8s" / "gateway.yaml").read_text()
    gw = docs[("Gateway", "tokens-on-the-sphere")]
    https = gw[gw.index("- name: https") : gw.index("- name: http\n")]
    assert "protocol: HTTPS" in https and "mode: Terminate" in https
    secret = re.search(r"certificateRefs:\n\s+- kind: Secret\n\s+name: (\S+)", https)
    assert secret and f"kubectl create secret tls {secret.group(1)}" in raw, "document how to create the TLS secret"
    redirect = docs[("HTTPRoute", "tokens-on-the-sphere-redirect")]
    assert "sectionName: http\n" in redirect + "\n" and "scheme: https" in redirect and "backendRefs" not in redirect
    app = docs[("HTTPRoute", "tokens-on-the-sphere")]
    upload = docs[("HTTPRoute", "tokens-on-the-sphere-upload")]
    for route in (app, upload):
        assert "sectionName: https" in route
        assert re.search(r"sessionPersistence:\n\s+sessionName: st_replica\n\s+type: Cookie", route), route
        assert re.search(r"remove: \[X-Real-IP\]", route), "a client could claim any address"
    assert re.search(r"timeouts:\n\s+request: 0s", app), "the lesson's websocket must not be cut"
    assert re.findall(r"value: (/\S*)", upload) == ["/_stcore/upload_file/"]
    limits = docs[("BackendTrafficPolicy", "tokens-on-the-sphere")]
    assert "name: tokens-on-the-sphere\n" in limits and "kind: HTTPRoute" in limits
    assert re.search(r"- name: cookie\n\s+type: Distinct", limits), "per-browser limit"
    assert re.search(r"sourceCIDR:\n\s+type: Distinct", limits), "per-address ceiling"
    assert "requestBuffer" not in limits, "request buffering breaks the websocket route"
    up = docs[("BackendTrafficPolicy", "tokens-on-the-sphere-upload")]
    body = re.search(r"requestBuffer:\n\s+limit: (\S+)", up)
    assert body and 1024**2 < _ki(body.group(1)) <= 1024**2 + 100 * 1024, body
    pol = "\n".join(_yaml_lines(DEPLOY / "k8s" / "networkpolicy.yaml"))
    ns = re.search(r"kubernetes.io/metadata.name: (\S+)", pol)
    assert ns and ns.group(1) in raw + (DEPLOY / "k8s" / "networkpolicy.yaml").read_text()


def test_deploy_images_are_pinned_by_digest():
    """Third-party images (nginx, Redis) are pinned by digest as well as a full version, so every
    replica and every school runs the very image that was checked (the app's own image is built
    here and carries a versioned tag)."""
    for path in (DEPLOY / "docker-compose.yml", DEPLOY / "k8s" / "redis.yaml"):
        for img in _images(path):
            if img.startswith(("tokens-on-the-sphere", "registry.example.org/tokens-on-the-sphere")):
                continue
            assert re.fullmatch(r"[\w./-]+:\d+\.\d+\.\d+[\w.-]*@sha256:[0-9a-f]{64}", img), f"{path.name}: {img}"


def _env_value(lines: list[str], name: str) -> str:
    """The value of an environment variable in a compose or k8s file (the first one)."""
    for i, ln in enumerate(lines):
        if re.match(rf"\s*{name}:", ln):  # compose: NAME: value
            return ln.split(":", 1)[1].strip().strip("\"'")
        if re.match(rf"\s*- name: {name}\s*$", ln):  # k8s: - name / value
            return lines[i + 1].split("value:", 1)[1].strip().strip("\"'")
    raise AssertionError(f"{name} is not set")


def _defaults(value: str) -> str:
    return re.sub(r"\$\{\w+:-([^}]+)\}", r"\1", value)


def test_compose_trusts_the_forwarded_address_of_its_nginx_only():
    import ipaddress

    lines = _yaml_lines(DEPLOY / "docker-compose.yml")
    trusted = _defaults(_env_value(lines, "APP_TRUSTED_PROXIES"))
    nginx_at = [_defaults(ln.split("ipv4_address:", 1)[1].strip()) for ln in lines if "ipv4_address:" in ln]
    subnet = [_defaults(ln.split("subnet:", 1)[1].strip()) for ln in lines if "subnet:" in ln]
    assert nginx_at == [trusted], (nginx_at, trusted)  # exactly nginx's own address
    assert ipaddress.ip_address(trusted) in ipaddress.ip_network(subnet[0])
    from ui.server import budgets

    env = {budgets.TRUSTED_ENV: trusted}
    assert budgets._trusted(trusted, env)
    last = int(trusted.rsplit(".", 1)[1])
    neighbour = trusted.rsplit(".", 1)[0] + f".{last * 10 % 250 + 1}"  # another container of the network
    assert not budgets._trusted(neighbour, env)


def test_k8s_trusts_the_pod_network_and_only_the_controller_reaches_the_pods():
    import ipaddress

    lines = _yaml_lines(DEPLOY / "k8s" / "deployment.yaml")
    nets = [ipaddress.ip_network(e) for e in _env_value(lines, "APP_TRUSTED_PROXIES").split(",")]
    assert nets and not any(n.is_global for n in nets)  # never a public address
    assert any(ipaddress.ip_address("10.244.1.7") in n for n in nets)  # a common pod network
    pol = "\n".join(_yaml_lines(DEPLOY / "k8s" / "networkpolicy.yaml"))
    assert "kind: NetworkPolicy" in pol and "app.kubernetes.io/name: tokens-on-the-sphere" in pol
    assert re.search(r"policyTypes: \[Ingress\]", pol) and "namespaceSelector" in pol
    assert re.search(r"port: 8501", pol)
