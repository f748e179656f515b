"""Hostile user text is shown literally: URL values on every page, parameter-file keys,
values and file names. Nothing a visitor or a file puts into a link can become a live link, HTML,
LaTeX or emphasis inside the app's own notices, and no server path is shown."""

from __future__ import annotations

import pytest

from tests.conftest import STEMS, app_test, page_schema
from ui.kit.safe import literal, visible

MARK = "ZQ%"  # in every payload: where it is rendered, it must sit inside a code span
PAYLOADS = (
    f"x` [{MARK} log in again](https://evil.example/login)",
    f"<script>alert('{MARK}')</script><img src=x onerror=alert(1)>",
    f"$$\\int_0^1 {MARK}\\,dx$$ $x$",
    f"``{MARK}``` [a](https://evil.example) `",
    f"{MARK}\n\n# Heading\n- [y](https://evil.example)\u202e",
    f"**{MARK}** _b_ :red[c] :material/home: www.evil.example https://evil.example",
    MARK + "A" * 10_000,  # a 10 kB value
)


# --------------------------------------------------------------------------- a CommonMark code-span reader
def _outside_code_spans(line: str) -> str:
    """``line`` with its inline code spans removed, by CommonMark's rules (a backtick string opens a
    span closed by the next backtick string of the same length; a backslash-escaped backtick opens
    nothing). Spans are read within one line only: stricter than CommonMark, which lets a span
    continue over a soft line break."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n:
            out.append(line[i : i + 2])
            i += 2
            continue
        if c != "`":
            out.append(c)
            i += 1
            continue
        j = i
        while j < n and line[j] == "`":
            j += 1
        k, m, close = j - i, j, -1
        while m < n:
            if line[m] != "`":
                m += 1
                continue
            e = m
            while e < n and line[e] == "`":
                e += 1
            if e - m == k:
                close = m
                break
            m = e
        if close < 0:
            out.append(line[i:j])
            i = j
        else:
            out.append(" ")
            i = close + k
    return "".join(out)


def live_text(md: str) -> str:
    """What Markdown would interpret in ``md``: everything outside its code spans."""
    return "\n".join(_outside_code_spans(ln) for ln in md.split("\n"))


def _code_span_content(md: str) -> str:
    fence = len(md) - len(md.lstrip("`"))
    inner = md[fence:-fence]
    if len(inner) >= 2 and inner[0] == inner[-1] == " " and inner.strip(" "):
        inner = inner[1:-1]
    return inner


# --------------------------------------------------------------------------- the helper itself
@pytest.mark.parametrize("value", [*PAYLOADS, "", " ", "`", "a`b", "``", " ` ", "plain", 3.5])
def test_literal_is_one_inert_code_span(value):
    md = literal(value, 60)
    assert "\n" not in md
    assert live_text(md).strip() == "", md  # nothing outside the span
    assert _code_span_content(md) == visible(value, 60) or value in ("", " ")
    assert len(md) <= 60 + 2 * 8 + 2


def test_visible_escapes_and_cuts():
    assert visible("a\nb\t\u202ec") == "a\\nb\\t\\u202ec"
    assert visible("x" * 10_000, 40) == "x" * 39 + "…"
    assert visible("short", 40) == "short"


# --------------------------------------------------------------------------- every page, hostile URLs
def _strings(msg, path=""):
    """Every (field path, string) of a protobuf message, recursively."""
    for f, v in msg.ListFields():
        items = v if isinstance(v, (list, tuple)) or type(v).__name__.startswith("Repeated") else [v]
        for x in items:
            if isinstance(x, str):
                yield f"{path}{f.name}", x
            elif hasattr(x, "ListFields"):
                yield from _strings(x, f"{path}{f.name}.")


def _elements(node):
    if getattr(node, "proto", None) is not None and not hasattr(node, "children"):
        yield node
    for c in getattr(node, "children", {}).values():
        yield from _elements(c)


#: element fields Streamlit shows as plain text (never Markdown)
LITERAL_FIELDS = {
    ("Code", "code_text"),
    ("Text", "body"),
    ("Selectbox", "options"),
    ("Selectbox", "raw_value"),
    ("Selectbox", "value"),
}


def _check_rendered(at, forbidden: tuple[str, ...] = ()) -> list[str]:
    """Assert no user text is live anywhere in the app; return the markdown strings that show it."""
    shown = []
    for el in _elements(at._tree):
        kind = type(el.proto).__name__  # Markdown, Alert, Heading, Code, Selectbox, ...
        for field, s in _strings(el.proto):
            for bad in forbidden:
                assert bad not in s, f"{kind}.{field} shows {bad!r}: {s[:300]!r}"
            if MARK not in s:
                continue
            assert len(s) < 2_000, f"{kind}.{field}: {len(s)} characters of user text echoed"
            if (kind, field.split(".")[-1]) in LITERAL_FIELDS:
                continue
            live = live_text(s)
            assert MARK not in live, f"user text is live Markdown in {kind}.{field}: {s[:400]!r}"
            for frag in ("https://evil", "<script", "\\int", "](", "onerror"):
                assert frag not in live or frag not in s.split(MARK, 1)[-1], (kind, field, s[:400])
            shown.append(s)
    return shown


def _hostile_query(stem: str, shift: int) -> dict:
    schema = page_schema(stem)
    q = {"lang": PAYLOADS[shift % len(PAYLOADS)], "preset": PAYLOADS[(shift + 1) % len(PAYLOADS)]}
    for i, p in enumerate(schema.params):
        q[p.name] = PAYLOADS[(shift + 2 + i) % len(PAYLOADS)]
    q[PAYLOADS[0]] = PAYLOADS[1]  # a hostile key, too
    return q


@pytest.mark.parametrize("stem", STEMS)
def test_hostile_url_values_are_shown_literally(stem):
    """Backticks, links, HTML, LaTeX, directives, line breaks and 10 kB values in the URL of every
    page: the notices show them inside code spans only (on main a backtick closed the notice's code
    span and a Markdown link became a working link in the warning box)."""
    shift = STEMS.index(stem)
    at = app_test(stem, _hostile_query(stem, shift))
    assert not at.exception, [e.message for e in at.exception]
    shown = _check_rendered(at)
    alerts = [a.proto.body for a in at.warning] + [a.proto.body for a in at.error]
    assert any(MARK in a for a in alerts), "no notice echoed the link's values (test is vacuous)"
    assert all(a in shown for a in alerts if MARK in a)


HOSTILE_FILE = r"""
["x` [ZQ%](https://evil.example)"]
a = 1

