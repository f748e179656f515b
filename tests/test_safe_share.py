"""The share link and its QR code: a configured public URL, or else the address the browser used
(its Host header, on any host a school puts the app: a domain name, an address the server does not
list); the page's name is the only part taken from the URL the client reports; a Host that is no
host gives no link; never longer than ``MAX_SHARE_URL``."""

from __future__ import annotations

from ui.kit import share


def test_the_address_the_browser_used_on_any_host():
    """A hosted server reached by its domain name, and a LAN address the server does not list."""
    assert (
        share.share_base("http://sphere.school.example/two_point", "sphere.school.example")
        == "http://sphere.school.example/two_point"
    )
    assert share.share_base("http://127.0.0.2:8501/two_point", "127.0.0.2:8501") == "http://127.0.0.2:8501/two_point"
    assert share.share_base("http://x/hemisphere", "[fd00::5]:8501", "https") == "https://[fd00::5]:8501/hemisphere"
    assert share.share_base("https://a.example/two_point", "a.example", "https, http") == "https://a.example/two_point"


def test_reported_address_gives_only_the_page():
    assert share.share_base("http://evil.example/two_point", "localhost:8501") == "http://localhost:8501/two_point"


def test_base_url_path_is_kept(monkeypatch):
    import streamlit as st

    monkeypatch.setattr(st, "get_option", lambda k: "/sphere/" if k == "server.baseUrlPath" else None)
    assert share.share_base("http://h/sphere/two_point", "h.example") == "http://h.example/sphere/two_point"
    monkeypatch.setattr(st, "get_option", lambda k: "<x>" if k == "server.baseUrlPath" else None)
    assert share.share_base("http://h/two_point", "h.example") == "http://h.example/two_point"


def test_public_url_wins():
    env = {share.PUBLIC_URL_ENV: "https://sphere.example.org/"}
    assert (
        share.share_base("http://evil.example/two_point", "evil", environ=env) == "https://sphere.example.org/two_point"
    )


def test_huge_or_odd_addresses_are_cut_or_refused():
    huge = "http://x/" + "a" * 5_000_000
    assert share.share_base(huge, "localhost:8501") == "http://localhost:8501/"
    assert share.share_base("http://x/two_point", "x" * 5_000_000) == ""
    assert share.share_base("http://x/two_point", "user@localhost") == ""
    assert share.share_base("http://x/two_point", "a.example/evil?x=") == ""
    assert share.share_base("http://x/two_point", "") == "" and share.share_base("http://x/two_point", None) == ""
    assert share.share_base("http://x/<script>", "localhost") == "http://localhost/"
    assert share.share_base("http://x/two_point", "localhost", "https").startswith("https://")


def test_share_url_is_length_capped(monkeypatch):
    monkeypatch.setattr(share, "share_base", lambda *a, **k: "http://localhost/two_point")
    assert len(share.share_url({"v": "x" * 10_000})) <= share.MAX_SHARE_URL


def test_the_join_qr_on_loopback_encodes_the_classroom_address(monkeypatch):
    """A teacher browsing by localhost: the join QR code carries the classroom network's address
    (phones cannot open 127.0.0.1); any other address stays as the browser used it."""
    from ui.teaching import live

    monkeypatch.setattr(share, "_lan_cached", lambda: ("192.168.1.20",))
    assert live.for_phones("http://127.0.0.1:8501/?class=ABC123") == "http://192.168.1.20:8501/?class=ABC123"
    assert live.for_phones("http://localhost:8501/?class=ABC123") == "http://192.168.1.20:8501/?class=ABC123"
    assert live.for_phones("https://sphere.school.example/?class=A") == "https://sphere.school.example/?class=A"
    monkeypatch.setattr(share, "_lan_cached", lambda: ())
    assert live.for_phones("http://127.0.0.1:8501/?class=A") == "http://127.0.0.1:8501/?class=A"  # no network
