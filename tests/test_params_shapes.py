"""Any shape of parameter file gives messages naming the file and the key, never an exception:
in the loader (``ui.kit.spec``), in the file checks (``ui.teaching.params_file``), on a page, in the editor
(which stays usable to fix or undo the file) and on upload."""

from __future__ import annotations

import tomlkit
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests._instructor import params_copy, router_only, signed_in  # noqa: F401
from tests.conftest import app_test
from ui.kit import spec
from ui.teaching import editor
from ui.teaching import params_file as pf
from ui.kit.nav import PAGES, page_module

SCHEMAS = [page_module(e.stem).SCHEMA for e in PAGES]
KNOWN = tuple(s.stem for s in SCHEMAS)
#: the words a parameter file is made of, so that random files reach deep into the checks
WORDS = [
    "two_point",
    "hemisphere",
    "params",
    "presets",
    "beta",
    "theta0",
    "min",
    "max",
    "default",
    "step",
    "options",
    "title",
    "values",
    "en",
    "zh",
    "answers",
    "x",
]

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["", "float", "True", "1e400"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(WORDS), inner, max_size=4)),
    max_leaves=25,
)
files = st.dictionaries(st.sampled_from(WORDS), values, max_size=4)

# The shapes the audit found (each crashed a page, the editor or the upload before).
SHAPES = {
    "presets_list": '[two_point]\npresets = ["hot"]\n',
    "params_number": "[two_point]\nparams = 5\n",
    "params_array_of_tables": "[[two_point.params]]\nbeta = 1\n",
    "presets_array_of_tables": "[[two_point.presets]]\ntitle = 'x'\n",
    "deep_array": "x = " + "[" * 3000 + "]" * 3000 + "\n",
    "section_number": "two_point = 3\n",
    "huge_int": "[two_point.params.beta]\nmin = " + "9" * 400 + "\n",
}


def _check(data: dict) -> None:
    for s in SCHEMAS:
        res = spec.resolve(s, data, source="f.toml", known_pages=KNOWN)
        assert all(e.startswith("f.toml: ") for e in res.errors)
        assert set(res.params) == {p.name for p in s.params}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files)
def test_random_shapes_never_raise_in_the_loader(data):
    _check(data)
    try:
        text = tomlkit.dumps(data)
    except Exception:  # noqa: BLE001 - a shape tomlkit cannot write: the parsed data was checked
        return
    assert all(isinstance(m, str) for m in pf.validate_text(text, source="f.toml"))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_audited_shapes_give_a_message_naming_file_and_key(name, tmp_path, monkeypatch):
    path = tmp_path / "params.toml"
    path.write_text(SHAPES[name])
    monkeypatch.setenv(spec.PARAMS_ENV, str(path))
    msgs = pf.validate_text(SHAPES[name], source="params.toml")
    assert msgs and all(m.startswith("params.toml:") for m in msgs)
    if name not in ("deep_array", "huge_int"):
        assert any("two_point" in m for m in msgs), msgs
    res = spec.resolve(page_module("two_point").SCHEMA, known_pages=KNOWN)
    assert res.errors


@pytest.mark.parametrize("name", ["presets_list", "params_array_of_tables", "deep_array"])
def test_page_and_editor_stay_usable(name, params_copy):  # noqa: F811
    params_copy.write_text(SHAPES[name])
    at = app_test("two_point").run()
    assert not at.exception
    at = signed_in(editor.URL_PATH)
    assert not at.exception
    assert at.button(key="_ed_save")  # the editor draws: the file can be fixed from here
    assert any("params.toml" in c.value for c in at.code)


def test_too_many_presets_are_capped(tmp_path):
    body = "".join(
        f"[two_point.presets.p{i}]\ntitle = 'p{i}'\nvalues = {{ beta = 1.0 }}\n" for i in range(spec.MAX_PRESETS + 30)
    )
    import tomllib

    res = spec.resolve(page_module("two_point").SCHEMA, tomllib.loads(body), source="f.toml")
    schema_presets = len(page_module("two_point").SCHEMA.presets)
    assert len(res.presets) <= spec.MAX_PRESETS + schema_presets
    assert any("at most" in e for e in res.errors)
    assert pf.validate_text(body, source="f.toml")  # such a file is refused on upload and save
