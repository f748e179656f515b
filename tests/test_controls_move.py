"""Every control moves something the student sees: on every lesson page, each parameter moved off
its default (``Param.other_value``, the others at their defaults) changes what the main area draws
with the page as it opens (collapsed sections closed) — a figure, a number, a caption, a text or a
button's label — or, for a control that drives only a collapsed section, sits inside that section
(``ctx.controls``), where it is seen with what it moves."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STEMS, app_test, charts, page_schema
from ui.kit import spec
from ui.kit.chart import sent_figure

LESSONS = [s for s in STEMS if page_schema(s).params]
#: a control that acts only under another one's choice (its label says so): checked under that choice
WHEN = {("hemisphere", "A_seed"): {"A": "gaussian"}}


def drawn(at) -> str:
    """What the main area shows, as one string: charts' data and layout, numbers, texts, buttons."""
    main = at.main
    parts = [json.dumps(sent_figure(c.proto), sort_keys=True) for c in charts(main)]
    parts += [f"{m.label}={m.value}" for m in main.metric]
    from ui.kit.i18n import Text

    printed = Text("common", "en")("view.print_params")  # the print-only line of all values: not on screen
    for kind in ("markdown", "caption", "info", "warning", "success", "latex", "code"):
        parts += [str(e.value) for e in main.get(kind) if printed not in str(e.value)]
    parts += [b.label for b in main.button] + [e.label for e in main.expander]
    parts += [str(getattr(e.proto, "label", "")) for e in main.get("download_button")]
    parts += [str(e.proto) for e in main.get("table")] + [str(e.proto) for e in main.get("dataframe")]
    return "\n".join(parts)


def _set(at, name, value):
    try:
        w = at.slider(key=name)
    except KeyError:
        w = None
    if w is None:
        try:
            w = at.selectbox(key=name)
        except KeyError:
            w = at.toggle(key=name)
    w.set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def _in_main(at, name) -> bool:
    """The control is drawn in the main area (beside what it drives), not in the sidebar."""
    return any(getattr(w, "key", None) == name for kind in ("slider", "selectbox", "toggle") for w in at.main.get(kind))


@pytest.mark.parametrize("stem", LESSONS)
def test_every_control_changes_what_is_drawn(stem):
    res = spec.resolve(page_schema(stem))
    at = app_test(stem, {"lang": "en"})
    assert not at.exception
    base = drawn(at)
    still = []
    for name, p in res.params.items():
        other, cond = p.other_value(), WHEN.get((stem, name), {})
        for k, val in cond.items():
            _set(at, k, val)
        before = drawn(at) if cond else base
        _set(at, name, other)
        if drawn(at) == before and not _in_main(at, name):
            still.append(f"{name}={other}")
        _set(at, name, p.default)
        for k in cond:
            _set(at, k, res.params[k].default)
    assert not still, f"{stem}: moving these changes nothing on the page as it opens: {still}"
