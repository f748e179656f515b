"""Every registered page, through AppTest: defaults in both languages, every preset,
URL round trip, garbage URL values and a broken parameter file.

Pages are discovered from ``ui.kit.nav.PAGES``, so a new page is covered without edits here.
"""

import math

import pytest

from tests.conftest import STEMS, app_test, chart_specs, decode, page_schema
from ui.kit import spec
from ui.kit.i18n import Text

PRESETS = [
    (stem, pid)
    for stem in STEMS
    for pid in spec.resolve(page_schema(stem), spec.load_file(spec.DEFAULT_PARAMS_FILE)[0]).presets
]


def _clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def assert_full_log_labels(specs, where=""):
    """No log axis may show Plotly's bare minor digits ("1, 5, 2" for 1, 0.5, 0.2): every
    log axis has decade labels (numeric dtick) or explicit ticks (labelled in full)."""
    n = 0
    for i, fig in enumerate(specs):
        for name, ax in fig.get("layout", {}).items():
            if not name.startswith(("xaxis", "yaxis")) or ax.get("type") != "log":
                continue
            n += 1
            dtick = ax.get("dtick")
            if ax.get("tickvals") is not None:
                assert ax.get("ticktext") is None or len(ax["ticktext"]) == len(ax["tickvals"])
                for v, text in zip(decode(ax["tickvals"]), ax.get("ticktext") or ()):
                    if len(str(text)) == 1 and str(text).isdigit():  # a digit labels its own value only
                        assert float(v) == float(text), (where, i, name, ax.get("ticktext"))
            else:
                assert isinstance(dtick, (int, float)) and dtick >= 1 and float(dtick).is_integer(), (
                    where,
                    i,
                    name,
                    dtick,
                )
    return n


def _widget_value(at, name):
    for kind in ("slider", "selectbox", "toggle"):
        try:
            return getattr(at, kind)(key=name).value
        except KeyError:
            continue
    raise KeyError(name)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stem", STEMS)
def test_page_renders_at_defaults(stem, lang):
    at = app_test(stem, {"lang": lang})
    _clean(at)
    assert at.title[0].value == Text(stem, lang)("title")
    schema = page_schema(stem)
    for p in schema.params:
        assert at.query_params[p.name] is not None
    if schema.params:
        assert chart_specs(at), f"{stem}: no figure"
    assert_full_log_labels(chart_specs(at), stem)
    assert at.query_params["lang"] in ([lang], lang)
    if lang == "zh" and schema.params:  # the figures' text alternatives use Chinese punctuation
        from tests.test_access_punct import alt_captions, cjk_punct_errors

        alts = alt_captions(at, lang)
        assert alts, f"{stem}: no figure description"
        assert not [e for a in alts for e in cjk_punct_errors(a)], (stem, alts)


@pytest.mark.parametrize("stem,pid", PRESETS)
def test_every_preset(stem, pid):
    res = spec.resolve(page_schema(stem))
    at = app_test(stem, {"preset": pid})
    _clean(at)
    assert not at.warning, [w.value for w in at.warning]
    for k, v in res.presets[pid].values.items():
        assert _widget_value(at, k) == v, k
    assert at.selectbox(key="preset").value == pid
    assert_full_log_labels(chart_specs(at), f"{stem}:{pid}")
    # the full title is readable under the box (the box itself cut long ones off)
    import html

    shown = [html.unescape(h.proto.body) for h in at.sidebar.get("html")]
    assert any(res.presets[pid].title["en"] in h for h in shown), shown


@pytest.mark.parametrize("stem", [s for s in STEMS if page_schema(s).params])
def test_url_round_trip(stem):
    """A link with every parameter restores exactly those widget values, and the URL keeps them."""
    res = spec.resolve(page_schema(stem))
    want = {name: p.other_value() for name, p in res.params.items()}
    from ui.kit.page import fmt_value

    query = {name: fmt_value(res.params[name], v) for name, v in want.items()}
    at = app_test(stem, {"lang": "zh", **query})
    _clean(at)
    assert not at.warning, [w.value for w in at.warning]
    for name, v in want.items():
        got = _widget_value(at, name)
        assert got == pytest.approx(v) if isinstance(v, float) else got == v, name
        assert at.query_params[name] in (query[name], [query[name]])


@pytest.mark.parametrize("stem", [s for s in STEMS if page_schema(s).params])
def test_garbage_url_values_give_notices_not_tracebacks(stem):
    res = spec.resolve(page_schema(stem))
    numeric = [p for p in res.params.values() if p.kind in ("float", "int")]
    query = {"lang": "xx", "preset": "no_such_preset"}
    bad = ["abc", "nan", "inf", "1e308", "-1e308", "", "0x1p3", "１２"]
    for i, p in enumerate(numeric):
        query[p.name] = bad[i % len(bad)]
    at = app_test(stem, query)
    _clean(at)
    assert len(at.warning) >= 3, [w.value for w in at.warning]
    for p in numeric:
        v = _widget_value(at, p.name)
        assert p.min <= v <= p.max and math.isfinite(v)
    if numeric and "1e308" in query.values():
        big = next(p for p in numeric if query[p.name] == "1e308")
        assert _widget_value(at, big.name) == res.params[big.name].max


