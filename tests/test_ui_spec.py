"""The instructor parameter file: validation, fallbacks, reload, and the shipped file."""

import math

import pytest

from tests.conftest import STEMS, page_schema
from ui.kit import spec
from ui.kit.spec import PageSchema, Param

SCHEMA = PageSchema(
    "demo",
    params=(
        Param("beta", "float", default=1.0, min=0.1, max=10.0, step=0.1, lo=0.01, hi=50.0),
        Param("n", "int", default=8, min=2, max=64, step=1, hi=256),
        Param("mode", "select", default="a", options=("a", "b", "c")),
        Param("flag", "bool", default=False),
    ),
)


def test_shipped_file_is_valid_for_every_page():
    data, err = spec.load_file(spec.DEFAULT_PARAMS_FILE)
    assert err is None
    for stem in STEMS:
        res = spec.resolve(page_schema(stem), data, "params.toml")
        assert res.errors == (), res.errors
    assert set(data) <= set(STEMS), f"sections for unknown pages: {set(data) - set(STEMS)}"


def test_the_shipped_file_holds_only_what_it_overrides():
    """One source for every number: a slider's range, default and step are its SCHEMA's; an entry of
    the shipped file that repeats a built-in value is a second copy (and goes stale)."""
    data, _ = spec.load_file(spec.DEFAULT_PARAMS_FILE)
    for stem in STEMS:
        schema = page_schema(stem)
        for name, entry in (data.get(stem, {}).get("params") or {}).items():
            p = schema.param(name)
            same = [k for k, v in entry.items() if (list(p.options) if k == "options" else getattr(p, k)) == v]
            assert not same, f"[{stem}.params.{name}] repeats the built-in {same}"


def test_valid_override_and_preset():
    data = {
        "demo": {
            "params": {
                "beta": {"min": 0.5, "max": 5, "default": 2, "step": 0.5},
                "mode": {"options": ["b", "c"], "default": "c"},
            },
            "presets": {"p1": {"title": {"en": "One", "zh": "一"}, "values": {"beta": 3, "n": 4}}},
        }
    }
    res = spec.resolve(SCHEMA, data, "f.toml")
    assert res.errors == ()
    b = res.params["beta"]
    assert (b.min, b.max, b.default, b.step) == (0.5, 5.0, 2.0, 0.5)
    assert res.params["mode"].options == ("b", "c") and res.params["mode"].default == "c"
    assert res.presets["p1"].values == {"beta": 3.0, "n": 4}
    assert res.presets["p1"].title["zh"] == "一"


@pytest.mark.parametrize(
    "entry,needle",
    [
        ({"min": 5, "max": 1}, "min <= default <= max"),
        ({"default": 100}, "min <= default <= max"),
        ({"max": 1000}, "hard limit"),
        ({"min": 0.0}, "hard limit"),
        ({"step": -1}, "step must be > 0"),
        ({"step": 100}, "larger than the range"),
        ({"default": "two"}, "finite number"),
        ({"default": math.nan}, "finite number"),
        ({"colour": 1}, "unknown key"),
    ],
)
def test_broken_entry_is_reported_and_falls_back(entry, needle):
    res = spec.resolve(SCHEMA, {"demo": {"params": {"beta": entry}}}, "f.toml")
    assert any(needle in e and "[demo.params.beta]" in e and "f.toml" in e for e in res.errors), res.errors
    if "colour" not in entry:
        assert res.params["beta"] == SCHEMA.param("beta")


@pytest.mark.parametrize(
    "data,needle",
    [
        ({"demo": {"params": {"gamma": {"min": 1}}}}, "unknown parameter"),
        ({"demo": {"params": {"n": {"default": 2.5}}}}, "integer"),
        ({"demo": {"params": {"mode": {"options": ["z"]}}}}, "subset"),
        ({"demo": {"params": {"mode": {"min": 1}}}}, "only 'default'"),
        ({"demo": {"presets": {"p": {"title": "T", "values": {"beta": 99}}}}}, "outside"),
        ({"demo": {"presets": {"p": {"title": "T", "values": {"nope": 1}}}}}, "unknown parameter"),
        ({"demo": {"presets": {"p": {"values": {"beta": 1}}}}}, "title"),
        ({"demo": {"presets": {"p": {"title": "T"}}}}, "values"),
        ({"demo": {"whatever": 1}}, "unknown key"),
        ({"demo": 3}, "must be a table"),
    ],
)
def test_other_problems(data, needle):
    res = spec.resolve(SCHEMA, data, "f.toml")
    assert any(needle in e for e in res.errors), res.errors
    # the page still gets a complete, valid spec
    assert set(res.params) == {"beta", "n", "mode", "flag"}


