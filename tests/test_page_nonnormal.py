"""What the nonnormal page draws is what sim/ computes: solid curves are the closed forms,
simulation markers are the sim functions (several parameter values)."""

import numpy as np
import pytest

from sim import nonnormal as nn
from tests.conftest import app_test, chart_specs, decode


@pytest.mark.parametrize("M", [6.0, 1.5, 13.3])
def test_nonnormal_envelope_peak_and_responses(M):
    at = app_test("nonnormal", {"M": str(M), "s_max": "6"})
    assert not at.exception
    fig = chart_specs(at)[0]
    env = next(
        tr for tr in fig["data"] if "sA" in tr["name"] and "‖<sub>2</sub>" in tr["name"] and tr.get("mode") == "lines"
    )
    s, y = decode(env["x"]), decode(env["y"])
    assert s[-1] == pytest.approx(6.0)
    np.testing.assert_allclose(y, nn.operator_norm(M, s), rtol=1e-12)
    from scipy.linalg import expm

    A = np.array([[-1.0, M], [0.0, -1.0]])
    for si in s[::80]:
        assert nn.operator_norm(M, [si])[0] == pytest.approx(np.linalg.norm(expm(si * A), 2), rel=1e-10)
    pk = [tr for tr in fig["data"] if tr.get("mode") == "markers"][0]
    s_star, val = nn.peak(M)
    assert decode(pk["x"])[0] == pytest.approx(s_star, abs=1e-12)
    assert decode(pk["y"])[0] == pytest.approx(val, rel=1e-12)
    if abs(M) <= 2:
        assert s_star == 0 and val == 1
    # every response stays under the envelope
    for tr in fig["data"][:6]:
        assert np.all(decode(tr["y"]) <= y * (1 + 1e-12))


@pytest.mark.parametrize("M,s_max", [(6.0, 5.0), (2.5, 3.0)])
def test_nonnormal_ellipse_frames_are_the_flow_of_the_circle(M, s_max):
    """Every animation frame is e^{sA} applied to the unit circle and to the marked x0, and the drawn
    major semi-axis has length ||e^{sA}||_2 (float32 on the wire: 1e-6 relative)."""
    from scipy.linalg import expm

    at = app_test("nonnormal", {"M": str(M), "s_max": str(s_max)})
    assert not at.exception
    fig = next(f for f in chart_specs(at) if f.get("frames"))
    A = np.array([[-1.0, M], [0.0, -1.0]])
    frames = fig["frames"]
    assert len(frames) > 10
    for k in range(0, len(frames), max(1, len(frames) // 7)):
        fr = frames[k]
        s = k * s_max / (len(frames) - 1)  # frames are evenly spaced over [0, s_max] ...
        assert float(fr["name"]) == pytest.approx(s, abs=5e-4)  # ... and named by s (3 decimals)
        E = expm(s * A)
        ell, pts, axis = (np.stack([decode(tr["x"]), decode(tr["y"])], 1) for tr in fr["data"])
        # each ellipse point is E u for a unit u: E^{-1} maps it back onto the circle
        back = np.linalg.solve(E, ell.astype(float).T).T
        np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, rtol=2e-5)
        th = np.arange(pts.shape[0] // 2) * np.pi / (pts.shape[0] // 2)
        x0 = np.concatenate([np.stack([np.cos(th), np.sin(th)], 1), -np.stack([np.cos(th), np.sin(th)], 1)])
        np.testing.assert_allclose(pts, x0 @ E.T, rtol=1e-5, atol=1e-6 * np.abs(E).max())
        assert np.linalg.norm(axis[1] - axis[0]) == pytest.approx(np.linalg.norm(E, 2), rel=1e-9)
