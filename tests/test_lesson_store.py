"""Lesson runs in the store (ui/teaching/lesson_store.py), in memory and in a real redis-server
(the fixture of tests/test_instructor_class.py): the run's fields and its stamp, nicknames cleaned,
positions and answer records per participant and step (tries counted, the latest kept), snapshots,
a second replica reading the same run, expiry as classes expire, tokens not guessable."""

from __future__ import annotations

import re
import threading

import pytest

from tests.test_instructor_class import redis_url  # noqa: F401 - fixture
from ui.teaching import class_store as cs
from ui.teaching import lesson_store as ls


@pytest.fixture(params=["memory", "redis"])
def lessons(request):
    if request.param == "memory":
        return ls.MemoryLessons()
    store = cs.RedisStore(request.getfixturevalue("redis_url"))
    store.r.flushdb()
    return ls.RedisLessons(store.r)


def test_a_run_and_its_stamp(lessons):
    assert lessons.run("nosuchrun") is None and lessons.stamp("nosuchrun") is None
    with pytest.raises(KeyError):
        lessons.update("nosuchrun", step=1)
    rid = ls.new_run_id()
    lessons.start(rid, "first_lesson", "self", owner="teacher-a")
    r = lessons.run(rid)
    assert (r["lesson"], r["mode"], r["step"], r["pace"], r["paused"], r["names"], r["snap"]) == (
        "first_lesson",
        "self",
        0,
        0,
        False,
        False,
        None,
    )
    s0 = lessons.stamp(rid)
    lessons.update(rid, step=2, pace=3)
    s1 = lessons.stamp(rid)
    assert s1 == s0 + 1 and lessons.run(rid)["step"] == 2 and lessons.run(rid)["pace"] == 3
    lessons.update(rid, paused=True)
    assert lessons.run(rid)["paused"] is True and lessons.stamp(rid) == s1 + 1
    lessons.update(rid, paused=False, names=True)
    assert lessons.run(rid)["paused"] is False and lessons.run(rid)["names"] is True
    lessons.update(rid, step=-4)  # never below the first step
    assert lessons.run(rid)["step"] == 0
    with pytest.raises(ValueError):
        lessons.update(rid, lesson="other")  # the lesson of a run is fixed
    with pytest.raises(ValueError):
        lessons.start("x" * 8, "l", "sometimes")
    # answers do not change what students see: no stamp change
    s2 = lessons.stamp(rid)
    lessons.record(rid, 0, "who1", 1.5, False)
    lessons.move(rid, "who1", 1)
    assert lessons.stamp(rid) == s2
    lessons.show(rid, 0, ["<b>x</b>", "y"])
    assert lessons.run(rid)["snap"] == {"step": 0, "items": ["<b>x</b>", "y"]} and lessons.stamp(rid) == s2 + 1
    lessons.show(rid, None, [])
    assert lessons.run(rid)["snap"] is None
    assert lessons.run(rid)["revealed"] == []
    lessons.update(rid, revealed=[3, 1, 3])
    assert lessons.run(rid)["revealed"] == [1, 3]
    lessons.end(rid)
    assert lessons.run(rid) is None and lessons.stamp(rid) is None and lessons.records(rid) == {}


def test_nicknames_positions_and_records(lessons):
    rid = ls.new_run_id()
    lessons.start(rid, "l1", "live")
    lessons.set_nick(rid, "a", "  Li   Wei <script>alert(1)</script> " + "x" * 40)
    lessons.set_nick(rid, "b", "")
    lessons.set_nick(rid, "c", "小明")
    nicks = lessons.nicks(rid)
    assert set(nicks) == {"a", "c"}  # no nickname: anonymous
    assert set(lessons.nicks(rid, everyone=True)) == {"a", "b", "c"}  # b was asked and stayed anonymous
    assert nicks["c"] == "小明"
    assert "<" not in nicks["a"] and ">" not in nicks["a"] and len(nicks["a"]) <= ls.MAX_NICK
    assert nicks["a"].startswith("Li Wei script")
    lessons.move(rid, "a", 0)
    lessons.move(rid, "a", 3)
    lessons.move(rid, "c", 1)
    assert lessons.positions(rid) == {"a": 3, "c": 1}
    first = lessons.record(rid, 2, "a", 1.0, False)
    second = lessons.record(rid, 2, "a", 2.0, True)
    assert (first["tries"], second["tries"], second["value"], second["right"]) == (1, 2, 2.0, True)
    lessons.record(rid, 2, "c", "因为归一化", None)
    lessons.record(rid, 5, "c", "faster", True)
    rec = lessons.records(rid)
    assert set(rec) == {2, 5} and set(rec[2]) == {"a", "c"}
    assert rec[2]["c"]["value"] == "因为归一化" and rec[2]["c"]["right"] is None
    assert lessons.mine(rid, 2, "a")["value"] == 2.0 and lessons.mine(rid, 3, "a") is None
    for bad in (float("nan"), float("inf"), True, None, "x" * (ls.MAX_TEXT + 1), [1]):
        with pytest.raises(ValueError):
            lessons.record(rid, 1, "a", bad, None)
    with pytest.raises(KeyError):
        lessons.record("nosuchrun", 1, "a", 1.0, None)


