"""The architecture in one test: sim/ is pure numerics, pages stay thin, the stack is one-way.

A module's layer is read from its folder, never from a list of modules: ``ui/kit/*`` is the layer
``ui.kit``, ``pages/two_point/views.py`` the layer ``pages``, ``bench/latency.py`` the layer ``bench``;
a file directly in ``ui/`` (the one door to Streamlit's internals) the layer ``ui``. What a layer may
import is the one table below (docs/architecture.md prints it from here); a folder of Python files
with no row fails the test until its rule is written.

Every import counts, also one inside a function; no two project modules may import each other,
directly or round a longer loop (bench/, scripts/, harness/ and tests/ included, every ``__init__.py``
too). The class features reach the kit only through ``ui.kit.hooks`` (registered by app.py), never
the other way.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the folders whose Python files are the project's modules (the virtualenv and caches are not)
TOP = ("app.py", "sim", "ui", "pages", "harness", "bench", "scripts", "tests")

_APP = {"sim", "ui", "ui.kit", "ui.teaching", "ui.server", "pages", "app"}
#: layer -> the layers it may import (its own included)
MAY_IMPORT = {
    "sim": {"sim"},
    "ui": {"ui"},  # the door: streamlit_internals
    "ui.kit": {"ui", "ui.kit"},
    "ui.teaching": {"ui", "ui.kit", "ui.teaching"},
    "ui.server": {"ui", "ui.kit", "ui.teaching", "ui.server", "sim"},  # the sign-out route writes to the class store
    "pages": {"ui.kit", "ui.server", "pages", "sim"},  # ui.server: the shared heavy jobs (ui.server.jobs)
    "app": _APP,
    "harness": _APP | {"harness"},  # what tests and benchmarks share
    "scripts": _APP | {"harness", "scripts"},
    "bench": _APP | {"harness", "scripts", "bench"},
    "tests": _APP | {"harness", "scripts", "bench", "tests"},
}
#: a layer of the app: what runs in the server (never bench/, scripts/, harness/, tests/)
APP_LAYERS = frozenset(_APP)
LAYER_ORDER = (
    "sim",
    "ui",
    "ui.kit",
    "ui.teaching",
    "ui.server",
    "pages",
    "app",
    "harness",
    "scripts",
    "bench",
    "tests",
)


def layer_of(mod: str) -> str:
    """The layer of a dotted module name, from its folder."""
    parts = mod.split(".")
    if parts[0] == "ui" and len(parts) > 1 and (ROOT / "ui" / parts[1]).is_dir():
        return f"ui.{parts[1]}"
    return parts[0]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_sim_never_imports_ui_libraries():
    """Every file of sim/, its sub-packages included."""
    files = sorted((ROOT / "sim").rglob("*.py"))
    assert any(f.parent != ROOT / "sim" for f in files), "sim/ has sub-packages: rglob must find them"
    for f in files:
        bad = _imports(f) & {"streamlit", "plotly", "ui", "pages", "app", "harness", "bench", "scripts", "tests"}
        assert not bad, f"{f.relative_to(ROOT)} imports {bad}"


def test_import_scanner_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from tests.conftest import app_test\n\n\ndef g():\n    import tests.e2e\n")
    assert "tests" in _imports(f)


def test_pages_define_no_numba_kernels():
    for f in sorted((ROOT / "pages").rglob("*.py")):
        assert "numba" not in _imports(f), f"{f.relative_to(ROOT)}: kernels belong in sim/"


def test_pages_are_thin():
    """A page file is its SCHEMA and a render() that reads like the page (README, *A new page*);
    its data adapters and figure builders live beside it, in views.py (and figures.py)."""
    for f in sorted((ROOT / "pages").glob("*/page.py")):
        n = len(f.read_text(encoding="utf-8").splitlines())
        assert n <= MAX_LINES_PAGE_FILE, f"{f.relative_to(ROOT)}: {n} lines; data and figures belong in views.py"


#: the longest a file of a page folder may be (page, views, figures, predict, notebook, and the
#: modules a long one is split into), in lines as formatted
MAX_LINES_PAGE_FILE = 250


def test_page_files_are_short():
    """Every .py file of a page folder stays short: a views.py that grows long moves its figure
    builders to figures.py beside it (pages/depth_sum/ is the model)."""
    long = []
    for f in sorted((ROOT / "pages").glob("*/**/*.py")):
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES_PAGE_FILE:
            long.append(
                f"{f.relative_to(ROOT)}: {n} lines (at most {MAX_LINES_PAGE_FILE}; figure builders "
                "belong in figures.py)"
            )
    assert long == []


#: the longest a file may be: one job a file (sim/'s kernels and their references run longer)
MAX_LINES = {"sim": 800}
MAX_LINES_APP = 600


def test_each_file_one_job():
    long = []
    for name, path in _project_modules().items():
        if layer_of(name) not in APP_LAYERS:
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES.get(layer_of(name), MAX_LINES_APP):
            long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert long == []


def test_every_registered_page_has_its_files():
    from ui.kit import files
    from ui.kit.nav import PAGES

    for e in PAGES:
        assert files.source_file(e.stem, "page").is_file()
        for lang in ("en", "zh"):
            assert files.text_file(e.stem, lang).is_file()
        if e.stem not in ("home", "glossary"):
            assert files.has(e.stem, "views") and files.params_file(e.stem).is_file()


def test_show_code_shows_the_page_and_its_views():
    """The 'show this page's code' toggle shows what a student reads: the page and the data and
    figure modules of its folder (depth_sum's figures.py and the modules its views and figures
    continue in), not the ui/ machinery or its steps."""
    from ui.kit import files
    from ui.kit.page import page_sources

    files.page_module("two_point")
    got = page_sources("two_point")
    assert [p for p, _ in got] == ["pages/two_point/page.py", "pages/two_point/views.py"]
    files.page_module("depth_sum")
    assert [p for p, _ in page_sources("depth_sum")] == [
        "pages/depth_sum/page.py",
        "pages/depth_sum/views.py",
        "pages/depth_sum/views_resnet.py",
        "pages/depth_sum/figures.py",
        "pages/depth_sum/figures_marks.py",
        "pages/depth_sum/figures_resnet.py",
    ]
    assert "def render" in got[0][1] and "@cached_figure" in got[1][1]


# --------------------------------------------------------------------------- the one-way stack
def _project_modules() -> dict[str, Path]:
    """Dotted name -> file, for every Python file of the project, every ``__init__.py`` included
    (``sim/attention/api.py`` is ``sim.attention.api``, ``sim/attention/__init__.py`` is ``sim.attention``)."""
    mods = {"app": ROOT / "app.py"}
    for top in TOP[1:]:
        for f in sorted((ROOT / top).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = f
    return mods


def _targets(name: str, path: Path, node, mods) -> set[str]:
    """The project modules one import statement of module ``name`` (file ``path``) names. A bare
    name that is a file beside it (``from scale_check import x`` in scripts/, which are run as
    scripts with their folder on ``sys.path``) is that file."""
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def known(dotted: str) -> str | None:
        if dotted in mods:
            return dotted
        beside = ".".join(here + [dotted])
        return beside if here and beside in mods and dotted.split(".")[0] not in TOP else None

    if isinstance(node, ast.Import):
        return {m for a in node.names if (m := known(a.name))}
    if node.level:  # relative: from its package, up level - 1
        pkg = here[: len(here) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    else:
        base = known(node.module) or node.module
    out = set()
    for a in node.names:
        sub = f"{base}.{a.name}"
        if sub in mods:  # `from pkg import module`
            out.add(sub)
        elif base in mods:  # `from module import name`
            out.add(base)
    return out


def import_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports, at any depth of the code (functions too)."""
    mods = _project_modules()
    graph = {}
    for name, path in mods.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out |= _targets(name, path, node, mods)
        graph[name] = out - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_folder_has_a_rule():
    """A new folder of Python files is a new layer: it fails here until MAY_IMPORT says what it may import."""
    found = {layer_of(m) for m in _project_modules()}
    assert found == set(MAY_IMPORT) == set(LAYER_ORDER)