[two_point.params."<script>ZQ%</script>"]
min = 1

[two_point.params.beta]
min = '$$\int ZQ%$$'
max = "x` [ZQ% log in](https://evil.example)"

[two_point.presets."``ZQ%``` [a](https://evil.example)"]
title = "[ZQ% log in](https://evil.example)"
values = { beta = 1.0 }

[two_point.presets.ok]
title = '<b>ZQ%</b> [log in](https://evil.example) $$\int$$'
values = { beta = 1.0 }

[two_point.presets.bad]
title = "t"
values = { "ZQ%` [x](https://evil.example)" = 1.0 }
"""


def test_hostile_parameter_file_is_shown_literally(tmp_path, monkeypatch):
    """Key names, values and preset titles from an instructor file: the page's error box shows each
    problem literally, with the file's name and never the server's directory."""
    f = tmp_path / "class-params.toml"
    f.write_text(HOSTILE_FILE, encoding="utf-8")
    monkeypatch.setenv("APP_PARAMS_FILE", str(f))
    at = app_test("two_point", {"lang": "en"})
    assert not at.exception, [e.message for e in at.exception]
    shown = _check_rendered(at, forbidden=(str(tmp_path),))
    errors = [e.proto.body for e in at.error]
    assert errors and any(MARK in e for e in errors), errors
    assert any(f.name in e for e in errors), errors
    assert all(e in shown for e in errors if MARK in e)


def test_unreadable_parameter_file_shows_the_name_only(tmp_path, monkeypatch):
    f = tmp_path / "secret-dir" / "missing.toml"
    monkeypatch.setenv("APP_PARAMS_FILE", str(f))
    at = app_test("home", {"lang": "en"})
    _check_rendered(at, forbidden=(str(tmp_path),))
    bad = tmp_path / "broken.toml"
    bad.write_bytes(b"\xff\xfe [x\n")
    monkeypatch.setenv("APP_PARAMS_FILE", str(bad))
    at = app_test("home", {"lang": "en"})
    _check_rendered(at, forbidden=(str(tmp_path),))
