"""The architecture in one test: sim/ is pure numerics, pages stay thin, the stack is one-way.

The layers (docs/architecture.md tells the same story):

========  =====================================================================  ==================
layer     modules                                                                may import
========  =====================================================================  ==================
sim       ``sim.*``                                                              sim
kit       ``ui.spec, i18n, safe, lang, table, compute, hooks, cover, finish,       kit
          frozen, figures, style, access, share, nav, predict, page``
server    ``ui.serve, runs, jobs``                                               kit, server, sim
class     ``ui.instructor, answers, editor, params_file, classroom, class_store``  kit, class
views     ``views.*`` (data, figures and steps of each page)                     kit, views, sim
pages     ``pages.*``                                                            kit, server, views,
                                                                                 sim
app       ``app``                                                                everything
========  =====================================================================  ==================

Every import counts, also one inside a function; no two project modules may import each other,
directly or round a longer loop. The class features reach the kit only through ``ui.hooks``
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
    for f in sorted((ROOT / "sim").glob("*.py")):
        bad = _imports(f) & {"streamlit", "plotly", "ui", "pages"}
        assert not bad, f"{f.name} imports {bad}"


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
    from ui.nav import PAGES

    for e in PAGES:
        assert (ROOT / "pages" / f"{e.stem}.py").is_file()
        assert (ROOT / "views" / f"{e.stem}.py").is_file()
        for lang in ("en", "zh"):
            assert (ROOT / "assets" / "text" / lang / f"{e.stem}.toml").is_file()


def test_show_code_shows_the_page_and_its_views():
    """The 'show this page's code' toggle shows what a student reads, not the ui/ machinery."""
    import importlib

    from ui.page import page_sources

    importlib.import_module("pages.two_point")
    got = page_sources("two_point")
    assert [p for p, _ in got] == ["pages/two_point.py", "views/two_point.py"]
    importlib.import_module("pages.depth_sum")
    assert [p for p, _ in page_sources("depth_sum")] == ["pages/depth_sum.py", "views/depth_sum.py",
                                                         "views/depth_sum_figures.py"]
    assert "def render" in got[0][1] and "@cached_figure" in got[1][1]


# --------------------------------------------------------------------------- the one-way stack
KIT = {"ui.spec", "ui.i18n", "ui.safe", "ui.lang", "ui.table", "ui.compute", "ui.hooks", "ui.cover",
       "ui.finish", "ui.frozen", "ui.figures", "ui.style", "ui.access", "ui.share", "ui.nav",
       "ui.predict", "ui.page"}
SERVER = {"ui.serve", "ui.runs", "ui.jobs"}
CLASS = {"ui.instructor", "ui.answers", "ui.editor", "ui.params_file", "ui.classroom", "ui.class_store"}
MAY_IMPORT = {
    "sim": {"sim"},
    "kit": {"kit"},
    "server": {"kit", "server", "sim"},
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
    mods = {"app": ROOT / "app.py"}
    for pkg in ("sim", "ui", "views", "pages"):
        for f in sorted((ROOT / pkg).glob("*.py")):
            if f.stem != "__init__":
                mods[f"{pkg}.{f.stem}"] = f
    return mods


def import_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports, at any depth of the code (functions too)."""
    mods = _project_modules()
    graph = {}
    for name, path in mods.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                cands = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                cands = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            out |= {c for c in cands if c in mods}
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
    """Ctx.section knows no section by name: what sits under the questions is registered (ui/hooks.py)."""
    src = (ROOT / "ui" / "page.py").read_text(encoding="utf-8")
    assert "questions" not in src and "show_answers" not in src
    assert "hooks.register(" in (ROOT / "app.py").read_text(encoding="utf-8")