def test_thirty_students_answer_at_once(lessons):
    """30 self-paced students answer the same step at once, each twice: one record each, 2 tries."""
    rid = ls.new_run_id()
    lessons.start(rid, "l1", "self")
    toks = [ls.new_token() for _ in range(30)]

    def student(i):
        lessons.record(rid, 1, toks[i], float(i), False)
        lessons.record(rid, 1, toks[i], float(i) + 0.5, True)

    ths = [threading.Thread(target=student, args=(i,)) for i in range(30)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    rec = lessons.records(rid)[1]
    assert len(rec) == 30
    assert sorted(r["value"] for r in rec.values()) == pytest.approx([i + 0.5 for i in range(30)])
    assert {r["tries"] for r in rec.values()} == {2}


def test_owner_lists_own_runs_newest_first(lessons):
    a, b, c = (ls.new_run_id() for _ in range(3))
    lessons.start(a, "l1", "self", owner="t1")
    lessons.start(b, "l2", "self", owner="t1")
    lessons.start(c, "l1", "self", owner="t2")
    assert lessons.runs_of("t1") == [b, a] and lessons.runs_of("t2") == [c] and lessons.runs_of("") == []
    lessons.end(b)
    assert lessons.runs_of("t1") == [a]


def test_ids_and_tokens():
    ids = {ls.new_run_id() for _ in range(2000)}
    toks = {ls.new_token() for _ in range(2000)}
    assert len(ids) == 2000 and len(toks) == 2000
    assert all(ls.valid_run_id(i) for i in ids) and all(ls.valid_token(t) for t in toks)
    assert all(len(t) >= 22 for t in toks)  # 128 random bits
    for bad in ("", "short", "a/b" * 5, "../../etc", None, 5, "x" * 80, "tok en with spaces"):
        assert not ls.valid_run_id(bad) and not ls.valid_token(bad)
    assert ls.valid_run_id("ABCDEF")  # a class code is a live run's id


def test_redis_keys_expire_and_a_second_replica_reads_the_run(redis_url):  # noqa: F811
    one = ls.RedisLessons(cs.RedisStore(redis_url).r)
    two = ls.RedisLessons(cs.RedisStore(redis_url).r)  # another replica: its own connection
    one.r.flushdb()
    rid = ls.new_run_id()
    one.start(rid, "l1", "self", owner="t")
    tok = ls.new_token()
    one.set_nick(rid, tok, "Ana")
    one.move(rid, tok, 4)
    one.record(rid, 4, tok, "because", None)
    assert two.positions(rid) == {tok: 4} and two.nicks(rid) == {tok: "Ana"}
    assert two.mine(rid, 4, tok)["value"] == "because"
    keys = [k for k in one.r.keys("lsn:*")]
    assert len(keys) == 5
    for k in keys:
        ttl = one.r.ttl(k)
        assert 0 < ttl <= ls.TTL_S, (k, ttl)


def test_memory_runs_expire(monkeypatch):
    m = ls.MemoryLessons()
    rid = ls.new_run_id()
    m.start(rid, "l1", "self", owner="t")
    now = __import__("time").time()
    monkeypatch.setattr(ls.time, "time", lambda: now + ls.TTL_S + 1)
    assert m.run(rid) is None and m.stamp(rid) is None and m.runs_of("t") == []
    with pytest.raises(KeyError):
        m.record(rid, 0, "a", 1.0, None)


def test_lessons_follow_the_class_store(monkeypatch, redis_url):  # noqa: F811
    monkeypatch.delenv(cs.REDIS_ENV, raising=False)
    assert isinstance(ls.get_lessons(), ls.MemoryLessons)
    monkeypatch.setenv(cs.REDIS_ENV, redis_url)
    got = ls.get_lessons()
    assert isinstance(got, ls.RedisLessons) and got.r is cs.get_store().r
    monkeypatch.delenv(cs.REDIS_ENV)
    assert isinstance(ls.get_lessons(), ls.MemoryLessons)


def test_clean_nick():
    assert ls.clean_nick(None) == "" and ls.clean_nick("   ") == ""
    assert ls.clean_nick("a\nb\tc") == "a b c"
    assert ls.clean_nick("**bold** [x](y) $x$") == "bold x(y) x"
    assert re.fullmatch(r"[^<>*_`$]*", ls.clean_nick("<img src=x onerror=alert(1)>"))
