"""sim.width: the kernel, the gradient, the paired start, RK4 training against the frozen-kernel
bound, the width scaling of parameter and kernel motion, and input validation (docs/constructions.md (width))."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm

from sim import width as W
from tests import _reference_width as R

XS, YS = W.dataset("three_points")


def kernel_loop(w, a, xs):
    """The kernel formula of docs/constructions.md (width) as a plain double loop over data pairs and units."""
    N, M = len(w), len(xs)
    K = np.zeros((M, M))
    for m in range(M):
        for q in range(M):
            s = 0.0
            for i in range(N):
                sm, sq = math.tanh(w[i] * xs[m]), math.tanh(w[i] * xs[q])
                s += sm * sq + a[i] ** 2 * (1 - sm * sm) * (1 - sq * sq) * xs[m] * xs[q]
            K[m, q] = s / N
    return K


def loss(w, a, xs, ys, scaling):
    c = len(w) ** -0.5 if scaling == "lazy" else 1.0 / len(w)
    f = np.array([c * sum(a[i] * math.tanh(w[i] * x) for i in range(len(w))) for x in xs])
    return 0.5 * np.sum((f - ys) ** 2)


# --------------------------------------------------------------------------- kernel, gradient, start
@pytest.mark.parametrize(
    "N,seed,data", [(2, 0, "one_point"), (10, 3, "three_points"), (64, 7, "wave"), (30, 1, "close_pair")]
)
def test_kernel_equals_the_double_loop(N, seed, data):
    xs, _ = W.dataset(data)
    rng = np.random.default_rng(seed)
    w, a = rng.normal(size=N), rng.normal(size=N)  # generic a (a_i^2 != 1)
    np.testing.assert_allclose(W.kernel(w, a, xs), kernel_loop(w, a, xs), rtol=1e-12, atol=1e-14)
    K = W.kernel(*W.paired_init(N, seed), xs)
    assert np.allclose(K, K.T) and np.linalg.eigvalsh(K).min() > -1e-14  # symmetric PSD


@pytest.mark.parametrize("scaling", W.SCALINGS)
@pytest.mark.parametrize("N,seed", [(4, 0), (12, 5)])
def test_gradient_equals_finite_differences(scaling, N, seed):
    rng = np.random.default_rng(seed)
    w, a = rng.normal(size=N), rng.normal(size=N)
    gw, ga = R.loss_gradient(w, a, XS, YS, scaling)
    eps = 1e-6
    for i in range(N):
        e = np.zeros(N)
        e[i] = eps
        fd_w = (loss(w + e, a, XS, YS, scaling) - loss(w - e, a, XS, YS, scaling)) / (2 * eps)
        fd_a = (loss(w, a + e, XS, YS, scaling) - loss(w, a - e, XS, YS, scaling)) / (2 * eps)
        assert gw[i] == pytest.approx(fd_w, abs=1e-8)
        assert ga[i] == pytest.approx(fd_a, abs=1e-8)


@pytest.mark.parametrize("N,seed", [(2, 0), (100, 4), (1000, 9)])
def test_paired_start_is_the_zero_function(N, seed):
    w, a = W.paired_init(N, seed)
    assert w.shape == a.shape == (N,)
    np.testing.assert_array_equal(w[0::2], w[1::2])
    np.testing.assert_array_equal(a, np.tile([1.0, -1.0], N // 2))
    xs = np.linspace(-3, 3, 13)
    for s in W.SCALINGS:
        assert np.max(np.abs(R.network(w, a, xs, s))) < 1e-14
    res = W.train(N, "lazy", 0.5, 0.05, seed, XS, YS, record=3)
    np.testing.assert_allclose(res["residual"][0], -YS, atol=1e-14)
    wr, ar = W.random_init(N, seed)
    assert set(np.unique(ar)) <= {-1.0, 1.0}
    if N >= 100:
        assert np.max(np.abs(R.network(wr, ar, xs, "lazy"))) > 1e-3  # the unpaired start is not 0


def test_seed_example_velocities():
    """One sample x = y = 1 at t = 0: mean-field a' = tanh(w), w' = a tanh'(w); lazy N^{-1/2} of that."""
    N = 8
    w, a = W.paired_init(N, 2)
    x, y = np.array([1.0]), np.array([1.0])
    for s, factor in (("mean_field", 1.0), ("lazy", N**-0.5)):
        gamma = N if s == "mean_field" else 1.0
        gw, ga = R.loss_gradient(w, a, x, y, s)
        np.testing.assert_allclose(-gamma * ga, factor * np.tanh(w), atol=1e-15)
        np.testing.assert_allclose(-gamma * gw, factor * a / np.cosh(w) ** 2, atol=1e-15)


