"""Every worked answer that states a computed number is checked against ``sim/``.

Each check recomputes the answer's numbers (with ``sim/`` where the page computes them, with the
answer's own closed form where it is arithmetic) and asserts that the answer, in both languages,
shows them as rounded. ``test_every_answer_with_a_number_is_checked`` fails on a new answer with a
decimal number that has no check here (or no line in ``NOT_RESULTS`` saying why it needs none).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from ui.kit.i18n import Text

LANGS = ("en", "zh")


def answer(stem: str, q: str, lang: str) -> str:
    return Text(stem, lang)(f"answers.{q}")


def shows(stem: str, q: str, *quoted: str) -> None:
    """Each quoted string (as the answer writes it) is in the answer in both languages."""
    for lang in LANGS:
        text = answer(stem, q, lang).replace("\\,", "").replace("\u2009", "")
        for s in quoted:
            assert s in text, (stem, q, lang, s)


def close(value: float, quoted: str, rel: float | None = None) -> None:
    """``value`` rounds to ``quoted`` (its last digit, or within ``rel``)."""
    want = float(quoted.replace("\\times10^{", "e").replace("}", ""))
    if rel is None:
        mant = quoted.split("\\times")[0]
        digits = len(mant.split(".")[1]) if "." in mant else 0
        scale = (
            10.0 ** (math.floor(math.log10(abs(want))) - len(mant.replace(".", "").lstrip("0")) + 1)
            if "times" in quoted
            else 10.0**-digits
        )
        assert abs(value - want) <= 0.5 * scale * (1 + 1e-9), (value, quoted)
    else:
        assert abs(value - want) <= rel * abs(want), (value, quoted)


# --------------------------------------------------------------------------- the checks
def check_two_point_q4():
    from sim import two_point as tp

    e = {f: tp.discretisation_error(1.0, 1.0, 5.0, np.array([0.1, 0.05]), f) for f in ("SA", "USA")}
    close(e["SA"][0], "0.057")
    close(e["USA"][0], "0.14")
    close(e["SA"][0] / 0.1, "0.57")
    close(e["USA"][0] / 0.1, "1.4")
    close(math.log(e["USA"][0] / e["USA"][1]) / math.log(2.0), "0.92")
    close(0.1 * math.e, "0.27")
    for f, d, layers in (("SA", 1.7e-3, 3000), ("USA", 6.4e-4, 7800)):
        err = tp.discretisation_error(1.0, 1.0, 5.0, np.array([d]), f)[0]
        assert 0.9e-3 < err < 1.1e-3, (f, err)
        assert abs(5.0 / d - layers) < 0.05 * layers
    small = tp.discretisation_error(1.0, 1.0, 5.0, np.array([6.4e-4]), "USA")[0] / 6.4e-4
    close(small, "1.56", rel=0.01)
    shows("two_point", "q4", "0.057", "0.14", "0.57", "1.4", "0.92", "0.27", "1.56", "6.4\\times10^{-4}", "7800")


def check_width_q5():
    from sim import width as W

    xs, _ = W.dataset("close_pair")
    lam = {
        N: np.array([np.linalg.eigvalsh(W.kernel(*W.paired_init(N, s), xs)) for s in range(100)]) for N in (128, 512)
    }
    l0 = lam[128][0]
    close(l0[1], "1.71", rel=0.005)
    close(l0[0], "2.7\\times10^{-3}")
    close(lam[128][:, 0].min(), "2.2\\times10^{-3}", rel=0.03)
    close(lam[128][:, 0].max(), "3.3\\times10^{-3}", rel=0.03)
    close(lam[512][:, 0].min(), "2.6\\times10^{-3}", rel=0.03)
    close(lam[512][:, 0].max(), "3.0\\times10^{-3}", rel=0.03)
    assert abs(1.0 / l0[0] - 380) < 10 and abs(3.0 / l0[0] - 1100) < 30
    close(1.0 - math.exp(-10 * l0[0]), "0.026", rel=0.05)
    shows("width", "q5", "1.71", "2.7", "2.2", "3.3", "2.6", "3.0", "380", "1100")


def check_coordinates_q1():
    from sim import coordinates as co

    a0 = 0.1  # a₀ = b₀, θ₀ = 0.01
    eu = co.theta_flow(a0, a0, 1.0, [1.0, 3.0], "euclidean")
    pb = co.theta_flow(a0, a0, 1.0, [1.0, 3.0], "pullback")
    close(eu[0], "0.069")
    close(eu[1], "0.80")
    close(pb[0], "0.64")
    close(pb[1], "0.95")
    shows("coordinates", "q1", "0.069", "0.80", "0.64", "0.95")


def check_rotation_q1():
    from sim import rotation as ro
    from pages.rotation.views import example

    close(ro.area_rate(*example(30.0, 4.0, 0.1)), "-0.234")
    close(ro.area_rate(*example(45.0, 10.0, 0.0)), "-0.409")
    shows("rotation", "q1", "0.234", "0.409", "0.866")


def check_rotation_q5():
    from sim import rotation as ro
    from pages.rotation.views import example

    H, D = example(45.0, 10.0, 0.0)
    close(ro.area_rate(H, D), "-0.409")
    close(ro.em_area_rate(H, D, 0.005), "-0.411")
    close(ro.em_area_rate(H, D, 0.05), "-0.429")
    shows("rotation", "q5", "0.409", "0.411", "0.429")


def check_block_q1():
    from sim import block as bk

    value, at = bk.rope_largest_return(2, 100, 100_000)
    close(value, "0.9999993")
    assert at == 84_823
    shows("block", "q1", "0.9999993", "84")


def check_block_q2():
    from sim import block as bk

    close(bk.rmsnorm_gain(np.array([1.0]), 1e-3), "0.000999")
    close(1.0 / math.sqrt(1.0 + 1e-3), "0.9995")
    shows("block", "q2", "0.000999", "0.9995")


def check_block_q6():
    from sim import block as bk

    delta = math.log(1e5 - 1)
    close(delta, "11.51")
    close(float(np.asarray(bk.sink_mass(delta, [1e5])).ravel()[0]), "0.5", rel=1e-9)
    close(math.log(10.0), "2.3")
    shows("block", "q6", "11.51", "2.3")


def check_measures_q3():
    from sim import measures as ms

    C = ms.stability_constant(1.0, 0.1)
    close(C, "26.85")
    close(math.log(math.pi / 0.1), "3.447")
    close(math.log(math.pi / 0.1) / C, "0.128")
    close(math.pi * math.exp(-C), "6.8\\times10^{-12}")
    shows("measures", "q3", "26.85", "3.447", "0.128", "6.8\\times10^{-12}")


def check_low_temperature_q2():
    close(math.tan(0.1), "0.1003")
    close(math.log(100 / 0.1003), "6.9")
    assert round(math.log(100 / 0.1003) / 0.5) == 14
    shows("low_temperature", "q2", "0.1003", "6.9", "14")


def check_hemisphere_q4():
    close(-math.log(1.1) / 0.1, "-0.953")
    shows("hemisphere", "q4", "0.953")


def check_hemisphere_q5():
    from sim import two_point as tp

    close(math.exp(-9 * (1 - math.cos(math.pi / 3))), "0.011")
    rate = 2 * math.sin(math.pi / 3) / (1 + math.exp(4.5))
    close(rate, "0.019")
    # the two-point SA equation in the half angle ϑ = θ/2 (page "Two points"): 60° → 1° at β = 9
    t = np.linspace(0.0, 20.0, 20001)
    th = 2 * tp.half_angle(9.0, math.pi / 6, t, "SA")
    depth = t[np.argmax(th <= math.radians(1.0))]
    assert abs(depth - 12) < 1.0, depth
    t = np.linspace(0.0, 400.0, 400001)
    th = 2 * tp.half_angle(18.0, math.pi / 6, t, "SA")
    assert abs(t[np.argmax(th <= math.radians(1.0))] - 335) < 1
    # β = 36 lies beyond sim's depth limit (10⁶): the same equation's depth by quadrature
    from scipy.integrate import quad

    T = quad(
        lambda x: (1 + math.exp(36.0 * (1 - math.cos(x)))) / (2 * math.sin(x)),
        math.radians(1.0),
        math.pi / 3,
        limit=200,
    )[0]
    close(T, "1.3\\times10^{6}")
    shows("hemisphere", "q5", "0.011", "0.019", "12", "335", "1.3\\times10^{6}")


def check_nonnormal_q4():
    from sim.nonnormal import operator as op

    k = op.kappa(6.0, 0.01)
    assert abs(k - 1200) < 1
    s = np.linspace(0.0, 3.0, 3001)
    norms = op.flow_norm(6.0, s, 0.01)
    i = int(np.argmax(norms))
    close(s[i], "0.94", rel=0.02)
    close(norms[i], "2.26")
    assert abs(k * math.exp(-s[i]) - 470) < 5  # κ(V)·max|e^{sλ}| at the peak
    assert abs(k * math.exp(-s[i]) / norms[i] - 200) < 10
    shows("nonnormal", "q4", "1200", "0.94", "2.26", "470", "200")


def check_nonnormal_q6():
    from sim.nonnormal import euler

    close(0.002 / 5.002, "4.0\\times10^{-4}")
    close(1 / (2 * math.e), "0.18")
    r = euler.euler_scalar(1.0, 5.4e-3, 5.0)
    assert 0.9e-3 < float(np.max(r["error"])) < 1.1e-3
    small = euler.euler_scalar(1.0, 1e-3, 5.0)
    close(float(np.max(small["error"])) / 1e-3, "0.18")
    assert abs(math.e * 5 - 14) < 0.5
    shows("nonnormal", "q6", "4.0\\times10^{-4}", "0.18", "5.4\\times10^{-3}", "14")


def check_gaussian_width_q4():
    w = _max_abs_width(1024)
    close(w, "3.44")
    close(math.sqrt(2 * math.log(2048)), "3.91")
    close(w / math.sqrt(2 * math.log(2048)), "0.88")
    for M, quoted in ((1e6, "0.93"), (1e12, "0.96")):
        close(_max_abs_width(M) / math.sqrt(2 * math.log(2 * M)), quoted)
    N = 2048
    close(1 - (math.log(math.log(N)) + math.log(4 * math.pi)) / (4 * math.log(N)), "0.85")
    shows("gaussian_width", "q4", "3.44", "3.91", "0.88", "0.85", "0.93", "0.96")


def _max_abs_width(M: float) -> float:
    """E max_{i<=M} |g_i| for iid N(0,1) (quadrature of 1 - P(|g| <= r)^M), as the page's exact width."""
    from scipy import integrate, special

    f = lambda r: -math.expm1(M * math.log(special.erf(r / math.sqrt(2))))  # noqa: E731
    return integrate.quad(f, 0.0, 60.0, limit=400, points=[math.sqrt(2 * math.log(2 * M))])[0]


