"""One version, written where people read it: pyproject.toml, CITATION.cff, the changelog, the deploy files."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_the_version_is_semver():
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version())


def test_citation_and_changelog_name_the_version():
    v = _version()
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf"^version: {re.escape(v)}$", cff, re.M)
    assert "cff-version: 1.2.0" in cff and re.search(r"^license: MIT$", cff, re.M)
    log = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(v)}\] — \d{{4}}-\d\d-\d\d$", log, re.M), "CHANGELOG.md has no section for it"


def test_the_deploy_files_run_this_version():
    v = _version()
    compose = (ROOT / "deploy" / "docker-compose.yml").read_text(encoding="utf-8")
    assert f"tokens-on-the-sphere:${{TAG:-{v}}}" in compose
    k8s = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "deploy" / "k8s").glob("*.yaml")))
    tags = set(re.findall(r"tokens-on-the-sphere:(\d+\.\d+\.\d+)", k8s))
    assert tags == {v}, tags


def test_the_licence_covers_code_and_texts():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in text and "CC BY 4.0" in text
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == "MIT AND CC-BY-4.0"
