"""The share link and its QR code come from the server's own idea of its address: a configured
public URL, or the Host header when it is one the server serves; never the address the client
reports, and never longer than ``MAX_SHARE_URL``."""
from __future__ import annotations

from ui.kit import share


def test_reported_address_is_not_used():
    assert share.share_base("http://evil.example/two_point", "evil.example") == ""
    assert share.share_base("http://evil.example/two_point", "localhost:8501") == "http://localhost:8501/two_point"


def test_public_url_wins():
    env = {share.PUBLIC_URL_ENV: "https://sphere.example.org/"}
    assert share.share_base("http://evil.example/two_point", "evil", environ=env) == \
        "https://sphere.example.org/two_point"


def test_huge_or_odd_addresses_are_cut_or_refused():
    huge = "http://x/" + "a" * 5_000_000
    assert share.share_base(huge, "localhost:8501") == "http://localhost:8501/"
    assert share.share_base("http://x/two_point", "x" * 5_000_000) == ""
    assert share.share_base("http://x/two_point", "user@localhost") == ""
    assert share.share_base("http://x/<script>", "localhost") == "http://localhost/"
    assert share.share_base("http://x/two_point", "localhost", "https").startswith("https://")


def test_share_url_is_length_capped(monkeypatch):
    monkeypatch.setattr(share, "share_base", lambda *a, **k: "http://localhost/two_point")
    assert len(share.share_url({"v": "x" * 10_000})) <= share.MAX_SHARE_URL
