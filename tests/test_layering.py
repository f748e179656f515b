"""The architecture in one test: sim/ is pure numerics, pages stay thin."""
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
    assert "def render" in got[0][1] and "@cached_figure" in got[1][1]
