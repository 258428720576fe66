"""A host with several model endpoints named by its name alone: what takes one model
(resolve_profile, test_model) says which endpoints exist rather than picking the first,
and what acts on a site (up, down) acts on the host and names every endpoint it brings."""

from __future__ import annotations

import pytest

from skupper_mcp.engine.operations.resolve import resolve_static
from skupper_mcp.engine.operations.updown import endpoints_note
from skupper_mcp.errors import ConfigError
from skupper_mcp.naming import Names
from skupper_mcp.results import SiteResult
from skupper_mcp.topology import parse_topology
from topology_samples import SMALL_TOPOLOGY, TWO_ENDPOINTS_TOPOLOGY

TOPOLOGY = parse_topology(TWO_ENDPOINTS_TOPOLOGY)


def _site(host: str, outcome: str = "up") -> SiteResult:
    role = "consumer" if host == "local" else "provider"
    return SiteResult.model_validate(
        {"host": host, "site": f"hub-{host}", "role": role, "platform": "podman",
         "outcome": outcome, "changed": True}
    )  # fmt: skip


def test_resolve_of_a_host_with_endpoints_names_each_not_the_first() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_static(TOPOLOGY, "alpha")
    said = str(caught.value)
    assert "alpha serves several model endpoints" in said
    assert "alpha/chat (a-big, a-small)" in said and "alpha/embed (a-embed)" in said
    # an endpoint, or a profile, names one
    embed = resolve_static(TOPOLOGY, "alpha/embed")
    assert not isinstance(embed, ConfigError) and getattr(embed, "label", "") == "alpha/embed"
    # a single-port host is its one endpoint, as before
    assert getattr(resolve_static(TOPOLOGY, "beta"), "label", "") == "beta"


def test_up_and_down_name_every_endpoint_of_a_host_they_act_on() -> None:
    results = [_site("alpha"), _site("local")]
    assert endpoints_note(TOPOLOGY, results, "up", None) == (
        "; endpoints brought up: alpha/chat, alpha/embed"
    )
    named = endpoints_note(TOPOLOGY, results, "up", "alpha/embed")
    assert named.endswith("(the site of alpha/embed serves them all)")
    assert "taken down: alpha/chat, alpha/embed" in endpoints_note(TOPOLOGY, results, "down", None)
    # a skipped host brings none; single-port hosts need no note
    assert endpoints_note(TOPOLOGY, [_site("alpha", "skipped")], "up", None) == ""
    assert endpoints_note(TOPOLOGY, [_site("beta")], "up", None) == ""
    small = parse_topology(SMALL_TOPOLOGY)
    assert endpoints_note(small, [_site("alpha"), _site("beta")], "up", None) == ""


def test_up_downs_target_description_names_the_endpoints() -> None:
    said = Names.of(TOPOLOGY).target()
    assert "model endpoints (alpha/chat, alpha/embed: its whole host" in said
    assert "endpoints" not in Names.of(parse_topology(SMALL_TOPOLOGY)).target()
