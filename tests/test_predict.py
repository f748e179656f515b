"""Predict, then reveal: every page with steps, in both languages, through AppTest.

For each page the true answers are computed HERE, independently of views/predict_<page>.py (closed forms,
scipy quadrature / ODE solvers / matrix exponentials, or the sim/ simulation run directly), for
parameter values that differ per language. Checked: a right answer is accepted (success shown),
a first wrong one gets a hint and no value, a second wrong one is rejected with the true value and
the error shown, "try again" hides the reveal,
the step's figure is hidden before an answer and shown after, and a parameter change marks the
answer as being for other values and hides the reveal again.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special
from scipy.linalg import expm

from tests.conftest import app_test, charts
from ui.kit.i18n import Text
from ui.kit.predict import Step, judge

TIMEOUT = 300  # the shared test machine can be very loaded


# --------------------------------------------------------------------------- independent answers
def _sa_half_angle(beta, theta0, tau):
    """The SA half-angle ODE integrated in ϑ itself (the app integrates log ϑ)."""
    f = lambda _, y: [-math.sin(2 * y[0]) / (1 + math.exp(beta * (1 - math.cos(2 * y[0]))))]
    return integrate.solve_ivp(f, (0, tau), [theta0], rtol=1e-11, atol=1e-14).y[0, -1]


def _usa_half_angle(beta, theta0, tau):
    f = lambda _, y: [-0.5 * math.exp(beta * math.cos(2 * y[0])) * math.sin(2 * y[0])]
    return integrate.solve_ivp(f, (0, tau), [theta0], method="LSODA", rtol=1e-10, atol=1e-300).y[0, -1]


def two_point_truth(q):
    b, th, h, dt = (float(q[k]) for k in ("beta", "theta0", "horizon", "dt"))
    tau = max(round(h / dt), 1) * dt
    sa, usa = _sa_half_angle(b, th, tau), _usa_half_angle(b, th, tau)
    return {
        "sa_end": sa,
        "energy0": -(math.exp(b) + math.exp(b * math.cos(2 * th))) / (4 * b),
        "smaller": "usa" if usa < sa else "sa",
    }


def hemisphere_truth(q):
    from sim import hemisphere as hs
    from sim.attention import simulate

    n, d, seed = int(q["n"]), 3, 0
    A = hs.random_matrix(d, "identity", 0)
    run = lambda Z0, beta, horizon: simulate(Z0, beta, 0.1, round(horizon / 0.1), A=A)[-1]
    Zh = run(hs.cap_uniform(n, d, math.radians(float(q["cap"])), seed=seed), float(q["beta"]), float(q["horizon"]))
    Zc = run(hs.sphere_uniform(n, d, seed=seed + 1), float(q["contrast_beta"]), float(q["contrast_horizon"]))
    G = np.clip(Zh @ Zh.T, -1, 1)
    diam = float(np.max(np.arccos(G)))
    return {"collapse": "one" if diam < 1e-2 else "spread", "clusters": float(hs.cluster_count(Zc, 0.999))}


def gaussian_width_truth(q):
    D, k, M = int(q["D"]), int(q["k"]), int(q["M"])
    k, M = min(k, D), min(M, D)
    sub = math.sqrt(2) * math.exp(special.gammaln((k + 1) / 2) - special.gammaln(k / 2))
    # E max of M iid |N(0,1)| = ∫_0^∞ 1 - (2Φ(r) - 1)^M dr   (correlation 0)
    dirs = integrate.quad(lambda r: 1 - special.erf(r / math.sqrt(2)) ** M, 0, 40, limit=200)[0]
    return {"subspace": sub, "directions": dirs}


def nonnormal_truth(q):
    M, delta = float(q["M"]), float(q["delta"])
    A = np.array([[-1.0, M], [0.0, -1.0]])
    norm = lambda s: np.linalg.norm(expm(s * A), 2)
    r = optimize.minimize_scalar(lambda s: -norm(s), bounds=(0, 3), method="bounded", options={"xatol": 1e-10})
    x = 1 - delta  # the Euler factor for V' = -V
    regime = (
        "monotone"
        if x > 0
        else "zero"
        if x == 0
        else "alternating"
        if x > -1
        else "neutral"
        if x == -1
        else "divergent"
    )
    return {"when": float(r.x), "peak": float(-r.fun), "regime": regime}


def depth_sum_truth(q):
    a, L, s, rho = float(q["alpha"]), int(q["L"]), float(q["sigma"]), float(q["rho"])
    var = lambda n: s * s * n ** (-2 * a) * (n + n * (n - 1) * rho)
    return {"variance": var(L), "exponent": math.log2(var(2 * L) / var(L)), "residual": (1 + L ** (-2 * a)) ** L}


def measures_truth(q):
    n = int(q["n"])
    # E|mean of n uniforms - 1/2| from the characteristic function: (1/(pi n)) ∫ (1 - sinc(u)^n) / u^2 du
    f = lambda u: (1 - (math.sin(u) / u) ** n) / u**2 if u > 1e-4 else n / 6.0
    e_abs = (integrate.quad(f, 0, 60, limit=400)[0] + 1 / 60) / (math.pi * n)
    return {"equispaced": math.pi / (2 * n), "fixed_shift": 2 * math.pi * e_abs}


def block_truth(q):
    d, c = float(q["sink_delta"]), float(q["sink_share"])
    # N_max: the largest N with e^d / (e^d + N - 1) >= c, found by bisection on the share itself
    share = lambda N: math.exp(d) / (math.exp(d) + N - 1)
    nmax = optimize.brentq(lambda N: share(N) - c, 1, 1e12, xtol=1e-12, rtol=1e-14)
    return {"gain0": 10 ** (-float(q["log_eps"]) / 2), "sink": nmax}


# page -> language -> query; the steps with a figure; a parameter change and the steps it invalidates
CASES = {
    "two_point": dict(
        truth=two_point_truth,
        figures={"smaller", "energy0"},
        query={
            "en": dict(beta="2", theta0="0.8", horizon="4", dt="0.1"),
            "zh": dict(beta="0.5", theta0="1.2", horizon="3", dt="0.2"),
        },
        change=("theta0", 0.5),
        stale={"smaller", "sa_end", "energy0"},
    ),
    "hemisphere": dict(
        truth=hemisphere_truth,
        figures={"collapse", "clusters"},
        query={
            "en": dict(n="24", cap="60", beta="2", horizon="10", contrast_beta="9", contrast_horizon="20"),
            "zh": dict(n="20", cap="170", beta="1", horizon="5", contrast_beta="12", contrast_horizon="15"),
        },
        change=("cap", 120),
        stale={"collapse"},
    ),
    "gaussian_width": dict(
        truth=gaussian_width_truth,
        figures={"subspace", "directions"},
        query={"en": dict(D="64", k="9", M="20", correlation="0"), "zh": dict(D="16", k="3", M="40", correlation="0")},
        change=("k", 5),
        stale={"subspace"},
    ),
    "nonnormal": dict(
        truth=nonnormal_truth,
        figures={"peak", "regime"},
        query={"en": dict(M="6", delta="0.25"), "zh": dict(M="11.5", delta="1.5")},
        change=("M", 3.0),
        stale={"when", "peak"},
    ),
    "depth_sum": dict(
        truth=depth_sum_truth,
        figures={"variance", "exponent", "residual"},
        query={
            "en": dict(alpha="0.5", L="64", sigma="1.5", rho="0.1"),
            "zh": dict(alpha="0.3", L="40", sigma="0.7", rho="0"),
        },
        change=("L", 100),
        stale={"variance", "exponent", "residual"},
    ),
    "measures": dict(
        truth=measures_truth,
        figures=set(),
        query={"en": dict(n="32"), "zh": dict(n="7")},
        change=("n", 50),
        stale={"equispaced", "fixed_shift"},
    ),
    "block": dict(
        truth=block_truth,
        figures=set(),
        query={
            "en": dict(norm_d="64", log_eps="-6", sink_delta="6", sink_share="0.5"),
            "zh": dict(norm_d="1", log_eps="-3", sink_delta="2.5", sink_share="0.2"),
        },
        change=("sink_delta", 8.0),
        stale={"sink"},
    ),
}


# --------------------------------------------------------------------------- AppTest helpers
def _charts(at) -> set[str]:
    """The keys of the predict figures on the page."""
    out = set()
    for el in charts(at):
        k = el.proto.id.rsplit("-", 1)[-1]
        if k.startswith("fig_predict_"):
            out.add(k)
    return out


def _page_charts(at) -> int:
    """How many of the page's own figures (not the steps' reveals) are drawn."""
    return sum(1 for el in charts(at) if not el.proto.id.rsplit("-", 1)[-1].startswith("fig_predict_"))


def _covers(at, lang) -> int:
    return sum(1 for e in at.info if e.value == Text("predict", lang)("ui.covered"))


def _submit(at, stem, sid, value):
    steps = _steps(stem)
    step = steps[sid]
    key = f"_predict_{stem}_{sid}_in"
    (at.radio(key=key) if step.kind == "choice" else at.number_input(key=key)).set_value(value)
    btn = next(b for b in at.button if b.key and b.key.startswith(f"FormSubmitter:_predict_form_{stem}_{sid}-"))
    btn.click().run()
    assert not at.exception, [e.value for e in at.exception]


def _steps(stem) -> dict[str, Step]:
    from tests.conftest import page_schema

    return {s.id: s for s in page_schema(stem).steps}


def _texts(at, kind):
    return [e.value for e in getattr(at, kind)]


def _wrong(step: Step, y):
    if step.kind == "choice":
        return next(c for c in step.choices if c != y)
    return y + 1.0 if abs(y) < 1e-9 else y * (1.6 if y > 0 else 0.4) + (1.0 if step.atol else 0.0)


def _load_metrics(lang, stem, sid):
    import tomllib

    from ui.kit.files import text_file

    with open(text_file(stem, lang), "rb") as fh:
        return list(tomllib.load(fh)["predict"][sid].get("metrics", {}))


def _cover_snippets(lang, stem, key) -> list[str]:
    """Literal pieces of the page text ``key`` that a step covers (a section: its body; a table of
    texts: each of them), one per text: its longest line without a ``{placeholder}``."""
    import tomllib

    from ui.kit.files import text_file

    with open(text_file(stem, lang), "rb") as fh:
        node = tomllib.load(fh)
    for part in key.split("."):
        node = node[part]
    texts = (
        [node["body"]]
        if isinstance(node, dict) and "body" in node
        else ([node] if isinstance(node, str) else [v for v in node.values() if isinstance(v, str)])
    )
    out = []
    for text in texts:
        pieces = [
            x.strip()
            for chunk in text.replace("{{", "{").replace("}}", "}").split("{")
            for x in chunk.split("}")[-1].split("\n")
        ]
        out.append(max(pieces, key=len)[:80])
    assert all(len(x) >= 12 for x in out), (stem, key, out)
    return out


def _visible(at, snippets) -> bool:
    shown = [e.value for kind in ("markdown", "info", "caption") for e in getattr(at, kind)]
    return any(x in v for x in snippets for v in shown)


def _count_metric(at, label):
    return sum(1 for m in at.metric if m.label == label)


def _fig_key(stem, sid):
    return f"fig_predict_{stem}_{sid}"


# --------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stem", list(CASES))
def test_predict_then_reveal(stem, lang):
    check_predict_then_reveal(stem, lang, CASES[stem])


def check_predict_then_reveal(stem, lang, case):
    """A page's steps through AppTest (also used by tests/test_predict_pages.py)."""
    q = case["query"][lang]
    truth = case["truth"](q)
    steps = _steps(stem)
    assert set(truth) == set(steps), "every step of the page is checked here"
    p = Text("predict", lang)
    pt = Text(stem, lang)  # the steps' own texts: the page's [predict.<id>]

    at = app_test(stem, {"lang": lang, **q}, timeout=TIMEOUT)
    assert not at.exception
    assert any(e.label == p("ui.title", n=len(steps)) for e in at.expander)
    n_page = _page_charts(at)
    assert n_page > 0 and _covers(at, lang) == 0, "closed steps: the page as before"
    covers = {k: _cover_snippets(lang, stem, k) for sid in steps for k in steps[sid].covers}
    covers = {k: x for k, x in covers.items() if _visible(at, x)}  # (not those in a closed box)
    assert covers, "every page says which of its texts state an answer"
    at.session_state[f"_predict_open_{stem}"] = True  # the student opens "Predict first"
    at.run()
    assert _charts(at) == set(), "nothing is revealed before an answer"
    assert _page_charts(at) == 0 and _covers(at, lang) == n_page, "the page's figures wait"
    assert not at.metric, "and so do its headline numbers"
    for k, snippets in covers.items():  # the texts that state an answer wait with the figures
        assert not _visible(at, snippets), (k, snippets)
    note = p("ui.covered_text")
    assert any(e.value == note for e in at.info)
    labels = {(sid, k): pt(f"predict.{sid}.metrics.{k}") for sid in steps for k in (_load_metrics(lang, stem, sid))}
    before = {key: _count_metric(at, lab) for key, lab in labels.items()}

    # one step the long way: wrong -> a hint, no value, a second try; wrong again -> rejected,
    # revealed with the error; try again -> hidden
    first = next(iter(steps))
    s0 = steps[first]
    _submit(at, stem, first, _wrong(s0, truth[first]))
    starts = [p(k, said="\x00", tol="").split("\x00")[0] for k in ("ui.hint_high", "ui.hint_low", "ui.hint_choice")]
    hints = [w for w in _texts(at, "warning") if any(w.startswith(x) for x in starts)]
    assert hints and not _texts(at, "error"), _texts(at, "warning")
    assert _fig_key(stem, first) not in _charts(at), "a hint reveals nothing"
    if s0.kind == "number":
        assert not any(f"{truth[first]:.{s0.digits}g}" in w for w in hints)
    assert any(b.key == f"_predict_give_up_{stem}_{first}" for b in at.button)
    _submit(at, stem, first, _wrong(s0, truth[first]))
    errs = _texts(at, "error")
    if s0.kind == "choice":
        want = pt(f"predict.{first}.choices.{truth[first]}")
        assert any(want in e and pt(f"predict.{first}.choices.{_wrong(s0, truth[first])}") in e for e in errs), errs
    else:
        assert any(f"{truth[first]:.{s0.digits}g}" in e for e in errs), (truth[first], errs)
    assert (_fig_key(stem, first) in _charts(at)) == (first in case["figures"])
    again = next(b for b in at.button if b.key == f"_predict_again_{stem}_{first}")
    again.click().run()
    assert _fig_key(stem, first) not in _charts(at)
    assert not any(f"{truth[first]:.{s0.digits}g}" in e for e in _texts(at, "error") if s0.kind != "choice")

    # every step answered right (a number 3 % off, well inside its tolerance): accepted, revealed
    for sid, step in steps.items():
        y = truth[sid]
        x = y if step.kind == "choice" else (y * 1.03 if step.rtol >= 0.05 else y + 0.5 * step.atol)
        _submit(at, stem, sid, x)
        assert (_fig_key(stem, sid) in _charts(at)) == (sid in case["figures"]), sid
    succ = _texts(at, "success")
    assert len(succ) == len(steps), succ
    for sid, step in steps.items():
        if step.kind == "number":
            assert any(f"{truth[sid]:.{step.digits}g}" in s for s in succ), (sid, truth[sid], succ)
        else:
            assert any(pt(f"predict.{sid}.choices.{truth[sid]}") in s for s in succ), (sid, succ)
    for key, lab in labels.items():  # the step's metrics are revealed with it
        assert _count_metric(at, lab) == before[key] + 1, lab
    done = p("ui.progress", done=len(steps), right=len(steps), n=len(steps))
    assert any(c.value == done for c in at.caption), done
    assert _page_charts(at) == n_page and _covers(at, lang) == 0, "all answered: the figures are back"
    for k, snippets in covers.items():  # ... and so are the texts
        assert _visible(at, snippets), (k, snippets)
    assert not any(e.value == note for e in at.info)
    assert all("{" not in m for m in succ)
    if lang == "zh":  # the revealed figures' text alternatives use Chinese punctuation
        from tests.test_access_punct import alt_captions, cjk_punct_errors

        assert not [e for a in alt_captions(at, lang) for e in cjk_punct_errors(a)]

    # a parameter change: the answers that depend on it are for other values now
    name, value = case["change"]
    next(w for w in at.slider if w.key == name).set_value(value).run()
    assert not at.exception
    shown = _charts(at)
    for sid in steps:
        assert (_fig_key(stem, sid) in shown) == (sid in case["figures"] and sid not in case["stale"]), sid
    prefix = p("ui.stale", old="\x00", new="\x00").split("\x00")[0]
    stale = [w for w in _texts(at, "warning") if w.startswith(prefix)]
    assert len(stale) == len(case["stale"]), _texts(at, "warning")
    assert len(_texts(at, "success")) == len(steps) - len(case["stale"])
    assert (_page_charts(at) == 0) == bool(case["stale"]), "stale answers: the figures wait again"
    if case["stale"]:  # "show the figures anyway" lifts the cover
        next(w for w in at.toggle if w.key == f"_predict_peek_{stem}").set_value(True).run()
        assert _page_charts(at) > 0 and _covers(at, lang) == 0


