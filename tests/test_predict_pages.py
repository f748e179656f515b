"""Predict, then reveal on width, low_temperature, coordinates and rotation .

The true answers are recomputed HERE, independently of views/predict_*.py: closed forms, an ODE
solver, a matrix exponential, an optimal assignment (scipy), a least-squares fit of the simulated
sweep, for two parameter sets per page (one per language). The AppTest checks are those of
tests/test_predict.py: nothing revealed before an answer, a wrong answer rejected with the true
value, a right one accepted, the step's figure shown only after, a parameter change asks again.
Small parameters (few tokens, short training) keep the file fast.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.linalg import expm

from tests.test_predict import check_answers_follow_the_parameters, check_predict_then_reveal


# --------------------------------------------------------------------------- independent answers
def width_truth(q):
    from sim import width as W
    from pages.width.views import SWEEP_NS, sweep_step

    N, T, seed, start = int(q["N"]), float(q["T"]), int(q["seed"]), q["start"]
    xs, ys = W.dataset(q["data"])
    sw = W.width_sweep(SWEEP_NS, T, sweep_step(T, xs.size), seed, xs, ys, start=start)
    fit = lambda v: np.polyfit(np.log(np.array(SWEEP_NS, float)), np.log(v), 1)[0]
    w, a = (W.paired_init if start == "paired" else W.random_init)(N, seed)
    lam = np.linalg.eigvalsh(W.kernel(w, a, xs))
    return {
        "param_slope": fit(sw["lazy_param"]),
        "kernel_slope": fit(sw["lazy_kernel"]),
        "learned": float(np.sum(lam >= 1.0 / T)),
    }


def low_temperature_truth(q):
    from sim import low_temperature as lt
    from pages.low_temperature.views import matrices

    B, V = matrices(q["model"], float(q["gap"]))
    mu, Q = np.linalg.eigh(V @ B.T)
    top = Q[:, mu >= mu[-1] - 1e-9]
    P1 = top @ top.T
    if top.shape[1] == 1:
        target = f"poles_e{int(np.argmax(np.abs(top[:, 0]))) + 1}"
    else:
        target = f"circle_z{int(np.argmin(np.diag(P1))) + 1}"
    n, seeds = int(q["n"]), int(q["seeds"])
    w2 = []
    for s in range(seeds):  # the start of seed s, then W2 to its projection by an optimal assignment
        Z0 = lt.run(n, 1.0, B, V, 0.1, 0.1, s, record=2)["Z"][0]
        P = Z0 @ P1
        P /= np.linalg.norm(P, axis=1, keepdims=True)
        C = ((Z0[:, None, :] - P[None, :, :]) ** 2).sum(-1)
        r, c = optimize.linear_sum_assignment(C)
        w2.append(math.sqrt(C[r, c].mean()))
    return {"target": target, "w2_start": float(np.mean(w2)), "log_beta": float(q["log10_beta"]) * math.log(10.0)}


def coordinates_truth(q):
    from pages.coordinates.views import PAIRS, Y0

    a0, b0, y, h, dt, n = (float(q[k]) for k in ("a0", "b0", "y", "horizon", "dt", "n"))
    n = int(n)
    t = max(round(h / dt), 1) * dt
    f = lambda _, z: [-(z[0] * z[1] - y) * z[1], -(z[0] * z[1] - y) * z[0]]
    a_end = integrate.solve_ivp(f, (0, t), [a0, b0], method="DOP853", rtol=1e-12, atol=1e-14).y[0, -1]
    N = 1024 * n  # the page samples the loop at 1024 points per turn
    A, B = PAIRS[q["pair"]]
    lim = expm(math.pi * (B @ A - A @ B)) @ Y0
    return {
        "pullback_end": y + (a0 * b0 - y) * math.exp(-t),
        "a_end": a_end,
        "area": N / (2 * n) * math.sin(2 * math.pi * n / N),
        "endpoint": "start" if np.linalg.norm(lim - Y0) < 1e-9 else "elsewhere",
    }


def rotation_truth(q):
    from pages.rotation.views import FFN_BOX, ffn_weights

    ang, k, r = math.radians(float(q["angle"])), float(q["kappa"]), float(q["noise_ratio"])
    rate = (1 - k) * (1 - r) * math.sin(2 * ang) / (2 * (1 + k)) + 0.0  # + 0.0: no "-0"
    W_in, W_out = ffn_weights(float(q["blend"]), int(q["seed"]))
    g = np.linspace(-FFN_BOX, FFN_BOX, 41)
    X = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    sech2 = 1 - np.tanh(X @ W_in.T) ** 2  # (points, hidden)
    J = np.einsum("ih,ph,hj->pij", W_out, sech2, W_in)
    curl = np.abs(J[:, 1, 0] - J[:, 0, 1]).max()
    return {
        "current": "rotates" if abs(rate) > 1e-12 else "balanced",
        "rate": rate,
        "curl": "curl" if curl > 1e-9 else "gradient",
    }


CASES = {
    "width": dict(
        truth=width_truth,
        figures={"param_slope", "kernel_slope", "learned"},
        query={
            "en": dict(N="64", start="paired", T="1", dt="0.02", data="three_points", seed="0"),
            "zh": dict(N="32", start="random", T="2", dt="0.02", data="wave", seed="3"),
        },
        change=("T", 1.5),
        stale={"param_slope", "kernel_slope", "learned"},
    ),
    "low_temperature": dict(
        truth=low_temperature_truth,
        figures={"target", "w2_start", "log_beta"},
        query={
            "en": dict(model="axis", gap="0.5", log10_beta="2", n="16", seeds="1", T="2", dt="0.1"),
            "zh": dict(model="plane", gap="0.3", log10_beta="1.5", n="24", seeds="2", T="2", dt="0.1"),
        },
        change=("log10_beta", 2.5),
        stale={"log_beta"},
    ),
    "coordinates": dict(
        truth=coordinates_truth,
        figures={"pullback_end", "a_end", "area", "endpoint"},
        query={
            "en": dict(a0="0.3", b0="0.3", y="2", horizon="3", dt="0.05", n="8", pair="rotation_shear"),
            "zh": dict(a0="1", b0="-0.5", y="-1.5", horizon="2", dt="0.1", n="5", pair="commuting"),
        },
        change=("y", 1.0),
        stale={"pullback_end", "a_end"},
    ),
    "rotation": dict(
        truth=rotation_truth,
        figures={"current", "rate", "curl"},
        query={
            "en": dict(angle="30", kappa="4", noise_ratio="0.1", dt="0.01", T="250", blend="0.5", seed="0"),
            "zh": dict(angle="0", kappa="2", noise_ratio="0.5", dt="0.02", T="250", blend="0", seed="1"),
        },
        change=("blend", 0.8),
        stale={"curl"},
    ),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stem", list(CASES))
def test_predict_then_reveal(stem, lang):
    check_predict_then_reveal(stem, lang, CASES[stem])


@pytest.mark.parametrize("stem", list(CASES))
def test_answers_follow_the_parameters(stem):
    check_answers_follow_the_parameters(stem, CASES[stem])


def test_both_answers_of_each_choice_occur():
    """The choice steps are not constant: each page's two parameter sets give different answers."""
    got = {
        stem: [CASES[stem]["truth"](CASES[stem]["query"][lang]) for lang in ("en", "zh")]
        for stem in ("low_temperature", "coordinates", "rotation")
    }
    assert got["low_temperature"][0]["target"] != got["low_temperature"][1]["target"]
    assert got["coordinates"][0]["endpoint"] != got["coordinates"][1]["endpoint"]
    for sid in ("current", "curl"):
        assert got["rotation"][0][sid] != got["rotation"][1][sid]