def test_no_import_cycles():
    """No loop of imports among the project's modules, counting imports inside functions."""
    assert _cycles(import_graph()) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_layer_imports_only_what_is_below_it():
    """The kit imports nothing above it (no class feature, server or page); the class features and
    the server stay apart; pages never reach the class features; the app never imports the harness,
    a benchmark, a script or a test; benchmarks and scripts never import tests."""
    bad = []
    for mod, deps in import_graph().items():
        allowed = MAY_IMPORT[layer_of(mod)]
        bad += [
            f"{mod} ({layer_of(mod)}) imports {d} ({layer_of(d)})" for d in sorted(deps) if layer_of(d) not in allowed
        ]
    assert bad == []


def test_a_page_folder_imports_no_other_page():
    """A page is found by name through the registry (ui.kit.files), never imported by another page."""
    bad = []
    for mod, deps in import_graph().items():
        if layer_of(mod) == "pages" and mod.count(".") >= 1:
            own = mod.split(".")[1]
            bad += [f"{mod} imports {d}" for d in deps if layer_of(d) == "pages" and d.split(".")[1:2] != [own]]
    assert bad == []


#: the app's modules that import a module by its name, and why
IMPORT_BY_NAME = {
    "ui/kit/files.py": "a page's modules, by its stem (the registry, the start-up import, notebooks)",
    "ui/server/prepare.py": "app.py's own imports, read from its source, in the start-up thread",
    "sim/warm.py": "each kernel module, by name, in its own child process",
    "ui/streamlit_internals.py": "the Streamlit and Plotly modules its table names, to check and patch them",
}


