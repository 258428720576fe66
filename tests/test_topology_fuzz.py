"""Whatever text topology.env holds, parsing ends in a Topology or a ConfigError."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from skupper_mcp.errors import ConfigError
from skupper_mcp.topology import parse_topology
from topology_samples import SMALL_TOPOLOGY

KEYS = [line.split("=", 1)[0] for line in SMALL_TOPOLOGY.splitlines()] + [
    "CRC_SITE_NAME",
    "CRC_MODEL_PORT",
    "CRC_ROUTING_KEY",
    "CRC_ALPHA_PORT",
    "SSH_CONNECT_TIMEOUT",
    "SKUPPER_MIN_VERSION",
    "LOCAL_SSH_HOST",
]


def _parse(text: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_topology(text, "fuzz.env")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_raises_only_config_error(text: str) -> None:
    _parse(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KEYS), st.text(max_size=30)), max_size=12))
def test_mutated_assignments_raise_only_config_error(changes: list[tuple[str, str]]) -> None:
    lines = dict(line.split("=", 1) for line in SMALL_TOPOLOGY.splitlines())
    for key, value in changes:
        lines[key] = value
    _parse("\n".join(f"{k}={v}" for k, v in lines.items()))