def test_judge_relative_absolute_and_choice():
    s = Step("x", (), lambda v: 0.0, rtol=0.1)
    assert judge(s, 1.09, 1.0)["ok"] and not judge(s, 1.11, 1.0)["ok"]
    assert judge(s, -1.05, -1.0)["ok"] and not judge(s, 1.0, -1.0)["ok"]
    assert judge(s, 1.2, 1.0)["rel"] == pytest.approx(0.2)
    a = Step("y", (), lambda v: 0.0, rtol=0.0, atol=0.5)
    assert judge(a, 3.4, 3.0)["ok"] and not judge(a, 3.6, 3.0)["ok"]
    assert judge(a, 0.2, 0.0)["ok"] and judge(a, 0.2, 0.0)["abs"] == pytest.approx(0.2)
    c = Step("z", (), lambda v: "a", kind="choice", choices=("a", "b"))
    assert judge(c, "a", "a")["ok"] and not judge(c, "b", "a")["ok"]


@pytest.mark.parametrize("stem", list(CASES))
def test_answers_follow_the_parameters(stem):
    """No stored answers: the page's steps give the independent value for two parameter sets."""
    check_answers_follow_the_parameters(stem, CASES[stem])


def check_answers_follow_the_parameters(stem, case):
    steps = _steps(stem)
    from tests.conftest import page_schema

    defaults = {p.name: p.default for p in page_schema(stem).params}
    seen = []
    for lang in ("en", "zh"):
        q = case["query"][lang]
        values = dict(defaults)
        for k, v in q.items():
            values[k] = type(defaults[k])(float(v)) if not isinstance(defaults[k], str) else v
        truth = case["truth"](q)
        got = {sid: s.answer(values) for sid, s in steps.items()}
        for sid, s in steps.items():
            if s.kind == "choice":
                assert got[sid] == truth[sid], (sid, got[sid], truth[sid])
            else:
                assert got[sid] == pytest.approx(truth[sid], rel=1e-6, abs=1e-9), sid
        seen.append(got)
    assert seen[0] != seen[1]