def test_import_module_only_where_a_module_is_found_by_name():
    """``importlib.import_module`` only where a module is found by name (above); pages are found
    through ui.kit.files, never by building their dotted names elsewhere."""
    users = {
        str(p.relative_to(ROOT))
        for m, p in _project_modules().items()
        if layer_of(m) in APP_LAYERS and "import_module(" in p.read_text(encoding="utf-8")
    }
    assert users == set(IMPORT_BY_NAME)


def test_class_features_reach_the_kit_through_one_hook():
    """Ctx.section knows no section by name: what sits under the questions is registered (ui/kit/hooks.py)."""
    src = (ROOT / "ui" / "kit" / "page.py").read_text(encoding="utf-8")
    assert "questions" not in src and "show_answers" not in src
    assert "hooks.register(" in (ROOT / "app.py").read_text(encoding="utf-8")


def test_import_graph_resolves_sub_packages_relative_and_sibling_imports():
    mods = {
        "sim.p": Path("sim/p/__init__.py"),
        "sim.p.a": Path("sim/p/a.py"),
        "sim.p.b": Path("sim/p/b.py"),
        "sim.q": Path("sim/q.py"),
        "scripts.x": Path("scripts/x.py"),
        "scripts.y": Path("scripts/y.py"),
    }

    def t(name, src):
        return set().union(
            *(
                _targets(name, mods[name], n, mods)
                for n in ast.walk(ast.parse(src))
                if isinstance(n, (ast.Import, ast.ImportFrom))
            )
        )

    assert t("sim.p.a", "from . import b\nfrom ..q import x") == {"sim.p.b", "sim.q"}
    assert t("sim.p", "from .a import f\nfrom sim.p.b import g") == {"sim.p.a", "sim.p.b"}
    assert t("sim.p.b", "from sim.p import a\nimport sim.q") == {"sim.p.a", "sim.q"}
    assert t("scripts.x", "from y import f\nimport y") == {"scripts.y"}
    assert "sim.attention.api" in _project_modules() and "ui.kit" in _project_modules()
    assert layer_of("ui.kit.page") == "ui.kit" and layer_of("ui.streamlit_internals") == "ui"
    assert layer_of("pages.two_point.views") == "pages" and layer_of("bench.latency") == "bench"


