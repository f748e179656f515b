"""ui/teaching/responses.py: a class's answers, pure. Imported without Streamlit (checked in a
fresh interpreter); answers parsed, judged, counted into bars and written as CSV, each against
values worked out by hand."""

from __future__ import annotations

import csv
import hashlib
import io
import math
import subprocess
import sys
import textwrap
from pathlib import Path

from ui.teaching import responses as r

ROOT = Path(__file__).resolve().parents[1]
NUM = {"kind": "number", "rtol": 0.1, "atol": 0.0}
CHOICE = {"kind": "choice", "options": ["A", "B"]}


def test_imported_and_used_without_streamlit():
    code = textwrap.dedent("""
        import sys
        from ui.teaching import responses as r
        assert "streamlit" not in sys.modules, "import"
        assert r.parse_answer({"kind": "number"}, "2.5") == (2.5, None)
        assert r.histogram([1.0, 1.0, 2.0], {"kind": "number"}) == {"answer": ["1", "2"], "count": [2, 1]}
        assert r.answer_id("ABCDEF", {"st_replica": "r1"})
        assert r.q_prompt({"prompt": "p"}, "en") == "p"
        q = {"kind": "number", "truth": 2.0, "rtol": 0.05, "atol": 0.0, "digits": 3}
        assert r.verdict(q, 2.05, 2.0) is True and r.verdict(q, 2.2, 2.0) is False
        assert r.q_value(q, "en", 17400.0).startswith("17400")
        assert "streamlit" not in sys.modules, "use"
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_parse_answer():
    assert r.parse_answer(NUM, "3.5") == (3.5, None)
    assert r.parse_answer(NUM, 7) == (7.0, None)
    assert r.parse_answer(NUM, None) == (None, "answer_missing")
    assert r.parse_answer(NUM, "   ") == (None, "answer_missing")
    assert r.parse_answer(NUM, "abc") == (None, "answer_bad")
    assert r.parse_answer(NUM, "nan") == (None, "answer_bad")
    assert r.parse_answer(NUM, "-inf") == (None, "answer_bad")
    assert r.parse_answer(CHOICE, "B") == ("B", None)
    assert r.parse_answer(CHOICE, "C") == (None, "answer_bad")


def test_verdict():
    assert r.verdict(NUM, 1.05, 1.0) is True  # |0.05| <= 0.1 * 1
    assert r.verdict(NUM, 1.2, 1.0) is False  # |0.2| > 0.1
    assert r.verdict(NUM, -1.0, 0.0) is False  # y = 0, atol 0: only 0 is right
    assert r.verdict(NUM, 0.0, 0.0) is True
    assert r.verdict({"kind": "number"}, 104.0, 100.0) is True  # ADHOC_RTOL = 0.05: 4 <= 5
    assert r.verdict({"kind": "number"}, 106.0, 100.0) is False  # 6 > 5
    assert r.verdict({"kind": "number", "rtol": 0, "atol": 0.5}, 2.4, 2.0) is True
    assert r.verdict(NUM, None, 1.0) is None and r.verdict(NUM, 1.0, None) is None
    assert r.verdict({"kind": "number", "rtol": "junk"}, 1.0, 1.0) is None
    assert r.verdict(CHOICE, "A", "A") is True and r.verdict(CHOICE, "A", "B") is False


def test_histogram_few_values_one_bar_each():
    assert r.histogram(["A", "B", "A", "C"], CHOICE) == {"answer": ["A", "B"], "count": [2, 1]}
    assert r.histogram([], NUM) == {"answer": [], "count": []}
    # only finite numbers count: not a string, NaN, infinity or a bool
    got = r.histogram([1, 2, 2, 3.0, "x", math.nan, math.inf, True], NUM)
    assert got == {"answer": ["1", "2", "3"], "count": [1, 2, 1]}


def test_histogram_bins_over_the_whole_range():
    # 20 values 0..19: more than bins + 2 = 10 distinct, no far outlier -> 8 bins of 19/8 over [0, 19]
    # edges 0, 2.375, 4.75, 7.125, 9.5, 11.875, 14.25, 16.625, 19 (the last bin holds 19)
    h = r.histogram(list(range(20)), NUM)
    assert h["count"] == [3, 2, 3, 2, 2, 3, 2, 3]
    assert h["answer"][0] == "0 – 2.375" and h["answer"][2] == "4.75 – 7.125" and len(h["answer"]) == 8


def test_histogram_far_outlier_gets_its_own_bar():
    # 0..19 and 1e16 (21 values): the middle 90 % is x[1] = 1 .. x[19] = 19, edges 1 + 2.25 k;
    # 0 below, 1e16 above
    h = r.histogram([*range(20), 1e16], NUM)
    assert h["count"] == [1, 3, 2, 2, 2, 3, 2, 2, 3, 1]
    assert h["answer"][0] == "< 1" and h["answer"][1] == "1 – 3.25" and h["answer"][-1] == "> 19"


class _Store:
    """The four reads results_csv makes, over fixed questions and answers."""

    def __init__(self, qs, answers, revealed):
        self.qs, self.ans, self.rev = qs, answers, revealed

    def questions(self, code):
        assert code == "ABCDEF"
        return self.qs

    def answers(self, code, qid):
        return self.ans.get(qid, [])

    def revealed(self, code, qid):
        return self.rev.get(qid)


def test_results_csv():
    """As a spreadsheet opens it: a byte-order mark, one column per parameter (their union, in order of
    appearance), when each question was asked (UTC), the prompt and choice labels in the teacher's
    language."""
    q1 = {
        "id": 1,
        "stem": "two_point",
        "kind": "number",
        "rtol": 0.1,
        "truth": 2.0,
        "asked_at": 1765000000.0,
        "prompt": {"en": "How far?", "zh": "多远？"},
        "values": {"b": 1, "a": 2},
    }
    q2 = {
        "id": 2,
        "kind": "choice",
        "options": ["one", "spread"],
        "truth": "one",
        "prompt": "ad hoc <b>",
        "values": {"a": 3, "c": 0.5},
        "labels": {"en": {"one": "One point", "spread": "Spread out"}, "zh": {"one": "一个点", "spread": "散开"}},
    }
    store = _Store([q1, q2], {1: [2.1, 3.0], 2: ["spread"]}, {2: "one"})  # q1 not revealed: its truth
    text = r.results_csv(store, "ABCDEF", "zh")
    assert text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text[1:])))
    assert rows == [
        ["question", "asked_utc", "page", "prompt", "b", "a", "c", "exact_value", "answer_no", "answer", "right"],
        ["1", "2025-12-06 05:46:40", "two_point", "多远？", "1", "2", "", "2.0", "1", "2.1", "1"],  # |0.1| <= 0.2
        ["1", "2025-12-06 05:46:40", "two_point", "多远？", "1", "2", "", "2.0", "2", "3.0", "0"],  # |1.0| > 0.2
        ["2", "", "", "ad hoc <b>", "", "3", "0.5", "一个点", "1", "散开", "0"],
    ]
    assert list(csv.reader(io.StringIO(r.results_csv(store, "ABCDEF")[1:])))[3][7] == "One point"


def test_answer_id_prompt_and_value():
    assert r.xsrf_token("2|01020304|10203040|1700000000") == "11223344"  # 10^01 20^02 30^03 40^04
    assert r.xsrf_token("plain") == "plain"
    want = hashlib.sha256(b"ABCDEF|r1").hexdigest()[:16]
    assert r.answer_id("ABCDEF", {"st_replica": "r1", "_streamlit_xsrf": "x"}) == want
    assert (
        r.answer_id("ABCDEF", {"_streamlit_xsrf": "2|01020304|10203040|1"})
        == hashlib.sha256(b"ABCDEF|11223344").hexdigest()[:16]
    )
    assert r.answer_id("ABCDEF", None) is None
    assert r.q_prompt({"prompt": {"en": "E", "zh": ""}}, "zh") == "E"
    assert r.q_prompt({"prompt": None}, "en") == ""
    assert r.q_value(NUM, "en", None) == "—"
    assert r.q_value({"kind": "choice", "labels": {"en": {"A": "Apple"}}}, "en", "A") == "Apple"
    assert r.q_value({"kind": "choice", "labels": {}}, "en", "B") == "B"
    assert r.q_value({"kind": "number", "unit": {"en": "km"}, "digits": 4}, "en", 17400.0) == "17400 km"


def test_typed_choices_split_on_any_comma():
    """A Chinese input method types full-width commas: they separate choices as ASCII ones do."""
    assert r.split_options("更快，更慢，差不多") == ["更快", "更慢", "差不多"]
    assert r.split_options("A, B ,C") == ["A", "B", "C"]
    assert r.split_options("一个点、散开；  两个簇\n一个点") == ["一个点", "散开", "两个簇"]
    assert r.split_options("only one") == ["only one"] and r.split_options("，，") == []
    assert r.split_options("x" * 100 + ",b", max_len=10) == ["x" * 10, "b"]
    assert len(r.split_options(",".join(str(i) for i in range(20)))) == 8


def test_numbers_read_without_a_missing_unit_and_the_tolerance_as_judged():
    """Class trial, item 9: a page step's number is followed by its unit symbol, or by nothing when it
    has none (before: "1.905 无单位", the answer box's description after the number); the tolerance
    is said as :func:`verdict` judges it."""
    from ui.teaching.responses import q_value, tolerance, verdict

    bank = {
        "kind": "number",
        "digits": 4,
        "rtol": 0.25,
        "atol": 0.0,
        "unit": {"en": "no unit", "zh": "无单位"},
        "sym": {"en": "", "zh": ""},
    }
    assert q_value(bank, "zh", 1.90512) == "1.905" and q_value(bank, "en", 1.90512) == "1.905"
    rad = {**bank, "unit": {"en": "arc length, rad", "zh": "弧长，rad"}, "sym": {"en": "rad", "zh": "rad"}}
    assert q_value(rad, "zh", 0.5) == "0.5 rad"
    own = {"kind": "number", "unit": {"en": "m", "zh": "米"}}  # a lesson's own question: its unit
    assert q_value(own, "zh", 2.0) == "2 米"
    assert tolerance(bank, "zh") == "25%" and verdict(bank, 1.25, 1.0) and not verdict(bank, 1.26, 1.0)
    clusters = {"kind": "number", "rtol": 0.0, "atol": 0.5, "sym": {"en": "", "zh": ""}}
    assert tolerance(clusters, "en") == "0.5" and verdict(clusters, 3.4, 3.0) and not verdict(clusters, 3.6, 3.0)
