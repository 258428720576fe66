"""Fixtures shared by the foundation's tests: the example topology and small topologies."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "topology.env.example"


@pytest.fixture
def example_path() -> Path:
    """The repository's topology.env.example."""
    return EXAMPLE


@pytest.fixture
def write_topology(tmp_path: Path):
    """Write topology text to a file and return its path."""

    def write(text: str, name: str = "topology.env") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write