def check_depth_sum_q3():
    close(math.sqrt(0.5), "0.71")
    shows("depth_sum", "q3", "0.71")


def check_measures_q5():
    # W₁ ∝ n^(−1/10): halving it takes n × 2¹⁰ = 1024; with n^(−1/2) a factor 4
    assert 2**10 == 1024 and 1024.0 ** (-1 / 10) == pytest.approx(0.5, rel=1e-12)
    assert 4.0 ** (-1 / 2) == 0.5 and 3.0 ** (-1 / 2) > 0.5  # and no smaller whole factor does it
    assert 1023.0 ** (-1 / 10) > 0.5
    shows("measures", "q5", "1024", "$4$")


def check_low_temperature_q3():
    # W₂ between two n-point clouds at the poles ±e₁ with a and a' points at +e₁: sqrt(4k/n), k = |a − a'|
    from sim import low_temperature as lt

    n, d = 7, 3
    e1 = np.eye(d)[0]
    for a, a2 in ((5, 2), (3, 3), (0, 7), (4, 5)):
        X = np.array([e1] * a + [-e1] * (n - a))
        Y = np.array([-e1] * (n - a2) + [e1] * a2)  # another order: only the net number counts
        k = abs(a - a2)
        assert lt.w2(X, Y) == pytest.approx(math.sqrt(4 * k / n), abs=1e-12), (a, a2)
    assert np.linalg.norm(e1 - (-e1)) == 2.0
    shows("low_temperature", "q3", "= 2$", "\\cdot 4$", "\\sqrt{4k/n}")


