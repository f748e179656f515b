"""Class sessions: the store (in memory and in a real redis-server started here), 30 simulated
followers (push latency, every answer counted), and the sidebar flow in AppTest."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

from tests._instructor import router_only, teacher_with_class  # noqa: F401 - fixture
from tests.conftest import app_test
from ui import class_store as cs
from ui import classroom, instructor

N_STUDENTS = 30


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A private redis-server on a Unix socket (no port, no persistence), stopped by pid."""
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is not installed: run scripts/ensure_redis.sh (make test does)")
    d = tmp_path_factory.mktemp("redis")
    sock = d / "redis.sock"
    proc = subprocess.Popen([exe, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                             "--save", "", "--appendonly", "no", "--dir", str(d)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() - t0 > 10:
                pytest.fail("redis-server did not start")
            time.sleep(0.02)
        yield f"unix://{sock}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        return cs.MemoryStore()
    s = cs.RedisStore(request.getfixturevalue("redis_url"))
    s.r.flushdb()
    return s


def test_codes_and_unknown_classes(store):
    code = store.create()
    assert cs.valid_code(code) and store.exists(code)
    assert not cs.valid_code("abc") and not cs.valid_code("ABCDE0") and not cs.valid_code(None)
    assert store.current("ZZZZZZ") == (0, None, 0.0) and store.question("ZZZZZZ") is None
    with pytest.raises(KeyError):
        store.push("ZZZZZZ", {"page": "two_point", "query": {}})
    store.close(code)
    assert not store.exists(code)


def test_thirty_followers_push_latency_and_answers(store, capsys):
    """30 followers poll the store every POLL_S seconds, as the sidebar fragment does; the
    instructor pushes 3 views; every follower sees every push, within 2 s (p95)."""
    code = store.create()
    pushes = 3
    seen: list[list[tuple[int, float]]] = [[] for _ in range(N_STUDENTS)]
    stop = threading.Event()
    rng = np.random.default_rng(0)
    phases = rng.uniform(0, classroom.POLL_S, N_STUDENTS)  # sessions do not poll in step

    def follower(i):
        time.sleep(phases[i])
        last = 0
        while not stop.is_set():
            v, view, _ = store.current(code)
            if v > last:
                seen[i].append((v, time.time()))
                assert view["page"] == "two_point" and view["query"]["beta"] == str(v)
                last = v
            stop.wait(classroom.POLL_S)

    threads = [threading.Thread(target=follower, args=(i,), daemon=True) for i in range(N_STUDENTS)]
    for th in threads:
        th.start()
    time.sleep(classroom.POLL_S)
    pushed_at = {}
    for k in range(1, pushes + 1):
        v = store.push(code, {"page": "two_point", "query": {"beta": str(k)}})
        pushed_at[v] = store.current(code)[2]
        time.sleep(classroom.POLL_S * 1.6)
    stop.set()
    for th in threads:
        th.join(5)
    lat = np.array([t - pushed_at[v] for s in seen for v, t in s])
    assert all([v for v, _ in s] == list(range(1, pushes + 1)) for s in seen), "a follower missed a push"
    assert lat.size == N_STUDENTS * pushes
    p50, p95 = np.percentile(lat, [50, 95])
    with capsys.disabled():
        print(f"\n[{type(store).__name__}] {N_STUDENTS} followers x {pushes} pushes: store latency "
              f"p50={p50:.3f}s p95={p95:.3f}s max={lat.max():.3f}s (poll every {classroom.POLL_S}s)")
    assert p95 < 2.0

    # live answers: 30 sessions answer at once; one changes its mind; all counted once
    qid = store.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    values = rng.normal(1.0, 0.2, N_STUDENTS)
    ths = [threading.Thread(target=store.answer, args=(code, qid, f"s{i}", float(values[i])))
           for i in range(N_STUDENTS)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    store.answer(code, qid, "s0", 2.0)
    got = store.answers(code, qid)
    assert len(got) == N_STUDENTS
    assert sorted(got) == sorted([2.0, *map(float, values[1:])])
    h = classroom._histogram(got, {"kind": "number"})
    assert sum(h["count"]) == N_STUDENTS
    q2 = store.ask(code, {"stem": "two_point", "q": 2, "kind": "choice", "options": ["A", "B", "C"]})
    for i in range(N_STUDENTS):
        store.answer(code, q2, f"s{i}", "ABC"[i % 3])
    h = classroom._histogram(store.answers(code, q2), store.question(code))
    assert h == {"answer": ["A", "B", "C"], "count": [10, 10, 10]}
    assert store.revealed(code, qid) is None
    store.reveal(code, qid, 1.0)
    assert store.revealed(code, qid) == 1.0 and store.answers(code, qid)  # the first question's answers stay
    with capsys.disabled():
        print(f"[{type(store).__name__}] answers counted: {len(got)}/{N_STUDENTS} (number), "
              f"{sum(h['count'])}/{N_STUDENTS} (choice)")


def test_redis_class_survives_a_replica(redis_url):
    """Two replicas share the class; one is gone (its client dropped): nothing is lost."""
    a, b = cs.RedisStore(redis_url), cs.RedisStore(redis_url)
    a.r.flushdb()
    code = a.create()
    qid = a.ask(code, {"stem": "two_point", "q": 1, "kind": "number", "options": []})
    for i in range(N_STUDENTS):
        (a if i % 2 else b).answer(code, qid, f"s{i}", float(i))
    a.push(code, {"page": "hemisphere", "query": {"beta": "3"}})
    a.r.close()
    del a
    c = cs.RedisStore(redis_url)
    assert len(c.answers(code, qid)) == N_STUDENTS
    assert c.current(code)[1] == {"page": "hemisphere", "query": {"beta": "3"}}
    assert c.r.ttl(f"cls:{code}") > 3600


def test_sidebar_flow_push_follow_answer_reveal(monkeypatch, router_only):  # noqa: F811
    teacher, code = teacher_with_class(monkeypatch)
    assert cs.valid_code(code)
    assert any(f"?class={code}" in c.value for c in teacher.code)
    assert teacher.get("imgs") or teacher.get("image")

    student = app_test("home", {"class": code, "lang": "zh"})
    assert not student.exception
    assert any(code in s.value and "跟随课堂" in s.value for s in student.success)

    teacher.slider(key="beta").set_value(2.0).run()
    teacher.button(key="_class_push").click().run()
    t0 = time.time()
    student.run()  # the fragment's next tick
    assert student.session_state["beta"] == 2.0
    assert student.session_state["lang"] == "zh"
    assert any("两点" in t.value or "SA" in t.value for t in student.title)
    print(f"\nAppTest follower applied the push in {time.time() - t0:.2f} s (one page run)")

    student.button(key="_class_stop").click().run()
    teacher.slider(key="beta").set_value(3.0).run()
    teacher.button(key="_class_push").click().run()
    student.run()
    assert student.session_state["beta"] == 2.0  # not following: stays
    student.button(key="_class_refollow").click().run()
    student.run()
    assert student.session_state["beta"] == 3.0  # back: jumps to the latest push

    teacher.button(key="_class_ask").click().run()
    student.run()
    qid = cs.get_store().question(code)["id"]
    student.number_input(key=f"_class_ans_{qid}").set_value(0.5)
    student.button(key=f"_class_send_{qid}").click().run()
    assert cs.get_store().answers(code, qid) == [0.5]
    teacher.run()
    assert any("1" in c.value and ("answers" in c.value) for c in teacher.caption)
    teacher.number_input(key=f"_class_rv_{qid}").set_value(0.75).run()
    teacher.button(key=f"_class_reveal_{qid}").click().run()
    student.run()
    assert any(c.value == "0.75" for c in student.code)
    teacher.button(key="_class_close").click().run()
    assert not cs.get_store().exists(code)
    student.run()
    assert any("closed" in i.value or "结束" in i.value for i in student.info)
    student.run()
    assert [w for w in student.text_input if w.key == "_class_join_code"]  # can join another class


def test_nothing_of_classes_without_instructor_mode(monkeypatch):
    monkeypatch.delenv(instructor.KEY_ENV, raising=False)
    at = app_test("home", {"class": "ABCDEF"})
    assert not at.exception
    assert not [w for w in at.text_input if w.key == "_class_join_code"]
    assert not at.success and not at.warning


def test_ensure_redis_script_is_there():
    path = os.path.join(os.path.dirname(__file__), "..", "scripts", "ensure_redis.sh")
    assert os.access(path, os.X_OK)
