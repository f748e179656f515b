"""The partial plotly.js bundles under ``assets/vendor/plotly/`` and which one a figure needs.

The plotly package's own bundle (4.8 MB, every trace type) is what a page loaded before; this app
draws five trace types. ``assets/vendor/plotly/manifest.json`` lists bundles built from plotly.js's
``lib/core`` plus exactly those types (``scripts/vendor_plotly.sh`` rebuilds them with pinned
plotly.js and esbuild and checks their sha256): ``2d`` (scatter, bar, heatmap, contour: 1.2 MB,
410 kB gzipped) for pages without a 3-D scene, ``3d`` (the same and scatter3d: 1.8 MB) for the
others. A figure gets the first bundle in the manifest's order that has all of its trace types;
one with a type no bundle has gets the full bundle (:func:`ui.kit.chart.plotly_js`). A bundle is
used only when its file is there, has the manifest's sha256 and is built from the plotly.js version
the installed plotly package ships (the figures' JSON is made for that version); otherwise the
full bundle is served in its place (a missing or stale file never breaks a chart).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
VENDOR = ROOT / "assets" / "vendor" / "plotly"
MANIFEST = VENDOR / "manifest.json"
#: trace types drawn in a 3-D scene
SCENE_TYPES = frozenset({"scatter3d", "surface", "mesh3d", "cone", "streamtube", "isosurface", "volume"})
log = logging.getLogger("ui.kit.bundles")


@functools.cache
def manifest() -> dict:
    """The manifest (``{}`` when it is missing or unreadable)."""
    try:
        return json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@functools.cache
def usable(version: str) -> tuple[tuple[str, Path, frozenset], ...]:
    """``(name, file, trace types)`` of each bundle that can stand in for plotly.js ``version``,
    in the manifest's order."""
    m = manifest()
    if not m or m.get("plotly.js") != version:
        if m:
            log.warning(
                "vendored plotly.js %s is not the installed plotly's %s: the full bundle is served",
                m.get("plotly.js"),
                version,
            )
        return ()
    out = []
    for name, b in (m.get("bundles") or {}).items():
        path = VENDOR / str(b.get("file", ""))
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            log.warning("vendored plotly.js bundle %s is missing: the full bundle is served", path.name)
            continue
        if digest != b.get("sha256"):
            log.warning("vendored plotly.js bundle %s differs from its manifest: not served", path.name)
            continue
        out.append((name, path, frozenset(b.get("traces") or ())))
    return tuple(out)


def trace_types(figure: dict) -> set[str]:
    """The trace types a figure (as sent: a dict) draws, its frames' included."""
    types = {str(t.get("type") or "scatter") for t in figure.get("data") or ()}
    for fr in figure.get("frames") or ():
        types |= {str(t.get("type") or "scatter") for t in (fr.get("data") or ())}
    return types


def has_scene(figure: dict, types: set[str] | None = None) -> bool:
    """Whether a figure draws a 3-D scene."""
    types = trace_types(figure) if types is None else types
    return bool(types & SCENE_TYPES) or any(k.startswith("scene") for k in (figure.get("layout") or {}))


def choose(types: set[str], version: str) -> list[str]:
    """The names of the usable bundles that have every type in ``types``, smallest first (the
    manifest's order); empty: only the full bundle has them."""
    return [name for name, _, traces in usable(version) if types <= traces]


def path_of(name: str, version: str) -> Path | None:
    return next((p for n, p, _ in usable(version) if n == name), None)