def test_syntax_error_and_missing_file(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("[demo.params.beta\nmin = 1\n")
    monkeypatch.setenv(spec.PARAMS_ENV, str(bad))
    res = spec.resolve(SCHEMA)
    assert res.errors and "not valid TOML" in res.errors[0] and bad.name in res.errors[0]
    assert str(tmp_path) not in " ".join(res.errors)  # the file name only, never the server's path
    assert res.params["beta"] == SCHEMA.param("beta")
    monkeypatch.setenv(spec.PARAMS_ENV, str(tmp_path / "missing.toml"))
    res = spec.resolve(SCHEMA)
    assert "cannot read" in res.errors[0]


def test_edits_take_effect_without_restart(tmp_path, monkeypatch):
    f = tmp_path / "p.toml"
    f.write_text("[demo.params.beta]\ndefault = 2.0\n")
    monkeypatch.setenv(spec.PARAMS_ENV, str(f))
    assert spec.resolve(SCHEMA).params["beta"].default == 2.0
    f.write_text("[demo.params.beta]\ndefault = 3.5\n# changed\n")
    assert spec.resolve(SCHEMA).params["beta"].default == 3.5


@pytest.mark.parametrize(
    "entry,step",
    [
        ({"min": 0.01}, 0.01),  # opened to the hard limit: the built-in 0.1 grid missed 1.0
        ({"min": 0.05, "step": 0.25}, 0.05),
        ({"min": 0.5, "default": 2.0}, 0.1),  # already on the grid: the step stays
        ({"min": 0.2, "default": 2.2, "step": 0.4}, 0.4),
    ],
)
def test_a_moved_minimum_keeps_default_and_presets_on_the_slider_grid(entry, step):
    """A slider shows min + k*step: with β opened down to 0.01 (step 0.1), the default 1.0 was shown
    as 1.01 and a preset's 3.0 as 3.01. The step becomes the largest one whose grid holds both."""
    data = {"demo": {"params": {"beta": entry}, "presets": {"p": {"title": "P", "values": {"beta": 3.0}}}}}
    res = spec.resolve(SCHEMA, data, "f.toml")
    assert res.errors == ()
    b = res.params["beta"]
    assert b.step == pytest.approx(step)
    for v in (b.default, 3.0):
        k = (v - b.min) / b.step
        assert abs(k - round(k)) < 1e-9, (v, b.min, b.step)
        assert b.clamp(v) == pytest.approx(v, abs=1e-12)
    assert res.presets["p"].values["beta"] == pytest.approx(3.0, abs=1e-12)


def test_a_grid_of_too_many_positions_moves_the_minimum_instead():
    """Position 1..100000 with step 100 and default 10000 (block's RoPE window opened to its hard
    limit): a step of 1 would make a slider of 100000 positions; the step stays and min moves up to
    100, the first grid point through the default."""
    assert spec._on_grid(1, 100000, 10000, 100) == (100, 100)
    assert spec._on_grid(1000, 200000, 60000, 5000) == (1000, 1000)  # 199 positions: a finer step
    lo, step = spec._on_grid(0.001, 1000.0, 1.0, 0.1)  # 999,990 positions at 0.001
    assert step == 0.1 and lo == pytest.approx(0.1) and lo >= 0.001


def test_clamp_snaps_to_grid():
    p = SCHEMA.param("beta")
    assert p.clamp(100.0) == 10.0 and p.clamp(-3.0) == 0.1 and p.clamp(1.04) == pytest.approx(1.0)
    assert SCHEMA.param("n").clamp(1000) == 64


def test_builtin_schema_errors_are_caught_at_definition():
    with pytest.raises(ValueError, match="min <= default <= max"):
        Param("x", "float", default=5.0, min=0.0, max=1.0)


def test_unknown_page_section_is_reported():
    res = spec.resolve(SCHEMA, {"demo": {}, "tow_point": {"params": {}}}, "f.toml", known_pages=("demo",))
    assert any("[tow_point] is not a page" in e for e in res.errors)


def test_builtin_table_file_errors_name_file_and_key(tmp_path):
    import pytest as _pytest
    from ui.kit.spec import PageSchema as _PS

    f = tmp_path / "x.toml"
    f.write_text('[params.n]\nkind = "int"\ndefault = 3\nmin = 1\nmax = 9\nstpe = 1\n')
    with _pytest.raises(ValueError, match=r"x\.toml: params\.n: unknown key\(s\) \['stpe'\]"):
        _PS.from_file("x", path=f)
    f.write_text('[params.n]\nkind = "int"\ndefault = 30\nmin = 1\nmax = 9\n')
    with _pytest.raises(ValueError, match=r"x\.toml: params\.n: .*min <= default <= max"):
        _PS.from_file("x", path=f)
    f.write_text('[params.k]\nkind = "select"\ndefault = "a"\n')
    assert _PS.from_file("x", path=f, options={"k": ("a", "b")}).param("k").options == ("a", "b")
