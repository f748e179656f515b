"""The documentation in the repository: a short README, docs/ that stands on its own.

- README.md stays at most 12 kB;
- README.md and docs/*.md never point outside the repository (``../shared``) and never cite
  "issue N" (history belongs in git, not in the docs);
- every relative link and image in them resolves to a file or folder of the repository, and a link
  to a heading (``file.md#anchor``) names a heading that exists;
- the README's Quick start is exactly the two commands ``make run`` and ``make test``;
- every lesson page of the registry has its section in docs/constructions.md, headed by the page's
  English title and its stem: ``## <title> (`<stem>`)``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ui.kit import files

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MARKDOWN = [README, *DOCS]
README_MAX_BYTES = 12 * 1024
NOT_LESSONS = {"home", "glossary"}

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text without code blocks, math and inline code (where brackets are not links)."""
    for rx in (_FENCE, _DISPLAY_MATH, _INLINE_MATH, _INLINE_CODE):
        text = rx.sub(" ", text)
    return text


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = heading.strip().lower().replace("`", "")
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub(" ", path.read_text(encoding="utf-8"))
    return {_slug(h) for h in _HEADING.findall(text)}


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_readme_is_short():
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes, at most {README_MAX_BYTES}: move detail to docs/"


@pytest.mark.parametrize("path", MARKDOWN, ids=_rel)
def test_no_pointer_outside_the_repository_and_no_issue_numbers(path):
    text = path.read_text(encoding="utf-8")
    bad = [
        f"line {i}: {line.strip()[:80]}"
        for i, line in enumerate(text.splitlines(), 1)
        if "../shared" in line or re.search(r"\bissues?\s*#?\d", line, re.I)
    ]
    assert not bad, f"{_rel(path)} cites ../shared or an issue number:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", MARKDOWN, ids=_rel)
def test_relative_links_resolve(path):
    broken = []
    for target in _LINK.findall(_prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {_rel(dest)}")
        elif ROOT not in dest.parents and dest != ROOT:
            broken.append(f"{target}: outside the repository")
    assert not broken, f"{_rel(path)}:\n" + "\n".join(broken)


def test_quick_start_is_the_two_commands():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^## Quick start\s*$(.*?)(?=^## )", text, re.S | re.M)
    assert m, "README.md has no '## Quick start' section"
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", m.group(1), re.S | re.M)
    assert len(blocks) == 1, "the Quick start has exactly one code block"
    commands = [line.split("#", 1)[0].strip() for line in blocks[0].splitlines()]
    assert [c for c in commands if c] == ["make run", "make test"]


def test_every_lesson_page_has_its_construction_section():
    from ui.kit.nav import PAGES

    text = (ROOT / "docs" / "constructions.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    missing = []
    for e in PAGES:
        if e.stem in NOT_LESSONS:
            continue
        title = tomllib.loads(files.text_file(e.stem, "en").read_text(encoding="utf-8"))["title"]
        want = f"{title} (`{e.stem}`)"
        if want not in headings:
            missing.append(want)
    assert not missing, "docs/constructions.md lacks the sections:\n" + "\n".join(f"## {w}" for w in missing)


def test_code_and_config_point_nowhere_outside_the_repository():
    """Docstrings and comments too: no ../shared, no CONSTRUCTIONS.md (a clone has neither; the
    specification is docs/constructions.md) and no issue numbers (the tracker is not in the clone)."""
    import subprocess

    files = subprocess.run(
        ["git", "ls-files", "*.py", "*.sh", "*.toml", "*.yml", "*.yaml", "*.conf", "Makefile", "Dockerfile", ".ci/run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    me = Path(__file__).resolve()
    bad = []
    for name in files:
        path = ROOT / name
        if path.resolve() == me or not path.is_file():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if "../shared" in line or "CONSTRUCTIONS.md" in line or re.search(r"\bissues?\s*#?\d", line, re.I):
                bad.append(f"{name}:{i}: {line.strip()[:80]}")
    assert not bad, "points outside the repository:\n" + "\n".join(bad[:20])
