"""Independent dense references for the numbers the lesson pages print (tests/test_sweep.py).

Each ``check_<stem>(shown, values)`` returns ``[(label, shown value, reference, ok)]`` for a few of
the numbers page ``stem`` printed at ``values``: computed here in plain NumPy/SciPy without the
page's adapters (every layer of a layer map, closed forms, solvers other than the page's),
``ok`` when they agree within what the printed digits allow.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from ui.kit.i18n import Text


def shown(at) -> dict[str, str]:
    """The page's metrics as drawn: ``{label: value}``."""
    return {m.label: m.value for m in at.metric}


def number(s: str) -> float:
    """A printed number (``0.0619``, ``6.19e-02``, ``−0.57``, ``1,000.5``); NaN for a dash."""
    s = s.strip().replace("−", "-").replace(",", "")
    try:
        return float(s)
    except ValueError:
        return math.nan


def _agree(label, s, ref, rel, abs_=0.0):
    got = number(s)
    ok = (math.isnan(got) and not math.isfinite(ref)) or abs(got - ref) <= abs_ + rel * abs(ref)
    return label, s, ref, ok


# --------------------------------------------------------------------------- two_point
def _pair_rate(flow, beta):
    """d(log ϑ)/dτ of the symmetric pair (SA, USA), written here from the ODE of the page text."""
    def f(_, y):
        th = math.exp(y[0])
        s2 = math.sin(2 * th) / th if th > 1e-150 else 2.0
        if flow == "SA":
            return [-s2 / (1.0 + math.exp(min(2 * beta * math.sin(th) ** 2, 700.0)))]
        return [-0.5 * math.exp(beta * math.cos(2 * th)) * s2]
    return f


def _pair_exact(flow, beta, theta0, tau):
    """ϑ(τ) at the depths ``tau`` (increasing) by an implicit solver (Radau) on log ϑ."""
    sol = solve_ivp(_pair_rate(flow, beta), (0.0, float(tau[-1])), [math.log(theta0)], method="Radau",
                    t_eval=tau, rtol=1e-11, atol=1e-13)
    return np.exp(sol.y[0])


def _pair_map(flow, beta, theta0, dt, steps):
    """Every layer of the two-token map reduced by hand to the half-angle (A = V = I)."""
    th = np.empty(steps + 1)
    th[0] = t = theta0
    for k in range(steps):
        e_self, e_other = math.exp(beta), math.exp(beta * math.cos(2 * t))
        norm = e_self + e_other if flow == "SA" else 2.0
        w11, w12 = e_self / norm, e_other / norm
        t = math.atan2((1 + dt * (w11 - w12)) * math.sin(t), (1 + dt * (w11 + w12)) * math.cos(t))
        th[k + 1] = t
    return th


def check_two_point(got, v):
    t = Text("two_point", "en")
    steps = max(int(round(v["horizon"] / v["dt"])), 1)
    tau = np.arange(steps + 1) * v["dt"]
    out = []
    for flow in ("SA", "USA"):
        key = flow.lower()
        exact = _pair_exact(flow, v["beta"], v["theta0"], tau)
        gap = float(np.max(np.abs(_pair_map(flow, v["beta"], v["theta0"], v["dt"], steps) - exact)))
        out.append(_agree(t(f"metrics.{key}_final"), got[t(f"metrics.{key}_final")], exact[-1], 1e-3, 1e-12))
        out.append(_agree(t(f"metrics.{key}_gap"), got[t(f"metrics.{key}_gap")], gap, 6e-3, 1e-11))
    return out


CHECKS = {"two_point": check_two_point}


# --------------------------------------------------------------------------- rotation
def check_rotation(got, v):
    """The exact rate (closed form of the page's answer 1) and the Euler–Maruyama chain's exact rate
    (its stationary covariance from SciPy's discrete Lyapunov solver, the area per step by hand)."""
    from scipy.linalg import solve_discrete_lyapunov

    t = Text("rotation", "en")
    phi, kappa, r, dt = math.radians(v["angle"]), v["kappa"], v["noise_ratio"], v["dt"]
    exact = (1 - kappa) * 0.5 * (1 - r) * math.sin(2 * phi) / (1 + kappa)
    c, s = math.cos(phi), math.sin(phi)
    D = np.array([[c * c + r * s * s, (1 - r) * c * s], [(1 - r) * c * s, s * s + r * c * c]])
    M = np.eye(2) - dt * np.diag([1.0, kappa])
    S = solve_discrete_lyapunov(M, 2 * dt * D)            # Σ = M Σ Mᵀ + 2Δ D
    MS = M @ S                                             # E[x_k x_{k+1}ᵀ]ᵀ
    scheme = (MS[1, 0] - MS[0, 1]) / (2 * dt)              # E[½(x¹_k x²_{k+1} − x²_k x¹_{k+1})] / Δ
    return [_agree(t("metrics.rate_exact"), got[t("metrics.rate_exact")], exact, 0, 6e-5),
            _agree(t("metrics.rate_scheme"), got[t("metrics.rate_scheme")], scheme, 0, 6e-5)]


CHECKS["rotation"] = check_rotation


