"""No text key reaches the page in place of its text: a label, a caption, a heading or a notice that
reads like ``ui.share`` or ``params.beta.label`` is a key whose text is missing (Text returns the
key itself then), or a key renamed by mistake in the code."""

import re

import pytest

from tests.conftest import app_test

#: a dotted text key: two or more lower-case words joined by dots, nothing else
KEY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


def _texts(at) -> list[str]:
    out = []
    for kind in (
        "expander",
        "button",
        "toggle",
        "slider",
        "select_slider",
        "selectbox",
        "radio",
        "number_input",
        "text_input",
        "checkbox",
        "tabs",
    ):
        for el in getattr(at, kind, []):
            label = getattr(el, "label", None)
            out.append(str(label) if label is not None else "")
    for kind in ("markdown", "caption", "header", "subheader", "title", "warning", "info", "error", "success"):
        out += [str(getattr(el, "value", "")) for el in getattr(at, kind, [])]
    return out


@pytest.mark.parametrize(
    "stem,lang", [("home", "en"), ("two_point", "zh"), ("hemisphere", "en"), ("depth_sum", "zh"), ("glossary", "en")]
)
def test_no_text_key_shown_as_text(stem, lang):
    at = app_test(stem, {"lang": lang})
    assert not at.exception
    raw = sorted({t for t in _texts(at) if KEY.match(t.strip())})
    assert raw == [], f"{stem} ({lang}) shows text keys instead of their text: {raw}"


def test_the_checker_sees_a_raw_key():
    assert KEY.match("ui.share") and KEY.match("params.beta.label")
    assert not KEY.match("Share this view") and not KEY.match("β = 1.5") and not KEY.match("0.5")
