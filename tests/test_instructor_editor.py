"""The instructor's parameter editor: refuses invalid entries, saves
atomically keeping comments, backup + undo, detects a file edited meanwhile."""

from __future__ import annotations

import difflib
import re
import pytest

from tests._instructor import (
    comments as _comments,
    params_copy,  # noqa: F401 - a fixture
    router_only,  # noqa: F401 - a fixture
    signed_in,
    two_point_beta as _beta,
)
from ui.teaching import editor
from ui.teaching import params_file as pf
from ui.kit.spec import resolve
from pages.two_point.page import SCHEMA as TWO_POINT


@pytest.fixture(autouse=True)
def setup_env(params_copy):  # noqa: F811
    return params_copy


def test_invalid_entries_refused_next_to_the_field(setup_env):
    before = setup_env.read_bytes()
    at = signed_in(editor.URL_PATH)
    assert [t.value for t in at.title] == ["Parameter editor"]
    at.number_input(key="ed:two_point:beta:min").set_value(5.0).run()  # above the default 1.0
    msgs = "\n".join(c.value for c in at.code)
    assert "need min <= default <= max" in msgs
    assert at.button(key="_ed_save").disabled
    at.number_input(key="ed:two_point:beta:min").set_value(0.1)
    at.number_input(key="ed:two_point:beta:max").set_value(1000.0).run()  # above the hard limit
    assert "above the hard limit" in "\n".join(c.value for c in at.code)
    assert at.button(key="_ed_save").disabled
    # a forged click on the disabled button writes nothing
    at.button(key="_ed_save").proto.disabled = False
    at.button(key="_ed_save").click().run()
    assert setup_env.read_bytes() == before
    # an invalid preset value is refused too
    at.number_input(key="ed:two_point:beta:max").set_value(10.0).run()
    assert not at.button(key="_ed_save").disabled
    # the first preset's row (its uid counts up across the process: not always 0)
    first = next(t.key for t in at.text_input if t.key and t.key.startswith("edp:two_point:")).rsplit(":", 1)[0]
    at.text_input(key=f"{first}:values").input("beta = 99.0, theta0 = 1.0").run()
    assert "beta=99.0 outside [0.1, 10.0]" in "\n".join(c.value for c in at.code)
    assert at.button(key="_ed_save").disabled
    at.text_input(key=f"{first}:id").input("bad id!").run()
    assert "letters, digits and _" in "\n".join(c.value for c in at.code)
    assert setup_env.read_bytes() == before


def test_save_keeps_comments_backup_and_undo(setup_env):
    original = setup_env.read_text()
    at = signed_in(editor.URL_PATH)
    at.number_input(key="ed:two_point:beta:default").set_value(2.5)
    at.number_input(key="ed:two_point:beta:max").set_value(8.0).run()
    at.button(key="_ed_save").click().run()
    assert not at.exception
    saved = setup_env.read_text()
    assert _beta(setup_env) == {"max": 8.0, "default": 2.5}  # the file holds only what it overrides
    assert _comments(saved) == _comments(original) and len(_comments(saved)) > 10
    # only the two edited values were added, at the end of the page's section
    added = list(difflib.ndiff(original.splitlines(), saved.splitlines()))
    assert [d[2:] for d in added if d.startswith("+ ")] == ["", "[two_point.params.beta]", "max = 8.0", "default = 2.5"]
    assert not [d for d in added if d.startswith("- ")]
    assert saved.index("[two_point.params.beta]") < saved.index("Hemisphere clustering")
    assert pf.backup_path(setup_env).read_text() == original
    assert any("Saved" in s.value for s in at.success)
    # the pages see it on their next run
    assert resolve(TWO_POINT).params["beta"].default == 2.5
    # the editor now shows the saved values, and undo puts the old file back byte for byte
    assert at.number_input(key="ed:two_point:beta:default").value == 2.5
    at.button(key="_ed_undo").click().run()
    assert setup_env.read_text() == original
    assert at.number_input(key="ed:two_point:beta:default").value == 1.0
    # a second undo redoes
    at.button(key="_ed_undo").click().run()
    assert setup_env.read_text() == saved