# --------------------------------------------------------------------------- docs/architecture.md
DOC = ROOT / "docs" / "architecture.md"


def _folder_of(layer: str) -> str:
    return {"app": "`app.py`", "ui": "`ui/*.py`"}.get(layer, f"`{layer.replace('.', '/')}/`")


def layer_table() -> str:
    """The layers as this test derives them: folder, its modules, what it may import."""
    by_layer: dict[str, list[str]] = {}
    for m in _project_modules():
        by_layer.setdefault(layer_of(m), []).append(m)
    rows = ["| layer | folder | modules | may import |", "| --- | --- | --- | --- |"]
    for layer in LAYER_ORDER:
        mods = sorted(by_layer.get(layer, []))
        if layer in APP_LAYERS and layer not in ("app", "pages", "sim"):
            shown = ", ".join(f"`{m.rsplit('.', 1)[-1]}`" for m in mods if m != layer)
        else:
            shown = f"{len(mods)} module{'s' if len(mods) != 1 else ''}"
        allowed = ", ".join(x for x in LAYER_ORDER if x in MAY_IMPORT[layer] and x != layer) or "—"
        rows.append(
            f"| {layer} | {_folder_of(layer)} | {shown} | itself, {allowed} |"
            if allowed != "—"
            else f"| {layer} | {_folder_of(layer)} | {shown} | itself |"
        )
    return "\n".join(rows)


def page_files_table() -> str:
    """What a page folder holds, from ui/kit/files.py's own table."""
    import re

    from ui.kit import files

    doc = files.__doc__
    body = doc[doc.index("=====") :]
    width = len(body.split()[0])  # the first column of the reST table
    rows = ["   | file | what it holds |", "   | --- | --- |"]
    for ln in body.splitlines()[1:]:
        if ln.startswith("====="):
            break
        name, what = (re.sub(r":\w+:", "", x.strip()).replace("``", "`") for x in (ln[:width], ln[width:]))
        rows.append(f"   | {name} | {what} |")
    return "\n".join(rows)


def internals_table() -> str:
    """Every private Streamlit/Plotly name the app relies on, from the door's own table."""
    from ui import streamlit_internals as door

    rows = ["| name | replaced or read | target | why | verified on |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| `{e.name}` | {e.kind} | `{e.target}` | {e.why} | {e.verified} |" for e in door.TABLE]
    return "\n".join(rows)


def _sections() -> dict[str, str]:
    return {"page-files": page_files_table(), "layers": layer_table(), "streamlit-internals": internals_table()}


def _render(text: str, sections: dict[str, str]) -> str:
    import re

    for key, body in sections.items():
        pat = re.compile(rf"(<!-- generated: {key}\b[^>]*-->\n)(.*?)(<!-- /generated -->)", re.S)
        assert pat.search(text), f"docs/architecture.md has no generated section {key!r}"
        text = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text)
    return text


def test_architecture_doc_is_generated_from_the_code():
    """docs/architecture.md prints the layers and the files of a page as the code has them; run
    ``.venv/bin/python tests/test_layering.py`` to rewrite its generated sections."""
    text = DOC.read_text(encoding="utf-8")
    assert _render(text, _sections()) == text, "docs/architecture.md is stale: python tests/test_layering.py"


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    DOC.write_text(_render(DOC.read_text(encoding="utf-8"), _sections()), encoding="utf-8")
    print(f"rewrote the generated sections of {DOC.relative_to(ROOT)}")
