"""Class state that must survive a replica: the cheap stamp the students poll, answers counted once
per student (idempotent, keyed by an id from the browser's cookie), the class code kept in the
URL, and a second instructor session taking a class over. Memory store and a real redis-server
(started by the fixture of tests/test_instructor_class.py; scripts/ensure_redis.sh installs it)."""

from __future__ import annotations

import threading
import time

import pytest

from harness.server import redis_argv
from tests._instructor import router_only, signed_in, teacher_with_class  # noqa: F401 - fixture
from tests.conftest import app_test
from tests.test_instructor_class import redis_url, store  # noqa: F401 - fixtures
from ui.teaching import class_store as cs
from ui.teaching import responses

N = 30


def test_stamp_changes_with_everything_a_student_sees(store):  # noqa: F811
    code = store.create()
    s0 = store.stamp(code)
    assert s0 == (0, 0, 0)
    assert store.stamp(code) == s0  # reading does not change it
    store.push(code, {"page": "two_point", "query": {"beta": "2.0"}})
    s1 = store.stamp(code)
    assert s1 == (1, 0, 0)
    qid = store.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    s2 = store.stamp(code)
    assert s2 == (1, qid, 0)
    store.answer(code, qid, "a", 1.0)
    assert store.stamp(code) == s2  # answers are the instructor's business: students do not rerun
    store.reveal(code, qid, 1.5)
    assert store.stamp(code) == (1, qid, 1)
    store.reveal(code, qid, 1.25)  # a corrected reveal is a change too
    assert store.stamp(code) == (1, qid, 2) and store.revealed(code, qid) == 1.25
    store.close(code)
    assert store.stamp(code) is None and store.stamp("ZZZZZZ") is None
    with pytest.raises(KeyError):
        store.answer(code, qid, "a", 2.0)  # no answers into a closed class
    with pytest.raises(KeyError):
        store.reveal(code, qid, 2.0)


def test_stamp_is_one_cheap_read(store):  # noqa: F811
    """The students' poll reads only the stamp: well under a millisecond per read."""
    code = store.create()
    store.push(code, {"page": "two_point", "query": {"beta": "2.0"}})
    store.stamp(code)
    n = 300
    t0 = time.process_time()
    for _ in range(n):
        store.stamp(code)
    per = (time.process_time() - t0) / n
    print(f"\n[{type(store).__name__}] stamp: {1e6 * per:.0f} us CPU per read")
    assert per < 1e-3


