"""Independent dense references for the numbers the lesson pages print (tests/test_sweep.py).

Each ``check_<stem>(shown, values)`` returns ``[(label, shown value, reference, ok)]`` for a few of
the numbers page ``stem`` printed at ``values``: computed here in plain NumPy/SciPy without the
page's adapters (every layer of a layer map, closed forms, solvers other than the page's),
``ok`` when they agree within what the printed digits allow.
"""

from __future__ import annotations

import functools
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
    """ϑ(τ) at the depths ``tau`` (increasing) by LSODA (switching to a stiff method) on log ϑ."""
    sol = solve_ivp(
        _pair_rate(flow, beta),
        (0.0, float(tau[-1])),
        [math.log(theta0)],
        method="LSODA",
        t_eval=tau,
        rtol=1e-11,
        atol=1e-13,
    )
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
    S = solve_discrete_lyapunov(M, 2 * dt * D)  # Σ = M Σ Mᵀ + 2Δ D
    MS = M @ S  # E[x_k x_{k+1}ᵀ]ᵀ
    scheme = (MS[1, 0] - MS[0, 1]) / (2 * dt)  # E[½(x¹_k x²_{k+1} − x²_k x¹_{k+1})] / Δ
    return [
        _agree(t("metrics.rate_exact"), got[t("metrics.rate_exact")], exact, 0, 6e-5),
        _agree(t("metrics.rate_scheme"), got[t("metrics.rate_scheme")], scheme, 0, 6e-5),
    ]


CHECKS["rotation"] = check_rotation


# --------------------------------------------------------------------------- depth_sum
def check_depth_sum(got, v):
    """Var S_L as 1ᵀ C 1 with the L×L covariance written out, P(|S_L| ≤ a) from SciPy's normal law,
    the energy ratio and f after one step as products of their L factors."""
    from scipy.stats import norm

    t = Text("depth_sum", "en")
    alpha, L, sigma, rho, mu, a, c = (v[k] for k in ("alpha", "L", "sigma", "rho", "mu", "a", "c"))
    C = sigma**2 * (rho * np.ones((L, L)) + (1 - rho) * np.eye(L)) * float(L) ** (-2 * alpha)
    var = float(C.sum())
    m = mu * L * float(L) ** (-alpha)
    p = float(norm.cdf(a, m, math.sqrt(var)) - norm.cdf(-a, m, math.sqrt(var)))
    energy = float(np.prod(np.full(L, 1.0 + float(L) ** (-2 * alpha))))
    step = float(np.prod(np.full(L, 1.0 - c / L)))
    return [
        _agree(t("metrics.var", L=L), got[t("metrics.var", L=L)], var, 6e-4),
        _agree(t("metrics.prob", a=f"{a:g}"), got[t("metrics.prob", a=f"{a:g}")], p, 0, 6e-5),
        _agree(t("metrics.energy"), got[t("metrics.energy")], energy, 6e-4),
        _agree(t("metrics.step"), got[t("metrics.step")], step, 0, 6e-5),
    ]


CHECKS["depth_sum"] = check_depth_sum


# --------------------------------------------------------------------------- coordinates
_PAIRS = {
    "rotation_shear": (0.5 * np.array([[0.0, 1.0], [-1.0, 0.0]]), 0.5 * np.array([[1.0, 0.0], [0.0, -1.0]])),
    "nilpotent": (np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])),
    "commuting": (np.array([[0.5, 0.2], [0.2, -0.3]]), np.array([[0.0, 0.4], [0.4, -1.6]])),
}
_Y0 = np.array([1.0, 0.5])


@functools.lru_cache(maxsize=64)
def _driven_cached(n, pair):
    return _driven(n, *_PAIRS[pair])


def _driven(n, A, B):
    """y(2π) of dy = (A dx¹ + B dx²) y along x_n, by LSODA on the whole loop (every turn)."""

    def f(s, y):
        return math.sqrt(n) * (-math.sin(n * s) * A + math.cos(n * s) * B) @ y

    sol = solve_ivp(f, (0.0, 2 * math.pi), _Y0, method="LSODA", rtol=1e-11, atol=1e-13)
    return sol.y[:, -1]


