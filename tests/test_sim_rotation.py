"""sim.rotation against docs/constructions.md (rotation): Lyapunov, area rate, Euler–Maruyama, current, FFN curl."""

import math

import numpy as np
import pytest

from sim import rotation as R


def rot(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


def example(angle, kappa, noise_ratio):
    """H = diag(1, κ); D with eigenvalues (1, noise_ratio) along axes turned by `angle`."""
    Q = rot(angle)
    return np.diag([1.0, kappa]), Q @ np.diag([1.0, noise_ratio]) @ Q.T


NONNORMAL = (np.array([[1.0, 2.0], [-0.5, 1.5]]), np.array([[0.7, 0.2], [0.2, 0.4]]))
CASES = [example(0.5, 4.0, 0.1), example(1.0, 2.0, 0.3), example(0.3, 10.0, 0.0), NONNORMAL]


@pytest.mark.parametrize(
    "H,D", CASES + [(np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 0.5], [0.3, 0.0, 3.0]]), np.diag([1.0, 0.5, 0.0]) + 0.1)]
)
def test_lyapunov_residual(H, D):
    S = R.stationary_covariance(H, D)
    assert np.abs(H @ S + S @ H.T - 2 * D).max() < 1e-12
    assert np.allclose(S, S.T) and np.linalg.eigvalsh(S).min() > -1e-12


@pytest.mark.parametrize("angle", [0.0, 0.2, 0.7, 1.3])
@pytest.mark.parametrize("kappa,nr", [(4.0, 0.1), (2.0, 0.5), (7.0, 0.0)])
def test_diagonal_H_closed_forms(angle, kappa, nr):
    H, D = example(angle, kappa, nr)
    h = np.diag(H)
    S = R.stationary_covariance(H, D)
    np.testing.assert_allclose(S, 2 * D / (h[:, None] + h[None, :]), rtol=1e-12, atol=1e-15)
    want = (h[0] - h[1]) * D[0, 1] / (h[0] + h[1])
    want2 = (1 - kappa) * (1 - nr) * math.sin(2 * angle) / (2 * (1 + kappa))
    assert R.area_rate(H, D) == pytest.approx(want, abs=1e-14)
    assert want == pytest.approx(want2, abs=1e-14)


@pytest.mark.parametrize("angle", [0.0, 0.4, 1.1, math.pi / 2])
def test_commuting_H_D_is_detailed_balance(angle):
    """Same eigenvectors: HD = DH, HΣ symmetric, no rate, no current."""
    Q = rot(angle)
    H, D = Q @ np.diag([1.0, 5.0]) @ Q.T, Q @ np.diag([0.3, 2.0]) @ Q.T
    assert np.allclose(H @ D, D @ H)
    HS = H @ R.stationary_covariance(H, D)
    assert np.abs(HS - HS.T).max() < 1e-12
    assert abs(R.area_rate(H, D)) < 1e-13
    X = np.random.default_rng(0).normal(size=(50, 2))
    assert np.abs(R.current_field(H, D, X)).max() < 1e-13
    # isotropic noise commutes with every symmetric H too
    assert abs(R.area_rate(np.array([[2.0, 0.7], [0.7, 1.0]]), 0.4 * np.eye(2))) < 1e-13


def test_non_commuting_rotates():
    for H, D in CASES:
        assert abs(R.area_rate(H, D)) > 1e-2


def test_kernel_equals_reference():
    for (H, D), seed, x0 in zip(CASES, (0, 1, 2, 3), (None, [1.0, -2.0], None, [0.0, 0.0])):
        a = R.simulate_ou(H, D, 0.02, 3000, seed, x0)
        b = R.simulate_ou_reference(H, D, 0.02, 3000, seed, x0)
        assert a.shape == (3001, 2)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(R.simulate_ou(*CASES[0], 0.02, 10, 5, [1.0, 2.0])[0], [1.0, 2.0])


@pytest.mark.parametrize("H,D", CASES)
def test_em_covariance_tends_to_sigma_at_first_order(H, D):
    S = R.stationary_covariance(H, D)
    errs = [np.abs(R.em_covariance(H, D, dt) - S).max() for dt in (0.02, 0.01, 0.005)]
    for e1, e2 in zip(errs, errs[1:]):
        assert 1.8 < e1 / e2 < 2.2, errs
    rates = [abs(R.em_area_rate(H, D, dt) - R.area_rate(H, D)) for dt in (0.02, 0.01)]
    assert 1.8 < rates[0] / rates[1] < 2.2


