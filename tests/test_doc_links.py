"""The README's and docs/' links to a section of another document land on a heading of
that document: a section renamed or moved breaks a test, not a reader's click."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]*\.md)?#([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings: lower case, punctuation but
    ``-`` and ``_`` dropped, each space a ``-`` (code blocks hold no heading)."""
    text = FENCE.sub("", path.read_text())
    return {
        re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-") for title in HEADING.findall(text)
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_section_link_lands_on_a_heading(doc: Path) -> None:
    broken = []
    for target, anchor in LINK.findall(FENCE.sub("", doc.read_text())):
        linked = (doc.parent / target).resolve() if target else doc
        if not linked.is_file() or anchor not in anchors(linked):
            broken.append(f"{target or doc.name}#{anchor}")
    assert broken == [], f"{doc.name} links to sections that are not there: {broken}"


def test_the_readme_links_each_section_of_the_configuration_reference() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\(docs/configuration\.md#([^)\s]+)\)", readme))
    assert linked == anchors(ROOT / "docs" / "configuration.md") - {"configuration-for-real-hosts"}