def _polygon_area(n):
    """The area of the polygon through the label's 1024 samples per turn of x_n (N segments in all,
    at most 4e6): N/(2n) sin(2πn/N), which is π(1 − (2πn/N)²/6 + …)."""
    N = min(1024 * n + 1, 4_000_000) - 1
    return N / (2 * n) * math.sin(2 * math.pi * n / N)


def check_coordinates(got, v):
    """θ at tₘₐₓ: the Euclidean gradient flow of ½(ab − y)² in (a, b) by LSODA, the pulled-back one
    in closed form y + (θ₀ − y)e^{−t}; c; the loop's area π; the limit exp(π[B, A])y₀ by SciPy's expm
    and, for n ≤ 64, the driven end point by LSODA over all n turns."""
    from scipy.linalg import expm

    t = Text("coordinates", "en")
    a0, b0, y, n = v["a0"], v["b0"], v["y"], v["n"]
    T = max(int(round(v["horizon"] / v["dt"])), 1) * v["dt"]  # tₘₐₓ: a whole number of steps
    sol = solve_ivp(
        lambda _, z: [-(z[0] * z[1] - y) * z[1], -(z[0] * z[1] - y) * z[0]],
        (0.0, T),
        [a0, b0],
        method="LSODA",
        rtol=1e-11,
        atol=1e-13,
    )
    out = [
        _agree(
            t("metrics.theta_euclidean"), got[t("metrics.theta_euclidean")], sol.y[0, -1] * sol.y[1, -1], 6e-4, 1e-9
        ),
        _agree(t("metrics.c"), got[t("metrics.c")], a0 * a0 - b0 * b0, 6e-4, 1e-12),
        _agree(t("metrics.area", n=n), got[t("metrics.area", n=n)], _polygon_area(n), 0, 6e-7),
    ]
    if number(got[t("metrics.theta_pullback")]) == number(got[t("metrics.theta_pullback")]):  # no saddle
        out.append(
            _agree(
                t("metrics.theta_pullback"),
                got[t("metrics.theta_pullback")],
                y + (a0 * b0 - y) * math.exp(-T),
                6e-4,
                1e-9,
            )
        )
    A, B = _PAIRS[v["pair"]]
    limit = expm(math.pi * (B @ A - A @ B)) @ _Y0
    out.append(
        _agree(
            t("metrics.gap_limit_y0"), got[t("metrics.gap_limit_y0")], float(np.linalg.norm(limit - _Y0)), 6e-4, 1e-12
        )
    )
    if n <= 64:
        out.append(
            _agree(
                t("metrics.err_limit", n=n),
                got[t("metrics.err_limit", n=n)],
                float(np.linalg.norm(_driven_cached(n, v["pair"]) - limit)),
                6e-4,
                1e-8,
            )
        )
    return out


CHECKS["coordinates"] = check_coordinates


# --------------------------------------------------------------------------- hemisphere
def _attention_map(Z, beta, dt, steps, A, V=None):
    """``steps`` SA layers z ← (z + Δ Σⱼ softmaxⱼ(β zᵢᵀA zⱼ) V zⱼ) / ‖·‖, written out here."""
    V = np.eye(Z.shape[1]) if V is None else V
    for _ in range(steps):
        S = beta * (Z @ A @ Z.T)
        W = np.exp(S - S.max(axis=1, keepdims=True))
        Y = Z + dt * (W / W.sum(axis=1, keepdims=True)) @ (Z @ V.T)
        Z = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    return Z


def _diameter(Z):
    """The largest angle between two tokens (atan2 form: accurate for tiny angles)."""
    diff = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
    summ = np.linalg.norm(Z[:, None] + Z[None], axis=-1)
    return float(np.max(np.arctan2(diff, summ))) * 2


