"""Files the package carries for its users: the starter topology (what ``skupper-mcp
init`` writes for a new ``topology.env``) and the agent skill (``SKILL.md``).

These are the canonical copies. The repository's root holds the same ``SKILL.md`` for people
reading it (a test holds the two identical) and ``topology.env.example``, the reference
topology with every variable, which the tests and CI run against.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["SKILL", "STARTER_TOPOLOGY", "skill", "starter_topology"]

STARTER_TOPOLOGY = "starter-topology.env"
SKILL = "SKILL.md"


def read(name: str) -> str:
    """The text of one of the package's data files (``STARTER_TOPOLOGY`` or ``SKILL``)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def starter_topology() -> str:
    """The starter topology.env: one GPU host with placeholders, the rest commented out."""
    return read(STARTER_TOPOLOGY)


def skill() -> str:
    """The agent skill: how an agent uses the tools with hosted-model-ctl."""
    return read(SKILL)
