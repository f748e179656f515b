"""The architecture in one test: sim/ is pure numerics, pages stay thin, the stack is one-way.

The layers (docs/architecture.md tells the same story):

========  =====================================================================  ==================
layer     modules                                                                may import
========  =====================================================================  ==================
sim       ``sim.*``                                                              sim
kit       ``ui.kit.spec, i18n, safe, lang, table, compute, hooks, cover, finish,       kit
          frozen, figures, style, access, share, nav, predict, notebook, page``
server    ``ui.server.serve, runs, jobs, prepare``                                      kit, server, class,
                                                                                 sim
class     ``ui.teaching.instructor, answers, editor, params_file, classroom, class_store``  kit, class
views     ``views.*`` (data, figures and steps of each page)                     kit, views, sim
pages     ``pages.*``                                                            kit, server, views,
                                                                                 sim
app       ``app``                                                                everything
========  =====================================================================  ==================

Every import counts, also one inside a function; no two project modules may import each other,
directly or round a longer loop. The class features reach the kit only through ``ui.kit.hooks``
(registered by app.py), never the other way.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
        bad = _imports(f) & {"streamlit", "plotly", "ui", "pages", "views", "app", "bench", "scripts", "tests"}
        assert not bad, f"{f.relative_to(ROOT)} imports {bad}"


def test_bench_and_scripts_never_import_tests():
    """bench/ and scripts/ use the product and each other (bench/harness.py, bench/browser.py hold
    what the tests share with them), never tests/: a measurement must not depend on test code."""
    bad = []
    for d in ("bench", "scripts"):
        for f in sorted((ROOT / d).rglob("*.py")):
            if "tests" in _imports(f):
                bad.append(str(f.relative_to(ROOT)))
    assert bad == []


def test_import_scanner_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from tests.conftest import app_test\n\n\ndef g():\n    import tests.e2e\n")
    assert "tests" in _imports(f)


def test_pages_define_no_numba_kernels():
    for f in sorted((ROOT / "pages").glob("*.py")) + sorted((ROOT / "views").glob("*.py")):
        assert "numba" not in _imports(f), f"{f.name}: kernels belong in sim/"


def test_pages_are_thin():
    """A page file is its SCHEMA and a render() that reads like the page (README, *A new page*);
    its data adapters and figure builders live in views/<page>.py."""
    for f in sorted((ROOT / "pages").glob("*.py")):
        n = len(f.read_text(encoding="utf-8").splitlines())
        assert n <= 250, f"pages/{f.name}: {n} lines; data and figures belong in views/{f.name}"


def test_every_registered_page_has_its_files():
    from ui.kit.nav import PAGES

    for e in PAGES:
        assert (ROOT / "pages" / f"{e.stem}.py").is_file()
        assert (ROOT / "views" / f"{e.stem}.py").is_file()
        for lang in ("en", "zh"):
            assert (ROOT / "assets" / "text" / lang / f"{e.stem}.toml").is_file()


def test_show_code_shows_the_page_and_its_views():
    """The 'show this page's code' toggle shows what a student reads, not the ui/ machinery."""
    import importlib

    from ui.kit.page import page_sources

    importlib.import_module("pages.two_point.page")
    got = page_sources("two_point")
    assert [p for p, _ in got] == ["pages/two_point/page.py", "pages/two_point/views.py"]
    importlib.import_module("pages.depth_sum.page")
    assert [p for p, _ in page_sources("depth_sum")] == ["pages/depth_sum/page.py", "pages/depth_sum/views.py",
                                                         "pages/depth_sum/figures.py"]
    assert "def render" in got[0][1] and "@cached_figure" in got[1][1]


# --------------------------------------------------------------------------- the one-way stack
KIT = {"ui.kit.spec", "ui.kit.i18n", "ui.kit.safe", "ui.kit.lang", "ui.kit.table", "ui.kit.compute", "ui.kit.hooks", "ui.kit.cover",
       "ui.kit.finish", "ui.kit.frozen", "ui.kit.chart", "ui.kit.figures", "ui.kit.style", "ui.kit.access", "ui.kit.share", "ui.kit.nav",
       "ui.kit.predict", "ui.kit.notebook", "ui.kit.page"}