def check_hemisphere(got, v):
    """min rᵢ and the diameter at τ = 0 and after the last layer, the layers run here (when
    n² × layers ≤ 1e7; the start's numbers always)."""
    from pages.hemisphere.views import _layers
    from sim import hemisphere as hs

    t = Text("hemisphere", "en")
    n, d = v["n"], v["d"]
    Z0 = hs.cap_uniform(n, d, math.radians(v["cap"]), seed=v["seed"])  # the page's start
    Z0 = Z0 / np.linalg.norm(Z0, axis=1, keepdims=True)
    out = [
        _agree(t("metrics.rmin0"), got[t("metrics.rmin0")], float(Z0[:, -1].min()), 6e-4, 1e-12),
        _agree(t("metrics.diam0"), got[t("metrics.diam0")], _diameter(Z0), 6e-4, 1e-12),
    ]
    steps, dt = _layers(v["horizon"], v["dt"], n, d)
    if n * n * steps <= 1e7:
        Z = _attention_map(Z0, v["beta"], dt, steps, hs.random_matrix(d, v["A"], v["A_seed"]))
        out += [
            _agree(t("metrics.rmin_end"), got[t("metrics.rmin_end")], float(Z[:, -1].min()), 6e-4, 1e-12),
            _agree(t("metrics.diam_end"), got[t("metrics.diam_end")], _diameter(Z), 6e-3, 1e-9),
        ]
    return out


CHECKS["hemisphere"] = check_hemisphere


