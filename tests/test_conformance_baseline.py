"""The conformance scenarios CI expects to fail are the ones docs/server.md explains."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCENARIO = re.compile(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`")


def baseline() -> list[str]:
    text = (ROOT / ".ci" / "conformance-baseline.yml").read_text()
    return re.findall(r"^\s+- ([a-z0-9-]+)\s*$", text, flags=re.MULTILINE)


def explained() -> set[str]:
    """The scenario names in the bullets of docs/server.md's "MCP conformance" section."""
    readme = (ROOT / "docs" / "server.md").read_text()
    section = readme.split("\n## MCP conformance\n", 1)[1].split("\n## ", 1)[0]
    bullets = section[section.index("\n- ") :]
    return set(SCENARIO.findall(bullets))


def test_every_expected_failure_is_explained_in_the_docs() -> None:
    listed = baseline()
    assert len(listed) == len(set(listed)), listed
    assert "server-initialize" not in listed and "tools-list" not in listed
    assert set(listed) == explained()