def test_file_edited_by_hand_meanwhile_is_not_overwritten(setup_env):
    at = signed_in(editor.URL_PATH)
    hand = setup_env.read_text().replace(
        "# Instructor parameter file", "# Edited by hand.\n# Instructor parameter file"
    )
    setup_env.write_text(hand)
    at.number_input(key="ed:two_point:beta:default").set_value(3.0).run()
    assert any("has changed since you opened" in w.value for w in at.warning)
    at.button(key="_ed_save").click().run()
    assert any("changed on disk" in e.value for e in at.error)
    assert setup_env.read_text() == hand
    assert not pf.backup_path(setup_env).exists()
    # reload, edit again, save: now it goes through, on top of the hand edit
    at.button(key="_ed_reload").click().run()
    at.number_input(key="ed:two_point:beta:default").set_value(3.0).run()
    at.button(key="_ed_save").click().run()
    assert _beta(setup_env)["default"] == 3.0 and "# Edited by hand." in setup_env.read_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_problems_explained_in_the_instructors_language(lang):
    """Each numeric problem the file reports gets a sentence in the editor's language (with the
    numbers), the file's own message is still shown literally below it."""
    from ui.kit.i18n import Text
    from ui.kit.spec import _check_numeric

    t = Text("instructor", lang)
    p = TWO_POINT.param("beta")
    cases = {  # fields -> a number the sentence must quote
        (6.0, 5.0, 1.0, 0.1): "6.0",  # min > max
        (0.1, 10.0, 50.0, 0.1): "50.0",  # default outside
        (0.001, 10.0, 1.0, 0.1): "0.001",  # below the hard limit
        (0.1, 99.0, 1.0, 0.1): "99.0",  # above the hard limit
        (0.1, 10.0, 1.0, 0.0): "0.0",  # step <= 0
        (0.1, 10.0, 1.0, 20.0): "20.0",  # step larger than the range
    }
    for (lo, hi, d, s), num in cases.items():
        msgs = _check_numeric("float", {"min": lo, "max": hi, "default": d, "step": s, "lo": p.lo, "hi": p.hi})
        assert msgs, (lo, hi, d, s)
        why = editor.explain(msgs, t)
        assert len(why) == len(msgs) and all(num in w for w in why[:1]), (msgs, why)
        if lang == "zh":
            assert all(any("\u4e00" <= c <= "\u9fff" for c in w) for w in why), why
    assert editor.explain(["min is missing"], t) == [t("editor.why.missing", field=t("editor.min"))]
    assert editor.explain(["something else: *bold* <b>"], t) == []  # unknown: only the literal message


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_parser_messages_said_in_the_instructors_language(lang):
    """Class trial, item 9: tomllib's English message ("Expected '=' after a key ... (at line 1, column 3)")
    is said in the editor's language, where and what (before: only the parser's English)."""
    from ui.kit.i18n import Text

    t = Text("instructor", lang)
    for text, where, what in (
        ("a b", t("editor.toml.at", line=1, column=3), "equals"),
        ('a = "x', t("editor.toml.at_end"), "string"),
        ("[a]\n[a]", t("editor.toml.at", line=2, column=3), "twice"),
        ("a = 1 2", t("editor.toml.at", line=1, column=7), "newline"),
    ):
        (msg,) = pf.validate_text(text, source="params.toml")
        said = editor._toml_problem(msg, t)
        assert said == t("editor.toml.sentence", where=where, what=t(f"editor.toml.{what}")), (msg, said)
        assert ("TOML" in said) and (lang == "en" or not re.search(r"[A-Za-z]{4,}", said.replace("TOML", "")))
    assert editor._toml_problem("params.toml: [x] min 2 > max 1", t) is None