# --------------------------------------------------------------------------- depth_sum
def check_depth_sum(got, v):
    """Var S_L as 1ᵀ C 1 with the L×L covariance written out, P(|S_L| ≤ a) from SciPy's normal law,
    the energy ratio and f after one step as products of their L factors."""
    from scipy.stats import norm

    t = Text("depth_sum", "en")
    alpha, L, sigma, rho, mu, a, c = (v[k] for k in ("alpha", "L", "sigma", "rho", "mu", "a", "c"))
    C = sigma ** 2 * (rho * np.ones((L, L)) + (1 - rho) * np.eye(L)) * float(L) ** (-2 * alpha)
    var = float(C.sum())
    m = mu * L * float(L) ** (-alpha)
    p = float(norm.cdf(a, m, math.sqrt(var)) - norm.cdf(-a, m, math.sqrt(var)))
    energy = float(np.prod(np.full(L, 1.0 + float(L) ** (-2 * alpha))))
    step = float(np.prod(np.full(L, 1.0 - c / L)))
    return [_agree(t("metrics.var", L=L), got[t("metrics.var", L=L)], var, 6e-4),
            _agree(t("metrics.prob", a=f"{a:g}"), got[t("metrics.prob", a=f"{a:g}")], p, 0, 6e-5),
            _agree(t("metrics.energy"), got[t("metrics.energy")], energy, 6e-4),
            _agree(t("metrics.step"), got[t("metrics.step")], step, 0, 6e-5)]


CHECKS["depth_sum"] = check_depth_sum


# --------------------------------------------------------------------------- coordinates
_PAIRS = {"rotation_shear": (0.5 * np.array([[0.0, 1.0], [-1.0, 0.0]]), 0.5 * np.array([[1.0, 0.0], [0.0, -1.0]])),
          "nilpotent": (np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])),
          "commuting": (np.array([[0.5, 0.2], [0.2, -0.3]]), np.array([[0.0, 0.4], [0.4, -1.6]]))}
_Y0 = np.array([1.0, 0.5])


def _driven(n, A, B):
    """y(2π) of dy = (A dx¹ + B dx²) y along x_n, by Radau on the whole loop (every turn)."""
    def f(s, y):
        return math.sqrt(n) * (-math.sin(n * s) * A + math.cos(n * s) * B) @ y
    sol = solve_ivp(f, (0.0, 2 * math.pi), _Y0, method="Radau", rtol=1e-11, atol=1e-13, max_step=0.2 / n)
    return sol.y[:, -1]


def _polygon_area(n):
    """The area of the polygon through the label's 1024 samples per turn of x_n (N segments in all,
    at most 4e6): N/(2n) sin(2πn/N), which is π(1 − (2πn/N)²/6 + …)."""
    N = min(1024 * n + 1, 4_000_000) - 1
    return N / (2 * n) * math.sin(2 * math.pi * n / N)


def check_coordinates(got, v):
    """θ at tₘₐₓ: the Euclidean gradient flow of ½(ab − y)² in (a, b) by Radau, the pulled-back one
    in closed form y + (θ₀ − y)e^{−t}; c; the loop's area π; the limit exp(π[B, A])y₀ by SciPy's expm
    and, for n ≤ 64, the driven end point by Radau over all n turns."""
    from scipy.linalg import expm

    t = Text("coordinates", "en")
    a0, b0, y, n = v["a0"], v["b0"], v["y"], v["n"]
    T = max(int(round(v["horizon"] / v["dt"])), 1) * v["dt"]      # tₘₐₓ: a whole number of steps
    sol = solve_ivp(lambda _, z: [-(z[0] * z[1] - y) * z[1], -(z[0] * z[1] - y) * z[0]], (0.0, T), [a0, b0],
                    method="Radau", rtol=1e-11, atol=1e-13)
    out = [_agree(t("metrics.theta_euclidean"), got[t("metrics.theta_euclidean")],
                  sol.y[0, -1] * sol.y[1, -1], 6e-4, 1e-9),
           _agree(t("metrics.c"), got[t("metrics.c")], a0 * a0 - b0 * b0, 6e-4, 1e-12),
           _agree(t("metrics.area", n=n), got[t("metrics.area", n=n)], _polygon_area(n), 0, 6e-7)]
    if number(got[t("metrics.theta_pullback")]) == number(got[t("metrics.theta_pullback")]):   # no saddle
        out.append(_agree(t("metrics.theta_pullback"), got[t("metrics.theta_pullback")],
                          y + (a0 * b0 - y) * math.exp(-T), 6e-4, 1e-9))
    A, B = _PAIRS[v["pair"]]
    limit = expm(math.pi * (B @ A - A @ B)) @ _Y0
    out.append(_agree(t("metrics.gap_limit_y0"), got[t("metrics.gap_limit_y0")],
                      float(np.linalg.norm(limit - _Y0)), 6e-4, 1e-12))
    if n <= 64:
        out.append(_agree(t("metrics.err_limit", n=n), got[t("metrics.err_limit", n=n)],
                          float(np.linalg.norm(_driven(n, A, B) - limit)), 6e-4, 1e-8))
    return out


CHECKS["coordinates"] = check_coordinates
