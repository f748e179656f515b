"""Kernels compiled in the background at server start (sim.warm, sim._ready): while a module is
pending its functions take the NumPy reference path and give the same numbers; once ready, the
kernels run; the background warm-up marks every module ready; the plan covers every module once."""

from __future__ import annotations

import numpy as np
import pytest

from sim import _ready, attention, depth_sum, warm, width
from sim.attention import api as attention_api
from sim.depth_sum import moments as ds_moments, residual as ds_residual, sums as ds_sums

TOL = dict(rtol=1e-10, atol=1e-12)


@pytest.fixture
def pending():
    """Mark modules pending for one test (as during a server's background warm-up)."""
    marked = []

    def mark(*names):
        marked.extend(names)
        _ready.mark_pending(names)

    yield mark
    for n in marked:
        _ready.mark_ready(n)


def _boom(*a, **k):
    raise AssertionError("this path must not run")


ATTENTION_CASES = [
    dict(n=2, d=2, beta=1.0, dt=0.1, steps=30, flow="SA", sym=True),
    dict(n=7, d=3, beta=4.0, dt=0.05, steps=25, flow="USA", sym=True),
    dict(n=9, d=3, beta=2.5, dt=0.2, steps=12, flow="SA", sym=False),
    dict(n=300, d=4, beta=1.5, dt=0.1, steps=3, flow="USA", sym=False),  # the parallel kernel
]


def _attention_args(c, seed=0):
    rng = np.random.default_rng(seed)
    Z0 = rng.standard_normal((c["n"], c["d"]))
    A = np.eye(c["d"]) if c["sym"] else rng.standard_normal((c["d"], c["d"]))
    V = np.eye(c["d"]) if c["sym"] else rng.standard_normal((c["d"], c["d"]))
    return (Z0, c["beta"], c["dt"], c["steps"]), dict(A=A, V=V, flow=c["flow"], record_every=2)


