"""A page keeps its settings when a student leaves it and comes back within a session (the glossary,
another page, the class console), and a URL that names a parameter wins over them (a pushed view,
the console's link to it, a share link)."""

from __future__ import annotations

from harness.apptest import open_page
from tests._instructor import router_only, teacher_with_class  # noqa: F401 - fixture
from tests.conftest import app_test


def _slider(at, name):
    return next(s for s in at.slider if s.key == name)


def test_settings_survive_leaving_the_page_and_coming_back():
    at = app_test("two_point", {"lang": "en"})
    _slider(at, "beta").set_value(2.5).run()
    assert at.query_params["beta"] in ("2.5", ["2.5"])
    open_page(at, "glossary")
    at.query_params.clear()
    at.query_params["lang"] = "en"
    at.run()
    assert not at.exception
    open_page(at, "two_point")  # back by the sidebar: no parameter in the address
    at.query_params.clear()
    at.query_params["lang"] = "en"
    at.run()
    assert not at.exception
    assert _slider(at, "beta").value == 2.5
    assert at.query_params["beta"] in ("2.5", ["2.5"])


def test_an_address_that_names_a_parameter_wins_over_the_remembered_one():
    """What the console's "open the pushed page" does: the page, then the pushed view's parameters
    in its address; the page must show them, not what this session last had there."""
    at = app_test("hemisphere", {"lang": "en"})
    beta = _slider(at, "beta")
    first = beta.value
    other = beta.max if first != beta.max else beta.min
    open_page(at, "two_point")
    at.query_params.clear()
    at.query_params["lang"] = "en"
    at.run()
    open_page(at, "hemisphere")
    at.query_params.clear()
    at.query_params.update({"lang": "en", "beta": str(other)})
    at.run()
    assert not at.exception
    assert _slider(at, "beta").value == other
    # and the other parameters of the page as this session left them (here: the defaults)


def test_reset_forgets_the_remembered_settings():
    at = app_test("two_point", {"lang": "en"})
    default = _slider(at, "beta").value
    _slider(at, "beta").set_value(2.5).run()
    next(b for b in at.button if b.key == "_reset").click().run()
    assert _slider(at, "beta").value == default


def test_the_consoles_link_opens_the_pushed_view(monkeypatch, router_only):  # noqa: F811
    """The console's "open the pushed page" opens exactly the pushed view, whatever this session last
    had on that page (a question asked there pushes the page's values: they must be the pushed ones)."""
    from tests.conftest import open_page as open_
    from ui.teaching import class_store as cs
    from ui.teaching import console

    teacher, code = teacher_with_class(monkeypatch)  # on two_point
    _slider(teacher, "beta").set_value(2.5).run()
    teacher.button(key="_class_push").click().run()  # the class is sent beta = 2.5
    assert cs.get_store().current(code)[1]["query"]["beta"] == "2.5"
    _slider(teacher, "beta").set_value(1.5).run()  # the teacher moves on, unpushed
    open_(teacher, console.CONSOLE_PATH)
    teacher.run()
    teacher.button(key="_console_go").click().run()  # AppTest follows st.switch_page
    assert not teacher.exception
    assert _slider(teacher, "beta").value == 2.5


def test_own_choice_question_typed_with_full_width_commas(monkeypatch, router_only):  # noqa: F811
    """A Chinese teacher types the choices with an input method's full-width commas: the question can be
    asked, with three choices; one choice alone is explained, not silently refused."""
    from ui.teaching import class_store as cs

    teacher, code = teacher_with_class(monkeypatch)
    teacher.selectbox(key="_class_qn").set_value("_adhoc").run()
    teacher.text_input(key="_class_prompt").set_value("会怎样？").run()
    teacher.selectbox(key="_class_kind").set_value("choice").run()
    teacher.text_input(key="_class_opts").set_value("更快").run()
    assert teacher.button(key="_class_ask").disabled
    assert any("至少" in c.value or "at least" in c.value for c in teacher.caption)
    teacher.text_input(key="_class_opts").set_value("更快，更慢，差不多").run()
    assert not teacher.button(key="_class_ask").disabled
    teacher.button(key="_class_ask").click().run()
    assert cs.get_store().question(code)["options"] == ["更快", "更慢", "差不多"]