# --------------------------------------------------------------------------- block
@functools.lru_cache(maxsize=64)
def _rope_tops(n_from, n_to, base=10000.0):
    """For k = 8, 16, 32, 64: max and argmax of sim(N) = (1/k) Σⱼ cos(N b^{−j/k}) over every integer
    N in [n_from, n_to], summed directly (chunks of 20000 distances; the frequencies of k = 8, 16,
    32 are every 8th, 4th, 2nd of those of k = 64, so one table of cosines serves all four)."""
    theta = base ** (-np.arange(64) / 64)
    best = {k: (-math.inf, -1) for k in (8, 16, 32, 64)}
    for lo in range(n_from, n_to + 1, 20000):
        N = np.arange(lo, min(lo + 20000, n_to + 1), dtype=float)
        cos = np.cos(np.outer(N, theta))
        for k in best:
            sim = cos[:, :: 64 // k].mean(axis=1)
            i = int(np.argmax(sim))
            if sim[i] > best[k][0]:
                best[k] = (float(sim[i]), int(N[i]))
    return best


def check_block(got, v):
    """RoPE: the largest return at k = 64 and where, and the slope fitted over k = 8…64, from sim(N)
    at every distance of the window; sink: N_max, the weight at N = 1000 and the gap needed, in
    closed form."""
    t = Text("block", "en")
    n_to = v["rope_to"]
    n_from = min(v["rope_from"], n_to - 1)  # the page's rule for an empty window
    tops = _rope_tops(n_from, n_to)
    top, at = tops[64]
    ks = np.array([8, 16, 32, 64])
    h = np.array([tops[int(k)][0] for k in ks])
    out = [
        _agree(t("metrics.rope_top"), got[t("metrics.rope_top")], top, 0, 6e-4),
        _agree(t("metrics.rope_top_at"), got[t("metrics.rope_top_at")], at, 0, 0.5),
    ]
    if np.all(h > 0):
        slope = float(np.polyfit(np.log(ks), np.log(h), 1)[0])
        out.append(_agree(t("metrics.rope_slope"), got[t("metrics.rope_slope")], slope, 0, 6e-3))
    g, c = v["sink_delta"], v["sink_share"]
    out += [
        _agree(t("metrics.nmax"), got[t("metrics.nmax")], 1 + (1 - c) / c * math.exp(g), 1e-6, 0.06),
        _agree(t("metrics.mass_at_1000"), got[t("metrics.mass_at_1000")], math.exp(g) / (math.exp(g) + 999), 0, 6e-5),
        _agree(t("metrics.gap_needed"), got[t("metrics.gap_needed")], math.log(999 * c / (1 - c)), 0, 6e-3),
    ]
    return out


CHECKS["block"] = check_block


# --------------------------------------------------------------------------- nonnormal
@functools.lru_cache(maxsize=64)
def _nonnormal_peak(M):
    """(s*, max) of ‖e^{sA}‖₂ for A = [[−1, M], [0, −1]]: e^{sA} = e^{−s}[[1, sM], [0, 1]] (A = −I + N,
    N² = 0), its largest singular value by NumPy's SVD at 20001 depths of [0, 2] (the peak is at
    s* < 1), refined by a bounded scalar search."""
    from scipy.optimize import minimize_scalar

    def mats(s):
        s = np.atleast_1d(s)
        E = np.zeros((s.size, 2, 2))
        E[:, 0, 0] = E[:, 1, 1] = 1.0
        E[:, 0, 1] = s * M
        return E * np.exp(-s)[:, None, None]

    s = np.linspace(0.0, 2.0, 20001)
    sig = np.linalg.svd(mats(s), compute_uv=False)[:, 0]
    i = int(np.argmax(sig))
    if i == 0:
        return 0.0, 1.0
    r = minimize_scalar(
        lambda x: -np.linalg.svd(mats(x), compute_uv=False)[0, 0],
        bounds=(s[i - 1], s[i + 1]),
        method="bounded",
        options={"xatol": 1e-11},
    )
    return float(r.x), -float(r.fun)


@functools.lru_cache(maxsize=64)
def _nonnormal_sup(M, eps):
    """sup over s in [0, 12] of ‖e^{sA_ε}‖₂, A_ε = [[−1, M], [0, −1−ε]]: e^{sA_ε} has the diagonal
    e^{−s}, e^{−(1+ε)s} and the corner M e^{−s}(1 − e^{−εs})/ε (M s e^{−s} at ε = 0); NumPy's SVD on
    20001 depths, refined by a bounded scalar search."""
    from scipy.optimize import minimize_scalar

    def top(s):
        s = np.atleast_1d(np.asarray(s, dtype=float))
        E = np.zeros((s.size, 2, 2))
        E[:, 0, 0], E[:, 1, 1] = np.exp(-s), np.exp(-(1 + eps) * s)
        E[:, 0, 1] = M * np.exp(-s) * (-np.expm1(-eps * s) / eps if eps > 0 else s)
        return np.linalg.svd(E, compute_uv=False)[:, 0]

    s = np.linspace(0.0, 12.0, 20001)
    sig = top(s)
    i = int(np.argmax(sig))
    if i in (0, s.size - 1):
        return float(sig[i])
    r = minimize_scalar(lambda x: -top(x)[0], bounds=(s[i - 1], s[i + 1]), method="bounded", options={"xatol": 1e-12})
    return max(float(sig[i]), -float(r.fun))


def check_nonnormal(got, v):
    """The peak time and value of ‖e^{sA}‖₂ (dense SVD), ‖e^{A}e₂‖ = e^{−1}√(1 + M²), and the
    pseudospectra panel's true sup of ‖e^{sA_ε}‖₂ (dense SVD)."""
    t = Text("nonnormal", "en")
    s_star, peak = _nonnormal_peak(v["M"])
    sup = (
        []
        if t("metrics.sup_eps") not in got
        else [_agree(t("metrics.sup_eps"), got[t("metrics.sup_eps")], _nonnormal_sup(v["M"], v["eps"]), 0, 6e-5)]
    )
    return sup + [
        _agree(t("metrics.s_star"), got[t("metrics.s_star")], s_star, 0, 1e-4),
        _agree(t("metrics.peak"), got[t("metrics.peak")], peak, 0, 6e-5),
        _agree(t("metrics.e2_at_1"), got[t("metrics.e2_at_1")], math.exp(-1) * math.hypot(1.0, v["M"]), 0, 6e-5),
    ]


CHECKS["nonnormal"] = check_nonnormal


# --------------------------------------------------------------------------- gaussian_width
@functools.lru_cache(maxsize=64)
def _max_abs_mean(M, rho):
    """E maxᵢ |√ρ Z + √(1−ρ) Yᵢ| (Z, Yᵢ iid standard normal) by nested adaptive quadrature:
    ∫φ(z) ∫₀^∞ 1 − (Φ((r − a)/b) − Φ((−r − a)/b))^M dr dz, a = √ρ z, b = √(1−ρ)."""
    from scipy.integrate import quad
    from scipy.special import ndtr

    if rho > 1 - 1e-12:
        return math.sqrt(2 / math.pi)
    b = math.sqrt(1 - rho)

    def inner(z):
        a = math.sqrt(rho) * z
        return quad(
            lambda r: 1 - (ndtr((r - a) / b) - ndtr((-r - a) / b)) ** M,
            0,
            np.inf,
            epsabs=1e-11,
            epsrel=1e-10,
            limit=200,
        )[0]

    if rho == 0:
        return inner(0.0)
    phi = 1 / math.sqrt(2 * math.pi)
    # the integrand is even in z (a ↦ −a leaves the inner integral unchanged)
    return 2 * quad(lambda z: phi * math.exp(-z * z / 2) * inner(z), 0, np.inf, epsabs=1e-10, epsrel=1e-9, limit=200)[0]


def check_gaussian_width(got, v):
    """The exact width of the chosen set: E‖g_k‖ as SciPy's chi mean (subspace, adaptive: k = D),
    D·E|g₁|/√D as SciPy's half-normal mean (hypercube), √(π/2) (circle), and for directions
    (M <= D, the page's equicorrelated set) the nested quadrature above."""
    from scipy.stats import chi, halfnorm

    from sim.gaussian_width import MAX_BASIS

    t = Text("gaussian_width", "en")
    fam, D = v["family"], v["D"]
    k, M = min(v["k"], D), min(v["M"], int(MAX_BASIS // D))
    if fam == "subspace":
        ref = float(chi(k).mean())
    elif fam == "adaptive":
        ref = float(chi(D).mean())
    elif fam == "hypercube":
        ref = D * float(halfnorm.mean()) / math.sqrt(D)
    elif fam == "circle":
        ref = math.sqrt(math.pi / 2)
    elif fam == "directions" and M <= D:
        ref = _max_abs_mean(M, v["correlation"])
    else:
        return []
    return [_agree(t("metrics.exact"), got[t("metrics.exact")], ref, 0, 6e-5)]


CHECKS["gaussian_width"] = check_gaussian_width


# --------------------------------------------------------------------------- width
def check_width(got, v):
    """The loss at t = T of both scalings: the gradient flow θ' = −γ∇L (γ = 1 lazy, N mean-field)
    with the gradient written out (tests/_reference_width.py) and SciPy's adaptive DOP853
    (rtol 1e-10) instead of the page's fixed-step RK4."""
    from sim import width as W
    from tests._reference_width import loss_gradient, network

    t = Text("width", "en")
    N = v["N"]
    xs, ys = W.dataset(v["data"])
    w0, a0 = (W.paired_init if v["start"] == "paired" else W.random_init)(N, v["seed"])
    out = []
    for s in W.SCALINGS:
        gamma = 1.0 if s == "lazy" else float(N)

        def f(_, th, s=s, gamma=gamma):
            gw, ga = loss_gradient(th[:N], th[N:], xs, ys, s)
            return -gamma * np.concatenate([gw, ga])

        sol = solve_ivp(f, (0.0, v["T"]), np.concatenate([w0, a0]), method="DOP853", rtol=1e-10, atol=1e-12)
        r = network(sol.y[:N, -1], sol.y[N:, -1], xs, s) - ys
        out.append(_agree(t(f"metrics.loss_{s}"), got[t(f"metrics.loss_{s}")], 0.5 * float(r @ r), 6e-3, 1e-12))
    return out


CHECKS["width"] = check_width


# --------------------------------------------------------------------------- measures
def _w1_circle(a, b):
    """W₁ on the unit circle between the uniform empirical measures of the angles ``a`` and ``b``:
    with D = F − G on the arcs between consecutive points, W₁ = min_c Σ |arc| |D − c|, the minimum
    at a weighted median of D (written out here, sorting the merged points)."""
    a, b = np.mod(a, 2 * math.pi), np.mod(b, 2 * math.pi)
    x = np.concatenate([a, b])
    w = np.concatenate([np.full(a.size, 1 / a.size), np.full(b.size, -1 / b.size)])
    order = np.argsort(x)
    x, D = x[order], np.cumsum(w[order])
    arc = np.diff(np.append(x, x[0] + 2 * math.pi))
    o = np.argsort(D)
    cw = np.cumsum(arc[o])
    c = D[o][np.searchsorted(cw, 0.5 * cw[-1])]
    return float(np.sum(arc * np.abs(D - c)))


def check_measures(got, v):
    """W₁ at depth 0 between the page's n tokens and its reference system (their starting angles
    from sim.measures.initial_quantile, the transport written out above), the bound's constant
    C = ((1 + β) + (1 + 2β)e^{2β})/(1 − Δ) and τ* = log(π/W₁(0))/C."""
    from pages.measures.views import N_REF
    from sim.measures import initial_quantile

    t = Text("measures", "en")
    th0 = initial_quantile(np.random.default_rng(v["seed"]).random(v["n"]))
    ref0 = initial_quantile((np.arange(N_REF) + 0.5) / N_REF)
    w0 = _w1_circle(th0, ref0)
    beta, dt = v["beta"], v["dt"]
    C = ((1 + beta) + (1 + 2 * beta) * math.exp(2 * beta)) / (1 - dt)
    return [
        _agree(t("metrics.w1_start"), got[t("metrics.w1_start")], w0, 6e-4, 1e-12),
        _agree(t("metrics.C"), got[t("metrics.C")], C, 6e-4),
        _agree(t("metrics.tau_star"), got[t("metrics.tau_star")], math.log(math.pi / w0) / C, 6e-3),
    ]


CHECKS["measures"] = check_measures


# --------------------------------------------------------------------------- low_temperature
_LT = {
    "axis": (np.eye(3), lambda g: np.diag([1.0, 1.0 - g, 1.0 - g]), lambda Z: np.sign(Z[:, :1]) * np.eye(3)[0]),
    "plane": (np.eye(3), lambda g: np.diag([1.0, 1.0, 1.0 - g]), lambda Z: Z * [1.0, 1.0, 0.0]),
    "drift": (None, lambda g: np.diag([1.0, 0.9, 0.5]), lambda Z: np.sign(Z[:, 1:2]) * np.eye(3)[1]),
}


def check_low_temperature(got, v):
    """The final mean W₂ to Π♯ρ₀ at the largest β: every seed's tokens run through all layers of
    the attention map above (scores zᵢᵀBzⱼ, values V zⱼ), the targets Π(zᵢ(0)) (the pole ±e₁, the
    great circle z₃ = 0, the pole ±e₂), W₂ by an optimal assignment (SciPy); when n² × layers ×
    seeds <= 2e7."""
    from scipy.optimize import linear_sum_assignment

    from pages.low_temperature.views import BETA_FACTORS, plan
    from sim.low_temperature import start_tokens

    t = Text("low_temperature", "en")
    B, Vf, proj = _LT[v["model"]]
    g, n, seeds = v["gap"], v["n"], v["seeds"]
    B = np.diag([1.0, (1.0 + g) / 0.9, 1.0]) if B is None else B
    steps, dt = plan(v["T"], v["dt"], n, len(BETA_FACTORS) * seeds)
    if n * n * steps * seeds > 2e7:
        return []
    beta = 10.0 ** v["log10_beta"] * BETA_FACTORS[-1]
    w2 = []
    for s in range(seeds):
        Z0 = start_tokens(n, 3, s)
        Y = proj(Z0)
        Y = Y / np.linalg.norm(Y, axis=1, keepdims=True)
        Z = _attention_map(Z0, beta, dt, steps, B, Vf(g))
        C = ((Z[:, None] - Y[None]) ** 2).sum(-1)
        r, c = linear_sum_assignment(C)
        w2.append(math.sqrt(C[r, c].mean()))
    label = t("metrics.w2_end", beta=f"{beta:.4g}")
    return [_agree(label, got[label], float(np.mean(w2)), 0, 6e-4)]


CHECKS["low_temperature"] = check_low_temperature
