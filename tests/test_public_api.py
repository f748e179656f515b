"""Every function an issue named under "Public API" (or "fixed signatures") exists in sim/ with
exactly that signature: the same parameter names, in the same order, with the same defaults.

Code outside this repository calls these functions, so they may not move, be renamed, lose a
parameter or change a default. A later issue may add keyword-only parameters with defaults (for
instance ``max_work=``, which lets a caller raise a work bound): every call written as the issue
wrote it still works. ``...`` below stands for a default the issue left open (it must exist).
"""

from __future__ import annotations

import importlib
import inspect

import pytest

#: (issue, "module.function(signature as the issue wrote it)")
PUBLIC_API = [
    (2, 'two_point.half_angle(beta, theta0, taus, flow="SA")'),
    (2, "two_point.energy(Z, beta, A)"),
    (2, 'attention.simulate(Z0, beta, dt, steps, A=None, V=None, flow="SA")'),
    (3, 'attention.simulate(Z0, beta, dt, steps, A=None, V=None, flow="SA", record_every=1)'),
    (3, 'attention.simulate_batch(Z0s, beta, dt, steps, A=None, V=None, flow="SA", record_every=...)'),
    (4, "gaussian_width.exact(kind, **params)"),
    (4, "gaussian_width.monte_carlo(kind, samples, seed, **params)"),
    (4, "gaussian_width.bound(kind, **params)"),
    (5, "nonnormal.response(M, s, x0)"),
    (5, "nonnormal.operator_norm(M, s)"),
    (5, "nonnormal.peak(M)"),
    (6, "depth_sum.variance(alpha, L, sigma, rho=0.0)"),
    (6, "depth_sum.sample(alpha, L, sigma, trials, seed, rho=0.0, mu=0.0)"),
    (6, "depth_sum.residual_energy(alpha, L)"),
    (6, "depth_sum.residual_energy_mc(alpha, L, width, trials, seed)"),
    (6, "depth_sum.one_step(c, L)"),
    (18, "width.paired_init(N, seed)"),
    (18, "width.kernel(w, a, xs)"),
    (18, "width.train(N, scaling, T, dt, seed, xs, ys, record=50)"),
    (19, 'coordinates.theta_flow(a0, b0, y, t, metric="euclidean")'),
    (19, "coordinates.ab_flow(a0, b0, y, t)"),
    (19, "coordinates.levy_area(n, points=...)"),
    (19, "coordinates.driven_endpoint(n, A, B, y0)"),
    (19, "coordinates.area_limit(A, B, y0)"),
    (20, "measures.w1_circle(a, b)"),
    (20, "measures.w1_uniform_circle(a)"),
    (20, "measures.sampling_error(n, trials, seed)"),
    (20, "measures.head_average_error(H, trials, seed, n=32, d=3, beta=1.0)"),
    (20, "measures.stability(n, beta, T, dt, seed, n_ref=...)"),
    (21, "low_temperature.projection(Z, S)"),
    (21, "low_temperature.w2(X, Y)"),
    (21, "low_temperature.run(n, beta, B, V, T, dt, seed, record=60)"),
    (22, "block.rope_similarity(N, k, base=10000.0)"),
    (22, "block.rmsnorm_jacobian(x, eps)"),
    (22, "block.rmsnorm_gain(x, eps)"),
    (22, "block.splitting_defect(A, B, x, alphas)"),
    (22, "block.attention(Z, A, V, beta, causal=False, positions=None)"),
    (22, "block.sink_mass(delta, N)"),
    (22, "block.sink_capacity(delta, c)"),
    (23, "rotation.stationary_covariance(H, D)"),
    (23, "rotation.area_rate(H, D)"),
    (23, "rotation.simulate_ou(H, D, dt, steps, seed, x0=None)"),
    (23, "rotation.area_mc(H, D, T, dt, seed)"),
    (23, "rotation.ffn_curl(W_in, W_out, X)"),
]


def _stated(spec: str) -> tuple[str, str, inspect.Signature]:
    """("module", "function", signature) of one line of PUBLIC_API."""
    head, args = spec.split("(", 1)
    module, name = head.rsplit(".", 1)
    scope: dict = {}
    exec(f"def stated({args}: pass", {}, scope)  # the issue's text, parsed by Python itself
    return module, name, inspect.signature(scope["stated"])


@pytest.mark.parametrize("issue,spec", PUBLIC_API, ids=[s.split("(")[0] for _, s in PUBLIC_API])
def test_issue_named_function_has_its_signature(issue, spec):
    module, name, stated = _stated(spec)
    mod = importlib.import_module(f"sim.{module}")
    fn = getattr(mod, name, None)
    assert callable(fn), f"sim.{module}.{name} (issue {issue}) is missing"
    P = inspect.Parameter
    actual = list(inspect.signature(fn).parameters.values())
    want = [p for p in stated.parameters.values() if p.kind is not P.VAR_KEYWORD]
    got = [p for p in actual if p.kind is not P.VAR_KEYWORD][: len(want)]
    assert [(p.name, p.kind) for p in got] == [(p.name, p.kind) for p in want], (
        f"sim.{module}.{name}{inspect.signature(fn)} is not the signature of issue {issue}: {spec}"
    )
    for p, q in zip(got, want):
        if q.default is Ellipsis:
            assert p.default is not P.empty, f"{name}: {p.name} needs a default"
        else:
            assert p.default == q.default and type(p.default) is type(q.default), (
                f"{name}: default of {p.name} is {p.default!r}, issue {issue} says {q.default!r}"
            )
    if any(q.kind is P.VAR_KEYWORD for q in stated.parameters.values()):
        assert actual[-1].kind is P.VAR_KEYWORD, f"sim.{module}.{name} must keep its **params"
    for p in actual:  # added by a later issue: with a default, so the stated calls still work
        if p.name not in stated.parameters and p.kind is not P.VAR_KEYWORD:
            assert p.default is not P.empty, f"sim.{module}.{name}: added parameter {p.name} needs a default"
    if issue == 3 or name != "simulate":  # parameters added later are keyword-only
        extra = [p for p in actual if p.name not in stated.parameters and p.kind is not P.VAR_KEYWORD]
        assert all(p.kind is P.KEYWORD_ONLY for p in extra), (
            f"sim.{module}.{name}: parameters added after issue {issue} must be keyword-only: {extra}"
        )


def test_table_parses_and_names_distinct_functions():
    stated = [_stated(s)[:2] for _, s in PUBLIC_API]
    assert len(set(stated)) == len(stated) - 1  # simulate appears twice (the foundation and the engine both state it)
