"""Files the package carries for its users: the example topology (what a new
``topology.env`` starts from) and the agent skill (``SKILL.md``).

These are the canonical copies; the repository's root holds the same two files for people
reading it, and a test holds them identical.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["EXAMPLE_TOPOLOGY", "SKILL", "example_topology", "skill"]

EXAMPLE_TOPOLOGY = "topology.env.example"
SKILL = "SKILL.md"


def read(name: str) -> str:
    """The text of one of the package's data files (``EXAMPLE_TOPOLOGY`` or ``SKILL``)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def example_topology() -> str:
    """The example topology.env, with every variable explained."""
    return read(EXAMPLE_TOPOLOGY)


def skill() -> str:
    """The agent skill: how an agent uses the tools with hosted-model-ctl."""
    return read(SKILL)
