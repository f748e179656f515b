"""The instructor's parameter editor, second part: only instructors reach it, presets (add, rename,
reorder, delete, save the current view), import validation and export."""

from __future__ import annotations

import tomllib

import pytest

from tests._instructor import (
    params_copy,  # noqa: F401 - a fixture
    router_only,  # noqa: F401 - a fixture
    signed_in,
)
from tests.conftest import app_test, open_page
from ui.teaching import editor
from ui.teaching import params_file as pf
from ui.kit.spec import resolve
from pages.two_point.page import SCHEMA as TWO_POINT


@pytest.fixture(autouse=True)
def setup_env(params_copy):  # noqa: F811
    return params_copy


def test_students_never_reach_the_editor(setup_env):
    at = app_test("home")
    urls = [info.get("url_pathname") for info in at._registered_pages.values()]
    assert editor.URL_PATH not in urls
    # a student who opens the editor's URL: Streamlit resolves it like a browser would -> home page
    with pytest.raises(ValueError):
        open_page(at, editor.URL_PATH)
    teacher = signed_in("home")  # the hash a browser would send for /instructor_params
    hashes = [h for h, info in teacher._registered_pages.items() if info.get("url_pathname") == editor.URL_PATH]
    assert len(hashes) == 1
    at._page_hash = hashes[0]
    at.run()
    assert not at.exception
    assert not [t for t in at.title if t.value == "Parameter editor"]
    assert not [b for b in at.button if b.key == "_ed_save"]


def test_presets_add_rename_reorder_delete_and_current_view(setup_env):
    at = signed_in("two_point")
    at.slider(key="beta").set_value(2.0).run()
    open_page(at, editor.URL_PATH)
    at.run()
    ids = [p["id"] for p in pf.file_presets(tomllib.loads(setup_env.read_text()), "two_point")]
    assert ids == ["seed_figure", "hot", "cold_wide", "coarse_layers"]
    at.button(key="_ed_add_view").click().run()
    new = at.session_state["_ed_presets:two_point"][-1]
    k = f"edp:two_point:{new['uid']}"
    assert at.text_input(key=f"{k}:values").value.startswith("beta = 2.0, theta0 = 1.0")
    at.text_input(key=f"{k}:id").input("my_view")
    at.text_input(key=f"{k}:en").input("My view")
    at.checkbox(key=f"{k}:answers").check().run()
    uid_hot = at.session_state["_ed_presets:two_point"][1]["uid"]
    at.button(key=f"edp:two_point:{uid_hot}:up").click().run()  # hot first
    uid_cold = at.session_state["_ed_presets:two_point"][2]["uid"]
    at.button(key=f"edp:two_point:{uid_cold}:del").click().run()  # cold_wide gone
    uid_seed = at.session_state["_ed_presets:two_point"][1]["uid"]
    at.text_input(key=f"edp:two_point:{uid_seed}:id").input("essay").run()  # renamed
    assert not at.button(key="_ed_save").disabled
    at.button(key="_ed_save").click().run()
    assert not at.exception
    data = tomllib.loads(setup_env.read_text())
    assert list(data["two_point"]["presets"]) == ["hot", "essay", "coarse_layers", "my_view"]
    mv = data["two_point"]["presets"]["my_view"]
    assert mv["values"]["beta"] == 2.0 and mv["answers"] is True and mv["title"]["en"] == "My view"
    assert pf.validate_text(setup_env.read_text()) == []
    res = resolve(TWO_POINT)
    assert list(res.presets) == ["hot", "essay", "coarse_layers", "my_view"]
    # the banner comment of the next page's section is still in front of it
    text = setup_env.read_text()
    assert text.index("# ---") < text.index("[two_point.presets.hot]")
    assert text.index("Hemisphere clustering") < text.index("[hemisphere.presets.theorem]")
    assert text.index("[two_point.presets.my_view]") < text.index("Hemisphere clustering")


#: an override that the file may hold, and one above beta's hard limit (50)
GOOD = "\n[two_point.params.beta]\ndefault = 1.5\n"
BAD = "\n[two_point.params.beta]\nmax = 99.0\n"


def test_import_is_validated_and_export_is_the_file(setup_env):
    good = setup_env.read_text() + GOOD
    assert pf.validate_text(good) == []
    bad = setup_env.read_text() + BAD
    assert any("above the hard limit" in e for e in pf.validate_text(bad))
    # refused whole: the message does not say what a page does with a broken entry of the file in use
    assert not any("built-in range" in e for e in pf.validate_text(bad))
    assert pf.validate_text("this is = = not toml")[0].startswith("file: not valid TOML")
    assert any("not a page" in e for e in pf.validate_text("[nosuchpage.params.x]\nmin = 1\n"))
    h = pf.digest(setup_env.read_bytes())
    with pytest.raises(ValueError):
        pf.save(setup_env, bad, h)
    assert pf.digest(setup_env.read_bytes()) == h
    with pytest.raises(pf.Conflict):
        pf.save(setup_env, good, "0" * 64)
    pf.save(setup_env, good, h)
    assert setup_env.read_text() == good
    # export: the download button serves the file as it is on disk
    at = signed_in(editor.URL_PATH)
    assert [b for b in at.get("download_button")]


def test_upload_in_the_editor(setup_env):
    original = setup_env.read_text()
    at = signed_in(editor.URL_PATH)
    bad = original + BAD
    at.file_uploader(key="_ed_upload").upload("course.toml", bad.encode(), "application/toml").run()
    assert any("not valid" in e.value for e in at.error)
    assert "above the hard limit" in "\n".join(c.value for c in at.code)
    assert not [b for b in at.button if b.key == "_ed_import_apply"]
    assert setup_env.read_text() == original
    good = original + GOOD
    at.file_uploader(key="_ed_upload").set_value(("course.toml", good.encode(), "application/toml")).run()
    at.button(key="_ed_import_apply").click().run()
    assert not at.exception
    assert setup_env.read_text() == good
    assert pf.backup_path(setup_env).read_text() == original