SERVER = {"ui.server.serve", "ui.server.runs", "ui.server.jobs", "ui.server.prepare"}
CLASS = {"ui.teaching.instructor", "ui.teaching.answers", "ui.teaching.editor", "ui.teaching.params_file", "ui.teaching.classroom", "ui.teaching.class_store"}
MAY_IMPORT = {
    "sim": {"sim"},
    "kit": {"kit"},
    "server": {"kit", "server", "class", "sim"},   # the sign-out route writes to the class store
    "class": {"kit", "class"},
    "views": {"kit", "views", "sim"},
    "pages": {"kit", "server", "views", "sim"},
    "app": {"sim", "kit", "server", "class", "views", "pages", "app"},
}


def _layer(mod: str) -> str:
    top = mod.split(".")[0]
    if top in ("sim", "views", "pages", "app"):
        return top
    for name, group in (("kit", KIT), ("server", SERVER), ("class", CLASS)):
        if mod in group:
            return name
    raise AssertionError(f"{mod}: in no layer of tests/test_layering.py (add it to the table)")


def _project_modules() -> dict[str, Path]:
    """Dotted name -> file, sub-packages included (``sim/attention/api.py`` is ``sim.attention.api``,
    ``sim/attention/__init__.py`` is ``sim.attention``); the top-level packages' ``__init__`` are left
    out (every module of a package runs it: it is not a dependency of one module on another)."""
    mods = {"app": ROOT / "app.py"}
    for pkg in ("sim", "ui", "views", "pages"):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if len(parts) > 1:
                mods[".".join(parts)] = f
    return mods


def _targets(name: str, path: Path, node, mods) -> set[str]:
    """The project modules one import statement of module ``name`` (file ``path``) names."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in mods}
    if node.level:  # relative: from its package, up level - 1
        pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        pkg = pkg[:len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    else:
        base = node.module
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


def test_no_import_cycles():
    """No loop of imports among the project's modules, counting imports inside functions."""
    assert _cycles(import_graph()) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_layer_imports_only_what_is_below_it():
    """The kit imports nothing above it (no class feature, server, view or page); the class
    features and the server stay apart; views never import pages."""
    bad = []
    for mod, deps in import_graph().items():
        allowed = MAY_IMPORT[_layer(mod)]
        bad += [f"{mod} ({_layer(mod)}) imports {d} ({_layer(d)})" for d in sorted(deps) if _layer(d) not in allowed]
    assert bad == []


def test_class_features_reach_the_kit_through_one_hook():
    """Ctx.section knows no section by name: what sits under the questions is registered (ui/kit/hooks.py)."""
    src = (ROOT / "ui" / "page.py").read_text(encoding="utf-8")
    assert "questions" not in src and "show_answers" not in src
    assert "hooks.register(" in (ROOT / "app.py").read_text(encoding="utf-8")


def test_import_graph_resolves_sub_packages_and_relative_imports():
    mods = {"sim.p": Path("sim/p/__init__.py"), "sim.p.a": Path("sim/p/a.py"), "sim.p.b": Path("sim/p/b.py"),
            "sim.q": Path("sim/q.py")}

    def t(name, src):
        return set().union(*(_targets(name, mods[name], n, mods) for n in ast.walk(ast.parse(src))
                             if isinstance(n, (ast.Import, ast.ImportFrom))))

    assert t("sim.p.a", "from . import b\nfrom ..q import x") == {"sim.p.b", "sim.q"}
    assert t("sim.p", "from .a import f\nfrom sim.p.b import g") == {"sim.p.a", "sim.p.b"}
    assert t("sim.p.b", "from sim.p import a\nimport sim.q") == {"sim.p.a", "sim.q"}
    assert "sim.attention.api" in _project_modules()