def test_simulated_covariance_is_the_schemes_own():
    """A long path's covariance matches Σ_Δ (discrete Lyapunov) and, at this coarse Δ, visibly not Σ."""
    H, D = example(0.5, 4.0, 0.3)
    dt = 0.1
    x = R.simulate_ou(H, D, dt, 400_000, 11)[1000:]
    C = np.cov(x.T)
    Sd, S = R.em_covariance(H, D, dt), R.stationary_covariance(H, D)
    np.testing.assert_allclose(C, Sd, rtol=0.05, atol=0.005)
    # the stiff direction (h = 4, h·Δ = 0.4) carries a 25 % bias of the scheme, far above the noise
    assert abs(C[1, 1] - S[1, 1]) > 0.2 * S[1, 1] > 10 * abs(C[1, 1] - Sd[1, 1])


@pytest.mark.parametrize("k,H,D", [(k, H, D) for k, (H, D) in enumerate(CASES)])
def test_area_mc_within_4_stderr(k, H, D):
    dt = 0.01
    rate, se = R.area_mc(H, D, 3000.0, dt, seed=100 + k)
    exact_dt = R.em_area_rate(H, D, dt)
    assert se > 0
    assert abs(rate - exact_dt) < 4 * se
    # the continuum rate differs from the scheme's by O(dt), below the noise here
    assert abs(rate - R.area_rate(H, D)) < 4 * se + 2 * abs(exact_dt - R.area_rate(H, D))
    assert abs(R.area_rate(H, D)) > 4 * se  # and the drift is resolved: a real rotation


def test_area_mc_stderr_is_honest():
    """Over independent seeds, (estimate − exact)/stderr has mean square near 1."""
    H, D = CASES[0]
    dt = 0.02
    ex = R.em_area_rate(H, D, dt)
    z = np.array([(lambda r: (r[0] - ex) / r[1])(R.area_mc(H, D, 1000.0, dt, seed=s)) for s in range(24)])
    assert 0.4 < np.mean(z**2) < 2.2, z


def test_detailed_balance_area_is_a_random_walk():
    H, D = example(0.0, 4.0, 0.1)
    rate, se = R.area_mc(H, D, 3000.0, 0.01, seed=3)
    assert abs(rate) < 4 * se


@pytest.mark.parametrize("H,D", CASES[:2] + [NONNORMAL])
def test_current_is_divergence_free_and_carries_the_area_rate(H, D):
    S = R.stationary_covariance(H, D)
    L = 7 * math.sqrt(np.linalg.eigvalsh(S).max())
    g = np.linspace(-L, L, 401)
    X = np.array(np.meshgrid(g, g, indexing="ij")).reshape(2, -1).T
    J = R.current_field(H, D, X)
    h = g[1] - g[0]
    # divergence by central differences at points spread over the cloud
    P = np.random.default_rng(1).multivariate_normal([0, 0], S, size=200)
    e = 1e-6 * math.sqrt(np.linalg.eigvalsh(S).min())
    d11 = (R.current_field(H, D, P + [e, 0])[:, 0] - R.current_field(H, D, P - [e, 0])[:, 0]) / (2 * e)
    d22 = (R.current_field(H, D, P + [0, e])[:, 1] - R.current_field(H, D, P - [0, e])[:, 1]) / (2 * e)
    assert np.abs(d11 + d22).max() < 1e-6 * np.abs(d11).max()  # the two terms cancel
    area = 0.5 * np.sum(X[:, 0] * J[:, 1] - X[:, 1] * J[:, 0]) * h * h
    assert area == pytest.approx(R.area_rate(H, D), rel=1e-6, abs=1e-10)


def _ffn_weights(m, seed, blend):
    rng = np.random.default_rng(seed)
    W_in = rng.normal(size=(m, 2))
    W_out = (1 - blend) * W_in.T + blend * rng.normal(size=(2, m))
    return W_in, W_out


X_FFN = np.random.default_rng(5).uniform(-2, 2, size=(200, 2))


@pytest.mark.parametrize("m,seed", [(1, 0), (8, 1), (64, 2)])
def test_tied_weights_have_no_curl(m, seed):
    W_in, W_out = _ffn_weights(m, seed, 0.0)
    assert np.abs(R.ffn_curl(W_in, W_out, X_FFN)).max() < 1e-12


@pytest.mark.parametrize("m,seed,blend", [(8, 1, 1.0), (16, 3, 0.5), (3, 4, 0.2)])
def test_curl_matches_finite_differences_and_the_jacobian(m, seed, blend):
    W_in, W_out = _ffn_weights(m, seed, blend)
    h = 1e-5
    e1, e2 = np.array([h, 0.0]), np.array([0.0, h])
    f = lambda X: R.ffn_field(W_in, W_out, X)  # noqa: E731
    J21 = (f(X_FFN + e1)[:, 1] - f(X_FFN - e1)[:, 1]) / (2 * h)
    J12 = (f(X_FFN + e2)[:, 0] - f(X_FFN - e2)[:, 0]) / (2 * h)
    curl = R.ffn_curl(W_in, W_out, X_FFN)
    np.testing.assert_allclose(curl, J21 - J12, atol=1e-8 * max(1, np.abs(curl).max()))
    J = np.einsum("ai,ni,ib->nab", W_out, 1 - np.tanh(X_FFN @ W_in.T) ** 2, W_in)
    np.testing.assert_allclose(curl, J[:, 1, 0] - J[:, 0, 1], atol=1e-12)
    assert np.abs(curl).max() > 1e-3
    # f is tanh-bounded
    assert np.all(np.abs(f(X_FFN)) <= np.abs(W_out).sum(axis=1) + 1e-12)


