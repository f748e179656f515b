"""Stopping points in long simulations (sim/_interrupt.py): a chunked run is bitwise the same as
one call, and a hook that raises stops the run between chunks."""

from __future__ import annotations

import numpy as np
import pytest

from sim import _interrupt
from sim.attention import simulate
from sim.attention import api
from sim.attention.reference import simulate_reference


@pytest.fixture(autouse=True)
def _keep_the_installed_hook():
    """Each test starts without a hook and leaves the one it found: importing app.py installs the
    app's hook for the whole process, and another test on the same worker may have done so."""
    before = _interrupt._hook
    _interrupt.install(None)
    try:
        yield
    finally:
        _interrupt.install(before)


@pytest.fixture
def hook():
    calls = []
    _interrupt.install(lambda: calls.append(1))
    try:
        yield calls
    finally:
        _interrupt.install(None)


def _sphere(n, d, seed=0):
    Z = np.random.default_rng(seed).standard_normal((n, d))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


@pytest.mark.parametrize(
    "n, A_kind, record_every, steps",
    [(40, "sym", 3, 200), (40, "general", 1, 101), (300, "sym", 7, 60), (300, "general", 4, 45)],
)
def test_chunked_run_is_bitwise_one_call(monkeypatch, hook, n, A_kind, record_every, steps):
    d = 3
    A = np.eye(d) if A_kind == "sym" else np.array([[1.0, 0.3, 0.0], [-0.2, 0.9, 0.1], [0.0, 0.4, 1.1]])
    Z0 = _sphere(n, d)
    _interrupt.install(None)
    whole = simulate(Z0, 2.0, 0.1, steps, A=A, record_every=record_every)
    _interrupt.install(lambda: hook.append(1))
    monkeypatch.setattr(_interrupt, "CHUNK_WORK", float(n * n * d * 5))  # about 5 layers a chunk
    assert api._chunk_layers(n, d, steps, record_every) < steps
    chunked = simulate(Z0, 2.0, 0.1, steps, A=A, record_every=record_every)
    assert len(hook) > 2
    assert chunked.shape == whole.shape
    assert np.array_equal(chunked, whole)


def test_no_hook_no_chunks():
    assert not _interrupt.active()
    assert api._chunk_layers(512, 8, 4000, 10) == 4000


class Superseded(BaseException):
    pass


@pytest.mark.parametrize("run", [simulate, simulate_reference])
def test_a_raising_hook_stops_the_run_between_chunks(monkeypatch, run):
    n, d, steps = 64, 3, 400
    monkeypatch.setattr(_interrupt, "CHUNK_WORK", float(n * n * d * 10))
    seen = []

    def stop():
        seen.append(1)
        if len(seen) == 3:
            raise Superseded

    _interrupt.install(stop)
    try:
        with pytest.raises(Superseded):
            run(_sphere(n, d), 1.0, 0.1, steps)
    finally:
        _interrupt.install(None)
    assert len(seen) == 3  # stopped at the third stopping point, long before the end
    # and without a hook the same call runs to its end
    assert run(_sphere(n, d), 1.0, 0.1, steps).shape == (steps + 1, n, d)


def test_stop_if_superseded_outside_a_run_returns():
    from ui.kit.compute import stop_if_superseded

    assert stop_if_superseded() is None


@pytest.mark.parametrize("threads", [1, 2])
def test_monte_carlo_stops_between_chunks_and_is_unchanged_by_a_hook(threads):
    from sim.gaussian_width import sup_samples

    kw = dict(D=64, k=4)
    plain = sup_samples("subspace", 40_000, 3, threads=threads, **kw)
    seen = []
    _interrupt.install(lambda: seen.append(1))
    try:
        hooked = sup_samples("subspace", 40_000, 3, threads=threads, **kw)
    finally:
        _interrupt.install(None)
    assert len(seen) > 1 and np.array_equal(plain, hooked)

    def stop():
        raise Superseded

    _interrupt.install(stop)
    try:
        with pytest.raises(Superseded):
            sup_samples("subspace", 40_000, 3, threads=threads, **kw)
    finally:
        _interrupt.install(None)