@pytest.mark.parametrize("N,seed,data", [(16, 0, "three_points"), (200, 3, "wave")])
def test_lazy_and_mean_field_start_with_the_same_kernel(N, seed, data):
    xs, ys = W.dataset(data)
    lazy = W.train(N, "lazy", 1.0, 0.05, seed, xs, ys, record=5)
    mf = W.train(N, "mean_field", 1.0, 0.05, seed, xs, ys, record=5)
    K = kernel_loop(*W.paired_init(N, seed), xs)
    np.testing.assert_allclose(lazy["K0"], K, atol=1e-13)
    np.testing.assert_allclose(mf["K0"], K, atol=1e-13)
    np.testing.assert_allclose(lazy["eig0"], np.sort(np.linalg.eigvalsh(K))[::-1].clip(0), atol=1e-13)
    np.testing.assert_array_equal(lazy["frozen"], mf["frozen"])  # same K0 and r(0) = -y


# --------------------------------------------------------------------------- training
@pytest.mark.parametrize("scaling", W.SCALINGS)
def test_records_shapes_and_definitions(scaling):
    N, T = 20, 2.0
    res = W.train(N, scaling, T, 0.03, 1, XS, YS, record=9)
    np.testing.assert_allclose(res["t"], np.linspace(0, T, 9))
    assert res["t"][-1] == T and res["h"] <= 0.03 and res["steps"] % 8 == 0
    for key in ("loss", "param_shift", "kernel_shift", "bound"):
        assert res[key].shape == (9,) and np.all(np.isfinite(res[key]))
    assert res["residual"].shape == res["frozen"].shape == (9, 3)
    np.testing.assert_allclose(res["loss"], 0.5 * np.sum(res["residual"] ** 2, axis=1), rtol=1e-14)
    assert np.all(np.diff(res["loss"]) <= 1e-15)  # gradient flow never climbs
    r0 = res["residual"][0]
    for t, fr in zip(res["t"], res["frozen"]):
        np.testing.assert_allclose(fr, expm(-res["K0"] * t) @ r0, atol=1e-13)
    # the final kernel and parameter shift agree with a direct evaluation at the end state
    assert res["kernel_shift"][-1] == pytest.approx(np.linalg.norm(res["K_end"] - res["K0"], 2), rel=1e-10)
    assert res["kernel_shift"][0] == 0 and res["param_shift"][0] == 0
    assert np.all(np.diff(res["bound"] / np.maximum(res["t"], 1e-300))[1:] >= 0)  # running max


@pytest.mark.parametrize("start", W.STARTS)
@pytest.mark.parametrize("scaling", W.SCALINGS)
@pytest.mark.parametrize("N,seed", [(16, 2), (256, 5)])
def test_numba_kernel_equals_numpy_reference(start, scaling, N, seed):
    w, a = (W.paired_init if start == "paired" else W.random_init)(N, seed)
    fast = W.train_from(w, a, scaling, 1.5, 0.02, XS, YS, record=7)
    ref = W.train_from(w, a, scaling, 1.5, 0.02, XS, YS, record=7, engine="numpy")
    for key in ("loss", "param_shift", "kernel_shift", "residual", "frozen", "bound", "eig_end"):
        np.testing.assert_allclose(fast[key], ref[key], rtol=1e-10, atol=1e-13, err_msg=key)


CASES = [
    (N, T, data, s, start)
    for N, T, data in [(2, 0.5, "one_point"), (32, 4.0, "three_points"), (256, 2.0, "wave"), (512, 6.0, "close_pair")]
    for s in W.SCALINGS
    for start in W.STARTS
]


@pytest.mark.parametrize("N,T,data,scaling,start", CASES)
def test_residual_stays_inside_the_frozen_kernel_bound(N, T, data, scaling, start):
    xs, ys = W.dataset(data)
    w, a = (W.paired_init if start == "paired" else W.random_init)(N, 1)
    res = W.train_from(w, a, scaling, T, 0.01, xs, ys, record=40)
    gap = np.linalg.norm(res["residual"] - res["frozen"], axis=1)
    tol = 1e-12 * np.linalg.norm(res["residual"][0])  # rounding of e^{-K0 t} r(0)
    assert np.all(gap <= res["bound"] + tol), np.max(gap / res["bound"].clip(1e-300))
    assert np.max(gap[1:] / res["bound"][1:]) > 0.05  # and the bound is not vacuous here