BAD = [float("nan"), float("inf"), 1e300, 1j, "1", None]


def test_bad_input_raises():
    H, D = CASES[0]
    with pytest.raises(ValueError, match="positive real part"):
        R.stationary_covariance(np.diag([1.0, -0.1]), D)
    with pytest.raises(ValueError, match="positive real part"):
        R.area_rate(np.array([[0.0, 1.0], [-1.0, 0.0]]), D)  # a pure rotation: not a minimum
    with pytest.raises(ValueError, match="symmetric"):
        R.stationary_covariance(H, [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="semi-definite"):
        R.stationary_covariance(H, [[1.0, 0.0], [0.0, -0.1]])
    with pytest.raises(ValueError, match="2×2"):
        R.area_rate(np.eye(3), np.eye(3))
    with pytest.raises(ValueError, match="D must have shape"):
        R.stationary_covariance(H, np.eye(3))
    with pytest.raises(ValueError, match="H must have entries"):
        R.stationary_covariance(1e6 * np.eye(2), D)
    with pytest.raises(ValueError, match="unstable"):
        R.simulate_ou(H, D, 0.6, 10, 0)  # 1 − 0.6·4 = −1.4
    with pytest.raises(ValueError, match="steps"):
        R.simulate_ou(H, D, 0.01, 10**9, 0)
    with pytest.raises(ValueError, match="seed"):
        R.simulate_ou(H, D, 0.01, 10, -1)
    with pytest.raises(ValueError, match="x0"):
        R.simulate_ou(H, D, 0.01, 10, 0, x0=[1.0, np.nan])
    with pytest.raises(ValueError, match="too short"):
        R.area_mc(H, D, 50.0, 0.01, 0)
    with pytest.raises(ValueError, match="work bound"):
        R.area_mc(H, D, 1e9, 0.01, 0)
    with pytest.raises(ValueError, match="W_out must have shape"):
        R.ffn_curl(np.ones((4, 2)), np.ones((2, 3)), X_FFN)
    with pytest.raises(ValueError, match="X must"):
        R.ffn_curl(np.ones((4, 2)), np.ones((2, 4)), np.ones((5, 3)))
    for bad in [b for b in BAD if b != "1"]:  # (a numeric string in an array is NumPy's float)
        for fn in (
            lambda: R.stationary_covariance([[bad, 0], [0, 1]], D),
            lambda: R.simulate_ou(H, D, bad, 10, 0),
            lambda: R.area_mc(H, D, bad, 0.01, 0),
            lambda: R.simulate_ou(H, D, 0.01, bad, 0),
            lambda: R.ffn_curl([[bad, 0.0]], [[1.0], [0.0]], X_FFN),
        ):
            with pytest.raises(ValueError):
                fn()


def test_batch_means_is_area_mc_on_the_same_path():
    H, D = CASES[1]
    T, dt, seed = 800.0, 0.01, 4
    path = R.simulate_ou(H, D, dt, int(round(T / dt)), seed)
    assert R.batch_means(R.area_increments(path), dt) == R.area_mc(H, D, T, dt, seed)
    inc = np.arange(100.0)
    rate, se = R.batch_means(inc, 0.5, burn_in=0.0, batches=5)  # batches of 20: sums 190, 590, ...
    sums = inc.reshape(5, 20).sum(axis=1) / 10.0
    assert rate == pytest.approx(sums.mean()) and se == pytest.approx(sums.std(ddof=1) / math.sqrt(5))
    with pytest.raises(ValueError, match="fewer than batches"):
        R.batch_means(np.ones(10), 0.1, batches=20)
    with pytest.raises(ValueError, match="dt"):
        R.batch_means(np.ones(100), 0.0)


def test_singular_covariance_has_no_current():
    """Noise along an eigen-direction of H only (the page's angle = 0, noise ratio = 0): the law lies
    on that line, a 1-D process in detailed balance, so the current is zero, not an error."""
    from pages.rotation.views import example

    H, D = example(0.0, 4.0, 0.0)
    assert np.linalg.det(R.stationary_covariance(H, D)) <= 1e-12
    np.testing.assert_array_equal(R.current_field(H, D, X_FFN), 0.0)
    np.testing.assert_array_equal(R.current_field(np.eye(2), np.diag([1.0, 0.0]), X_FFN), 0.0)