@pytest.mark.parametrize("stem", STEMS)
def test_broken_parameter_file_falls_back(stem, tmp_path, monkeypatch):
    schema = page_schema(stem)
    f = tmp_path / "broken.toml"
    if schema.params:
        p = schema.params[0]
        f.write_text(f"[{stem}.params.{p.name}]\nmin = 'low'\n\n[{stem}.params.not_a_param]\nmax = 1\n")
    else:
        f.write_text("this is [ not toml")
    monkeypatch.setenv(spec.PARAMS_ENV, str(f))
    at = app_test(stem)
    assert not at.exception
    msgs = " ".join(e.value for e in at.error)
    assert f.name in msgs and str(tmp_path) not in msgs  # the file name, never the server path
    if schema.params:
        assert f"[{stem}.params.{schema.params[0].name}]" in msgs and "not_a_param" in msgs
        assert _widget_value(at, schema.params[0].name) == schema.params[0].default
        assert chart_specs(at)


def test_instructor_file_changes_ranges_and_defaults(tmp_path, monkeypatch):
    f = tmp_path / "class.toml"
    f.write_text(
        "[two_point.params.beta]\nmin = 0.5\nmax = 4.0\ndefault = 2.5\nstep = 0.5\n"
        "[two_point.presets.mine]\ntitle = { en = 'Mine', zh = '我的' }\nvalues = { beta = 3.5 }\n"
    )
    monkeypatch.setenv(spec.PARAMS_ENV, str(f))
    at = app_test("two_point")
    _clean(at)
    s = at.slider(key="beta")
    assert (s.value, s.min, s.max, s.step) == (2.5, 0.5, 4.0, 0.5)
    at.selectbox(key="preset").set_value("mine").run()
    assert at.slider(key="beta").value == 3.5
    assert at.query_params["preset"] in ("mine", ["mine"])


def test_slider_change_reruns_and_updates_url():
    at = app_test("two_point")
    before = chart_specs(at)[0]["data"][0]["y"]
    at.slider(key="beta").set_value(3.0).run()
    _clean(at)
    assert chart_specs(at)[0]["data"][0]["y"] != before
    assert at.query_params["beta"] in ("3", ["3"])
    assert at.selectbox(key="preset").value == ""


def _all_widget_values(at, res):
    return {name: _widget_value(at, name) for name in res.params}


@pytest.mark.parametrize("stem", sorted({s for s, _ in PRESETS}))
def test_preset_is_a_complete_view(stem):
    """A preset chosen after another preset, and after moving sliders, shows exactly the
    widget values of the same preset opened fresh: every parameter it does not list takes its
    default (hemisphere "Very coarse layers" then "Cap of 130°" used to keep Δ = 1.5)."""
    res = spec.resolve(page_schema(stem))
    ids = list(res.presets)
    fresh = {}
    for pid in ids:
        at = app_test(stem, {"preset": pid})
        _clean(at)
        fresh[pid] = _all_widget_values(at, res)
    at = app_test(stem)
    for i, x in enumerate(ids):
        y = ids[i - 1]
        at.selectbox(key="preset").set_value(y).run()
        listed = res.presets[x].values
        # and one slider that x does not list moved one step from its default
        moved = next(
            (
                p
                for name, p in res.params.items()
                if name not in listed and p.kind in ("float", "int") and p.step and p.default + p.step <= p.max
            ),
            None,
        )
        if moved is not None:
            at.slider(key=moved.name).set_value(moved.clamp(moved.default + moved.step))
        at.run()
        _clean(at)
        at.selectbox(key="preset").set_value(x).run()
        _clean(at)
        assert _all_widget_values(at, res) == fresh[x], (y, x)
        assert at.selectbox(key="preset").value == x
        assert at.query_params["preset"] in (x, [x])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unknown_path_opens_home_with_a_notice_in_the_readers_language(lang, monkeypatch):
    """``/nosuchpage`` showed Streamlit's English "Page not found" dialog even in Chinese.
    A browser's first request names the page by its URL path (``RerunData.page_name``); AppTest
    only sends page hashes, so the path is added to its rerun request here."""
    import functools

    from streamlit.runtime.scriptrunner_utils import script_requests
    from streamlit.testing.v1 import local_script_runner as lsr
    from streamlit.runtime.scriptrunner import script_runner

    sent = []
    orig_enqueue = script_runner.ScriptRunner._enqueue_forward_msg

    def enqueue(self, msg):
        sent.append(msg.WhichOneof("type"))
        return orig_enqueue(self, msg)

    monkeypatch.setattr(script_runner.ScriptRunner, "_enqueue_forward_msg", enqueue)
    from streamlit.runtime.pages_manager import PagesManager

    orig_init = PagesManager.__init__

    def init(self, *a, **k):  # AppTest resets the legacy-pages flag on every run; ui.server.serve clears it
        orig_init(self, *a, **k)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
    monkeypatch.setattr(lsr, "RerunData", functools.partial(script_requests.RerunData, page_name="nosuchpage"))
    at = app_test("home", {"lang": lang})
    _clean(at)
    assert at.title[0].value == Text("home", lang)("title")
    notice = Text("common", lang)("nav.unknown_page", path="nosuchpage")
    assert [w.value for w in at.warning] == [notice]
    assert "page_not_found" not in sent
    assert ("本应用" in notice) == (lang == "zh")