def _euler_gap_ratio(N, seed, T, h, record):
    """The same flow with explicit Euler steps: largest ||r - r0|| / bound over the records."""
    w, a = W.paired_init(N, seed)
    K0 = W.kernel(w, a, XS)
    r0 = -YS
    lam, Q = np.linalg.eigh(K0)
    k = int(round(T / (record - 1) / h))
    eps, worst = 0.0, 0.0
    for n in range(1, k * (record - 1) + 1):
        gw, ga = R.loss_gradient(w, a, XS, YS, "lazy")
        w, a = w - h * gw, a - h * ga
        eps = max(eps, np.linalg.norm(W.kernel(w, a, XS) - K0, 2))
        if n % k == 0:
            t = n * h
            r = R.network(w, a, XS, "lazy") - YS
            fr = Q @ (np.exp(-lam * t) * (Q.T @ r0))
            worst = max(worst, np.linalg.norm(r - fr) / (t * eps * np.linalg.norm(r0)))
    return worst


def test_an_euler_step_leaves_the_bound_where_rk4_does_not():
    N, T, h, record = 64, 0.4, 0.01, 5
    assert _euler_gap_ratio(N, 0, T, h, record) > 1.0
    res = W.train(N, "lazy", T, h, 0, XS, YS, record=record)
    gap = np.linalg.norm(res["residual"] - res["frozen"], axis=1)
    assert np.max(gap[1:] / res["bound"][1:]) < 0.5


def test_paired_kernel_changes_like_t_squared_at_first_random_like_t():
    """The first-order kernel changes of a pair cancel: K(t) - K(0) = O(t^2) paired, O(t) random."""
    N = 64
    for start, power in (("paired", 2.0), ("random", 1.0)):
        w, a = (W.paired_init if start == "paired" else W.random_init)(N, 3)
        res = W.train_from(w, a, "mean_field", 0.002, 0.0001, XS, YS, record=3)
        t, ks = res["t"][1:], res["kernel_shift"][1:]
        assert math.log(ks[1] / ks[0]) / math.log(t[1] / t[0]) == pytest.approx(power, abs=0.08), start


def test_null_direction_is_never_learned():
    """The odd network cannot fit an even target on x = +-1: K(0) has eigenvalue 0 and nothing moves."""
    xs, ys = W.dataset("odd_pair")
    for s in W.SCALINGS:
        res = W.train(64, s, 3.0, 0.05, 0, xs, ys, record=4)
        assert res["eig0"][-1] < 1e-14 < res["eig0"][0]
        np.testing.assert_allclose(res["residual"], np.tile(-ys, (4, 1)), atol=1e-14)
        assert np.max(res["param_shift"]) < 1e-14


# --------------------------------------------------------------------------- width scaling
NS = (32, 64, 128, 256, 512)


def test_width_sweep_equals_train_and_the_scaling_slopes():
    sw = W.width_sweep(NS, 3.0, 0.05, 0, XS, YS)
    np.testing.assert_array_equal(sw["N"], NS)
    one = W.train(128, "lazy", 3.0, 0.05, 0, XS, YS, record=2)
    assert sw["lazy_param"][2] == one["param_shift"][-1] and sw["lazy_kernel"][2] == one["kernel_shift"][-1]
    assert W.slope(NS, sw["lazy_param"]) == pytest.approx(-0.5, abs=0.1)
    assert W.slope(NS, sw["lazy_kernel"]) == pytest.approx(-1.0, abs=0.15)  # paired: first order cancels
    # mean field: O(1) motion; finite-N corrections to the mean-field limit tilt small N a little
    assert W.slope(NS, sw["mean_field_param"]) == pytest.approx(0.0, abs=0.2)
    assert W.slope(NS, sw["mean_field_kernel"]) == pytest.approx(0.0, abs=0.2)
    assert np.min(sw["mean_field_kernel"]) > 0.05 and np.min(sw["mean_field_param"]) > 0.3  # O(1)