def test_answers_are_idempotent_per_student(store):  # noqa: F811
    """30 students answer at once, each sends 3 times (double clicks, a resend after a reconnect):
    exactly one answer each, the last one; answered() tells a student's box it was sent."""
    code = store.create()
    qid = store.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    ids = [responses.answer_id(code, {"st_replica": f"cookie{i}"}) for i in range(N)]
    assert len(set(ids)) == N

    def student(i):
        for k in range(3):
            store.answer(code, qid, ids[i], float(i) + 0.1 * k)

    ths = [threading.Thread(target=student, args=(i,)) for i in range(N)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    got = store.answers(code, qid)
    assert len(got) == N
    assert sorted(got) == pytest.approx([i + 0.2 for i in range(N)])
    assert store.answered(code, qid, ids[3]) == pytest.approx(3.2)
    assert store.answered(code, qid, "nobody") is None
    assert store.answered(code, qid + 1, ids[3]) is None


def test_answer_id_follows_the_browser_not_the_session():
    c = "ABCDEF"
    a = responses.answer_id(c, {"st_replica": "r1", "_streamlit_xsrf": "x1"})
    assert a == responses.answer_id(c, {"st_replica": "r1", "_streamlit_xsrf": "x2"})  # nginx cookie first
    assert a != responses.answer_id(c, {"st_replica": "r2"})
    assert a != responses.answer_id("GHJKLM", {"st_replica": "r1"})  # not linkable across classes
    assert responses.answer_id(c, {"_streamlit_xsrf": "x1"}) == responses.answer_id(c, {"_streamlit_xsrf": "x1"})
    assert responses.answer_id(c, {}) is None and responses.answer_id(c, None) is None
    assert "r1" not in a and len(a) == 16


def test_redis_answers_survive_a_replica_and_are_not_doubled(redis_url):  # noqa: F811
    """Replica A takes half the answers and dies; its students reconnect to B (same cookie) and
    send again: still one answer each."""
    a, b = cs.RedisStore(redis_url), cs.RedisStore(redis_url)
    a.r.flushdb()
    code = a.create()
    qid = a.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    ids = [responses.answer_id(code, {"st_replica": f"c{i}"}) for i in range(N)]
    for i in range(N):
        (a if i % 2 else b).answer(code, qid, ids[i], float(i))
    a.r.close()
    del a
    for i in range(1, N, 2):  # A's students, now on B
        assert b.answered(code, qid, ids[i]) == float(i)
        b.answer(code, qid, ids[i], float(i))
    assert sorted(b.answers(code, qid)) == [float(i) for i in range(N)]
    assert b.stamp(code) == (0, qid, 0)


def test_student_url_keeps_the_class_and_a_second_instructor_takes_over(monkeypatch, router_only):  # noqa: F811
    teacher, code = teacher_with_class(monkeypatch)

    student = app_test("two_point", {"class": code, "lang": "en"})
    assert not student.exception
    assert student.query_params.get("class") == [code] or student.query_params.get("class") == code

    # the instructor's session is gone (its replica died): a new one continues the class
    other = signed_in("two_point")
    other.text_input(key="_class_resume_code").set_value(code.lower()).run()
    other.button(key="_class_resume").click().run()
    assert other.session_state["_class_teach"] == code
    other.slider(key="beta").set_value(2.5).run()
    other.button(key="_class_push").click().run()
    student.run()  # the poll's next tick
    assert student.session_state["beta"] == 2.5
    assert code in str(student.query_params.get("class"))  # still in the class after the push

    bad = signed_in("home")
    bad.text_input(key="_class_resume_code").set_value("ZZZZZZ").run()
    bad.button(key="_class_resume").click().run()
    assert "_class_teach" not in bad.session_state
    assert bad.error


def test_released_pages_in_the_store(store):  # noqa: F811
    """The answers switch is a set of pages in the class store (not per class): on, off, idempotent."""
    assert store.released_pages() == set()
    store.set_released("two_point", True)
    store.set_released("two_point", True)
    store.set_released("block", True)
    assert store.released_pages() == {"two_point", "block"}
    store.set_released("two_point", False)
    store.set_released("nonnormal", False)  # withdrawing what was never released: nothing happens
    assert store.released_pages() == {"block"}


def test_answers_released_on_one_replica_are_seen_on_another(redis_url, monkeypatch):  # noqa: F811
    """Two replicas share Redis: the instructor releases on A, a student on B sees it within
    RECHECK_S; withdrawn on B, A follows. A replica that loses Redis keeps the last state it read."""
    from ui.teaching import answers as ans

    monkeypatch.setenv(cs.REDIS_ENV, redis_url)
    a, b = cs.RedisStore(redis_url), cs.RedisStore(redis_url)
    a.r.flushdb()
    # replica A: its own process state; it releases two_point
    monkeypatch.setattr(cs, "_store", a)
    monkeypatch.setattr(cs, "_store_key", redis_url)
    monkeypatch.setattr(ans, "_seen", {"at": -1e9, "pages": frozenset()})
    assert not ans.released("two_point")
    ans.release("two_point", True)
    assert ans.released("two_point")
    # replica B: another process (fresh copy), same Redis
    monkeypatch.setattr(cs, "_store", b)
    monkeypatch.setattr(ans, "_seen", {"at": -1e9, "pages": frozenset()})
    assert ans.released("two_point") and not ans.released("block")
    b.set_released("two_point", False)  # withdrawn from elsewhere: B sees it after RECHECK_S
    assert ans.released("two_point"), "read at most once a second"
    monkeypatch.setattr(ans, "RECHECK_S", 0.0)
    assert not ans.released("two_point")
    # Redis gone: the last state read stands, no exception reaches the page
    b.set_released("block", True)
    assert ans.released("block")

    class Down(cs.RedisStore):
        def __init__(self):
            pass

        def released_pages(self):
            raise ConnectionError("redis is down")

    monkeypatch.setattr(cs, "_store", Down())
    assert ans.released("block") and not ans.released("two_point")


# --------------------------------------------------------------------------- Redis stopped mid-class
def _redis(d, sock):
    """A redis-server with an append-only file in ``d`` (as compose and k8s run it), on a socket."""
    import shutil
    import subprocess

    proc = subprocess.Popen(
        redis_argv(shutil.which("redis-server"), sock, d, append_only=True),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    t0 = time.monotonic()
    while True:
        try:
            if cs.RedisStore(f"unix://{sock}").r.ping():
                return proc
        except cs.STORE_ERRORS:
            pass
        if proc.poll() is not None or time.monotonic() - t0 > 10:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)


def _words(at) -> str:
    return "\n".join(
        x.value for kind in ("warning", "info", "caption", "markdown", "success") for x in getattr(at, kind)
    )


def test_redis_stopped_and_restarted_mid_class(tmp_path, monkeypatch, router_only):  # noqa: F811
    """The store stops: the student and the instructor read a notice in words (no exception, no
    error box); an answer sent meanwhile is kept and sent once the store is back; the class (kept
    in the append-only file) goes on; the answer is counted once."""
    from tests._instructor import KEY
    from ui.teaching import instructor
    from ui.kit.predict import live_question
    from pages.two_point.predict import STEPS

    sock = tmp_path / "r.sock"
    url = f"unix://{sock}"
    proc = _redis(tmp_path, sock)
    try:
        monkeypatch.setenv(instructor.KEY_ENV, KEY)
        monkeypatch.setenv(cs.REDIS_ENV, url)
        store = cs.get_store()
        code = store.create()
        store.push(code, {"page": "two_point", "query": {"beta": "2.0"}})
        step = next(x for x in STEPS if x.id == "sa_end")
        qid = store.ask(code, live_question(step, "two_point", {"beta": 2.0, "theta0": 1.0, "horizon": 5.0, "dt": 0.1}))
        student = app_test("two_point", {"class": code, "lang": "en"})
        student.run()
        assert not student.exception and not student.error
        teacher = signed_in("two_point")
        teacher.session_state["_class_teach"] = code
        teacher.run()
        assert not teacher.exception

        proc.terminate()
        proc.wait(timeout=10)
        student.number_input(key=f"_class_ans_{qid}").set_value(0.5)
        student.button(key=f"_class_send_{qid}").click().run()
        assert not student.exception and not student.error, [e.value for e in student.error]
        words = _words(student)
        assert "cannot be reached" in words and "this page still works" in words, words
        assert student.session_state["_class_pending"] == {(code, qid): 0.5}
        teacher.run()
        assert not teacher.exception and not teacher.error
        assert "cannot be reached" in _words(teacher)

        proc = _redis(tmp_path, sock)  # the same directory: the append-only file brings the class back
        assert cs.get_store().exists(code)
        for _ in range(3):  # the first call on a dropped connection may fail once: the poll retries
            student.run()
            assert not student.exception and not student.error
            if not student.session_state["_class_pending"]:
                break
        assert cs.get_store().answers(code, qid) == [0.5]
        student.run()
        assert cs.get_store().answers(code, qid) == [0.5]  # counted once
        assert "cannot be reached" not in _words(student)
        teacher.run()
        assert not teacher.exception and any("1 answers" in c.value for c in teacher.caption)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_lost_class_is_said_to_student_and_instructor(monkeypatch, router_only):  # noqa: F811
    """A class the store no longer knows (not closed by its instructor): both are told it is gone."""
    teacher, code = teacher_with_class(monkeypatch)
    student = app_test("two_point", {"class": code, "lang": "zh"})
    assert code in "\n".join(m.value for m in student.markdown)
    live_store = cs.get_store()  # the app's store (not the ``store`` fixture imported above)
    live_store._classes.pop(code)  # what a restart without persistence did
    student.run()
    assert any(code in i.value and "已不存在" in i.value for i in student.info)
    student.run()  # and on the runs after it, in the main area, until the student joins a class
    assert any(code in i.value and "已不存在" in i.value for i in student.main.info)
    teacher.run()
    assert any(code in w.value and "gone" in w.value for w in teacher.warning)