def test_numbers_for_people_and_the_stale_note_names_only_what_changed():
    from ui.kit.i18n import Text
    from ui.kit.predict import _param_text, human

    assert human(17400.0) == "17400" and human(0.0123) == "0.0123" and human(3.2e-7) == "3.2 × 10⁻⁷"
    assert "e+" not in human(1.74e4) and "e" not in human(1e16)
    t = Text("two_point", "en")
    snap = (("beta", 1.0), ("theta0", 0.5), ("horizon", 5.0))
    text = _param_text(t, snap, {"theta0"})
    assert text.count("=") == 1 and "0.5" in text and not text.startswith("theta0")


def test_every_covered_text_exists_in_both_languages():
    """A step's ``covers`` name page texts that exist (in zh and en), so a renamed section cannot
    silently stop being covered."""
    from tests.conftest import STEMS, page_schema

    n = 0
    for stem in STEMS:
        for step in page_schema(stem).steps:
            for key in step.covers:
                for lang in ("en", "zh"):
                    assert _cover_snippets(lang, stem, key), (stem, step.id, key, lang)
                n += 1
    assert n >= 20


def test_text_covered_by_section_and_key(monkeypatch):
    import streamlit as st

    from ui.kit import cover

    state: dict = {}
    monkeypatch.setattr(st, "session_state", state)
    cover.set_cover("p", {"notice", "tail.numbers"})
    assert cover.text_covered("notice") and cover.text_covered("notice.body")
    assert cover.text_covered("tail.numbers") and not cover.text_covered("tail.body")
    assert not cover.text_covered("notices.body") and not cover.text_covered("statement")
    cover.set_cover(None, {"notice"})
    assert not cover.text_covered("notice.body")