CHECKS = {name[len("check_") :]: fn for name, fn in globals().items() if name.startswith("check_")}

#: answers whose decimal numbers are parameter values or exact fractions, not computed results
NOT_RESULTS = {
    "coordinates_q4": "0.5 is y₀'s second component",
    "block_q4": "diag(1,2) and diag(3,5): an example of commuting matrices, any would do",
    "block_q5": "'from slot 3 on': the positions of the two exchanged tokens 1 and 2",
    "nonnormal_q2": "4 and 2 are coefficients of the algebra (s²M²/4 = M²/4 − 1), not results",
    "width_q3": "N^(−3/2): an exponent of the derivation, not a result",
}


@pytest.mark.parametrize("key", sorted(CHECKS))
def test_answer_numbers(key):
    CHECKS[key]()


#: a number an answer states: a decimal (0.057, 2.7), or a whole number of 3 or more (1024, 7800, 380)
#: that is not an exponent, subscript or a digit of a LaTeX command (n^{-1/10}, 10^{-3}, e_1, \frac1n);
#: 0, 1 and 2 alone are the constants of formulas (1/n, a factor 2, x = 0), not results
STATED = re.compile(r"(?<![\w.])\d+\.\d+|(?<![\w.{^_\\/-])(?:[3-9]|[1-9]\d+)(?![\d.])")


def stated_numbers(body: str) -> list[str]:
    return STATED.findall(body.replace("\\approx", " "))


def _answers_with_numbers():
    import tomllib

    from ui.kit import files

    out = []
    for stem in files.stems_on_disk():
        for q, body in tomllib.loads(files.text_file(stem, "en").read_text()).get("answers", {}).items():
            if isinstance(body, str) and stated_numbers(body):
                out.append(f"{stem}_{q}")
    return out


def test_the_number_finder_sees_decimals_and_whole_numbers():
    assert stated_numbers("about 0.057 and $2.7\\times10^{-3}$") == ["0.057", "2.7"]
    assert stated_numbers("$2^{10} = 1024$; a factor $4$; 7800 layers") == ["1024", "4", "7800"]
    assert stated_numbers("$n^{-1/10}$, $e_1$, $\\frac1n$, a factor 2, $x = 0$") == []


def test_every_answer_with_a_number_is_checked():
    """Every worked answer that states a number, a decimal or a whole one, has a check above (or a
    line in NOT_RESULTS saying why the number is not a result)."""
    found = _answers_with_numbers()
    assert "measures_q5" in found and "low_temperature_q3" in found and "two_point_q4" in found
    missing = [k for k in found if k not in CHECKS and k not in NOT_RESULTS]
    assert not missing, missing