@pytest.mark.parametrize("case", ATTENTION_CASES, ids=lambda c: f"n{c['n']}-{c['flow']}-sym{c['sym']}")
def test_attention_pending_takes_numpy_path_same_numbers(case, pending, monkeypatch):
    args, kw = _attention_args(case)
    kernel = attention.simulate(*args, **kw)  # ready: the kernels
    pending("attention")
    monkeypatch.setattr(attention_api, "_run", _boom)  # a pending module must not touch its kernels
    monkeypatch.setattr(attention_api, "_run_many", _boom)
    numpy_path = attention.simulate(*args, **kw)
    np.testing.assert_allclose(numpy_path, kernel, **TOL)
    np.testing.assert_allclose(numpy_path, attention.simulate_reference(*args, **kw), rtol=0, atol=0)
    Zs = np.stack([args[0], args[0][::-1]])
    monkeypatch.undo()
    batch_kernel = attention.simulate_batch(Zs, *args[1:], **kw)
    monkeypatch.setattr(attention_api, "_run_many", _boom)
    batch_numpy = attention.simulate_batch(Zs, *args[1:], **kw)
    np.testing.assert_allclose(batch_numpy, batch_kernel, **TOL)
    assert batch_numpy.shape == (2, args[3] // 2 + 1, case["n"], case["d"])


def test_attention_ready_runs_the_kernel(monkeypatch):
    assert _ready.ready("attention")
    monkeypatch.setattr(attention_api, "simulate_reference", _boom)
    calls = []
    real = attention_api._run
    monkeypatch.setattr(attention_api, "_run", lambda *a: calls.append(1) or real(*a))
    out = attention.simulate(np.eye(3), 1.0, 0.1, 5)
    assert calls == [1] and out.shape == (6, 3, 3)


def test_attention_pending_still_validates(pending):
    pending("attention")
    with pytest.raises(ValueError, match="beta"):
        attention.simulate(np.eye(3), -1.0, 0.1, 5)
    with pytest.raises(ValueError, match="max_work"):
        attention.simulate(np.eye(3), 1.0, 0.1, 10**9)
    with pytest.raises(ValueError, match="Z0s"):
        attention.simulate_batch(np.eye(3), 1.0, 0.1, 5)


@pytest.mark.parametrize("L,trials,seed", [(5, 40, 0), (12, 130, 7)])
def test_depth_sum_pending_takes_numpy_path_same_numbers(L, trials, seed, pending, monkeypatch):
    ready = (
        depth_sum.unit_sums(L, trials, seed),
        depth_sum.column_moments(L, trials, seed),
        depth_sum.path_moments(L, trials, seed, [1, L], keep=3),
        depth_sum._residual_norms(0.5, L, 3, trials, seed),
    )
    pending("depth_sum")
    for mod, k in (
        (ds_sums, "_unit_sums_kernel"),
        (ds_moments, "_path_moments_kernel"),
        (ds_moments, "_column_moments_kernel"),
        (ds_residual, "_residual_kernel"),
    ):
        monkeypatch.setattr(mod, k, _boom)
    numpy_path = (
        depth_sum.unit_sums(L, trials, seed),
        depth_sum.column_moments(L, trials, seed),
        depth_sum.path_moments(L, trials, seed, [1, L], keep=3),
        depth_sum._residual_norms(0.5, L, 3, trials, seed),
    )
    for a, b in zip(numpy_path, ready):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_allclose(a[key], b[key], **TOL, err_msg=key)
        else:
            np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize("N,scaling,seed", [(8, "lazy", 0), (64, "mean_field", 3)])
def test_width_pending_takes_numpy_path_same_numbers(N, scaling, seed, pending, monkeypatch):
    xs, ys = width.dataset("three_points")
    w, a = width.paired_init(N, seed)
    ready = width.train_from(w, a, scaling, 1.0, 0.02, xs, ys, record=6)
    pending("width")
    monkeypatch.setitem(width._ENGINES, "numba", _boom)
    numpy_path = width.train_from(w, a, scaling, 1.0, 0.02, xs, ys, record=6)
    for key in ("loss", "param_shift", "kernel_shift", "residual", "bound", "eig_end"):
        np.testing.assert_allclose(numpy_path[key], ready[key], **TOL, err_msg=key)


def test_ready_registry():
    assert _ready.pending() == frozenset() and _ready.wait(0)
    _ready.mark_pending(["x_test", "y_test"])
    try:
        assert not _ready.ready("x_test") and _ready.ready("attention")
        assert not _ready.wait(0.01)
        _ready.mark_ready("x_test")
        assert _ready.pending() == {"y_test"}
    finally:
        _ready.mark_ready("y_test")
    assert _ready.wait(0) and _ready.ready("x_test")


@pytest.mark.parametrize("jobs", [1, 2, 3, 16])
def test_plan_covers_every_module_once(jobs):
    names = warm.modules()
    assert "attention" in names and "warm" not in names and not any(n.startswith("_") for n in names)
    groups = warm.plan(jobs)
    flat = [n for g in groups for n in g]
    assert sorted(flat) == names and all(groups) and len(groups) == min(jobs, len(names))
    if jobs >= 2:  # the costliest module alone; the rest on the others
        assert ["attention"] in groups


@pytest.fixture
def nothing_left_pending():
    yield
    for n in _ready.pending():  # a failed test must not leave later tests on the NumPy paths
        _ready.mark_ready(n)


def test_background_marks_every_module_ready(monkeypatch, nothing_left_pending):
    """Child processes warm two cheap modules (one without kernels, in another process); both become
    ready here once their child reports, and nothing is compiled in this process."""
    monkeypatch.setattr(warm, "_background", None)
    monkeypatch.setattr(warm, "modules", lambda: ["rotation", "two_point"])
    monkeypatch.setattr(warm, "warm", _boom)
    called = []
    t = warm.start_background(jobs=2, nice=0, on_ready=lambda: called.append(_ready.pending()))
    assert warm.start_background() is t  # idempotent
    assert _ready.pending() <= {"rotation", "two_point"}
    t.join(300)
    assert not t.is_alive() and _ready.pending() == frozenset()
    assert called == [frozenset()]
    assert all(p.returncode == 0 for p in warm._children[-2:])


def test_background_child_failure_still_ends_ready(monkeypatch, caplog, nothing_left_pending):
    """A child that dies (here: an unknown module) is logged; the module is marked ready anyway
    (Numba then compiles on first use), so nothing stays on the slow path forever."""
    monkeypatch.setattr(warm, "_background", None)
    monkeypatch.setattr(warm, "modules", lambda: ["no_such_module_here"])
    t = warm.start_background(jobs=1, nice=0)
    t.join(300)
    assert not t.is_alive() and _ready.pending() == frozenset()
    assert "no_such_module_here" in caplog.text and "ended with" in caplog.text


def test_ensure_warm_only_without_background(monkeypatch):
    calls = []
    monkeypatch.setattr(warm, "warm", lambda **k: calls.append(k))
    monkeypatch.setattr(warm, "_background", None)
    warm.ensure_warm()
    assert calls == [{}]
    monkeypatch.setattr(warm, "_background", object())
    warm.ensure_warm()
    assert calls == [{}]


def test_portable_kernels_chosen_only_when_the_cache_has_none_for_this_cpu(tmp_path):
    """An image's cache made on another CPU type: the portable kernels are loaded instead of
    compiling every kernel again; with kernels for this CPU, or an explicit choice, nothing changes."""
    import os
    import subprocess
    import sys

    from sim import warm

    mod = tmp_path / "tiny_kernel.py"
    mod.write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    cache = tmp_path / "cache"

    def compile_for(cpu):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(tmp_path)}
        env.pop("NUMBA_CPU_NAME", None)
        env.pop("NUMBA_CPU_FEATURES", None)
        if cpu:
            env["NUMBA_CPU_NAME"] = cpu
        subprocess.run([sys.executable, "-c", "import tiny_kernel; tiny_kernel.f(1)"], env=env, check=True, timeout=300)

    assert warm.cached_cpus(cache) == set()
    compile_for("generic")
    assert warm.cached_cpus(cache) == {"generic"}
    env = {"NUMBA_CACHE_DIR": str(cache)}
    assert warm.choose_target(env) == "generic" and env["NUMBA_CPU_NAME"] == "generic"
    kept = {"NUMBA_CACHE_DIR": str(cache), "NUMBA_CPU_NAME": "haswell"}
    assert warm.choose_target(kept) is None and kept["NUMBA_CPU_NAME"] == "haswell"
    compile_for(None)  # now this CPU's kernels are there too
    assert len(warm.cached_cpus(cache)) == 2
    env = {"NUMBA_CACHE_DIR": str(cache)}
    assert warm.choose_target(env) is None and "NUMBA_CPU_NAME" not in env