def test_random_start_slopes_over_seeds():
    """Unpaired random start (a_i = +-1 independent of w_i): lazy parameters move like N^{-1/2};
    the kernel change's first-order terms are odd in a_i and cancel only on average, so one seed
    scatters but the geometric mean over seeds follows N^{-1}, well below the N^{-1/2} bound."""
    par, ker = [], []
    for seed in range(4):
        sw = W.width_sweep(NS, 3.0, 0.05, seed, XS, YS, start="random")
        par.append(sw["lazy_param"])
        ker.append(sw["lazy_kernel"])
    gm = lambda v: np.exp(np.mean(np.log(v), axis=0))  # noqa: E731
    assert W.slope(NS, gm(par)) == pytest.approx(-0.5, abs=0.15)
    assert W.slope(NS, gm(ker)) == pytest.approx(-1.0, abs=0.25)


@pytest.mark.parametrize("T,dt", [(0.5, 0.05), (4.0, 0.05), (10.0, 0.1)])
def test_sweep_step_is_accurate_enough(T, dt):
    """The page's sweep uses a coarse step (0.05, up to 0.1 for long runs); its shifts agree with
    a fine step (0.005) to 1 %."""
    coarse = W.width_sweep((16, 128), T, dt, 1, *W.dataset("wave"), start="random")
    fine = W.width_sweep((16, 128), T, 0.005, 1, *W.dataset("wave"), start="random")
    for key in ("lazy_param", "lazy_kernel", "mean_field_param", "mean_field_kernel"):
        np.testing.assert_allclose(coarse[key], fine[key], rtol=1e-2, err_msg=key)


def test_slope():
    assert W.slope([1, 10, 100], [5, 0.5, 0.05]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        W.slope([1, 2], [1.0, -1.0])


# --------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(N=7), "even"),
        (dict(N=0), "N must be >= 2"),
        (dict(N=10**9), "N must be <="),
        (dict(N=2.5), "integer"),
        (dict(T=0.0), "T must be >"),
        (dict(T=-1.0), "T must be >"),
        (dict(T=float("nan")), "T must be finite"),
        (dict(dt=0.0), "dt must be >"),
        (dict(dt=5.0), "dt must be <="),
        (dict(scaling="ntk"), "scaling must be one of"),
        (dict(xs=[0.1, np.nan, 1.0]), "xs must contain only finite"),
        (dict(ys=[0.1, np.inf, 1.0]), "ys must contain only finite"),
        (dict(ys=[0.1, 1.0]), "ys must have shape"),
        (dict(xs=[1 + 1j, 0.5, 2.0]), "xs"),
        (dict(xs=[]), "xs must hold"),
        (dict(xs=[1e6, 0.5, 2.0]), "xs must lie"),
        (dict(record=1), "record must be >="),
        (dict(seed=-1), "seed must be >="),
        (dict(N=4096, T=100.0, dt=0.001), "max_work"),
        (dict(dt=1.9, T=2.0, xs=[2.0, 2.0, 2.0], record=2), "too large for a stable step"),
    ],
)
def test_invalid_input_raises_with_a_reason(kwargs, match):
    args = dict(N=8, scaling="lazy", T=1.0, dt=0.1, seed=0, xs=XS, ys=YS)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        W.train(
            args["N"],
            args["scaling"],
            args["T"],
            args["dt"],
            args["seed"],
            args["xs"],
            args["ys"],
            record=args.get("record", 50),
        )


def test_other_invalid_input():
    with pytest.raises(ValueError, match="max_work"):
        W.train(64, "lazy", 1.0, 0.01, 0, XS, YS, max_work=1000)
    with pytest.raises(ValueError, match="a must have shape"):
        W.kernel(np.ones(4), np.ones(3), XS)
    with pytest.raises(ValueError, match="w must contain only finite"):
        W.kernel([np.inf, 1.0], [1.0, 1.0], XS)
    with pytest.raises(ValueError, match="start must be one of"):
        W.width_sweep((8, 16), 1.0, 0.1, 0, XS, YS, start="halfpaired")
    with pytest.raises(ValueError, match="max_work"):
        W.width_sweep((1024, 2048), 10.0, 0.001, 0, XS, YS, max_work=1e7)
    with pytest.raises(ValueError, match="name must be one of"):
        W.dataset("mnist")
    with pytest.raises(ValueError, match="engine"):
        W.train_from(*W.paired_init(4, 0), "lazy", 1.0, 0.1, XS, YS, engine="gpu")
