"""What a host with several model endpoints asks of the sites and of hosted-model-ctl
(issue 48), decided without any host: a Connector per endpoint on its hub, a Listener per
endpoint on the local site and on the cluster, and a model action per endpoint, each
naming that endpoint's profile."""

from __future__ import annotations

from skupper_mcp.engine.desired.cluster import base_resources
from skupper_mcp.engine.desired.podman import hub_resources, local_base_resources
from skupper_mcp.engine.model_actions import model_actions, status_actions
from skupper_mcp.models import SiteResult
from skupper_mcp.topology import parse_topology
from topology_samples import SMALL_TOPOLOGY, TWO_ENDPOINTS_TOPOLOGY

CLUSTER = "CRC_SITE_NAME=crc-test\nCRC_ALPHA_CHAT_PORT=8100\nCRC_ALPHA_EMBED_PORT=8101\n"


def _specs(resources: list[dict], kind: str) -> dict[str, dict]:
    return {r["metadata"]["name"]: r["spec"] for r in resources if r["kind"] == kind}


def test_the_hub_has_a_connector_per_endpoint() -> None:
    t = parse_topology(TWO_ENDPOINTS_TOPOLOGY)
    connectors = _specs(hub_resources(t.providers[0], t.pools), "Connector")
    assert connectors == {
        "model-api-alpha-chat": {
            "routingKey": "model-api-alpha-chat",
            "host": "127.0.0.1",
            "port": 9000,
        },
        "model-api-alpha-embed": {
            "routingKey": "model-api-alpha-embed",
            "host": "127.0.0.1",
            "port": 9001,
        },
    }


def test_the_consumers_have_a_listener_per_endpoint() -> None:
    t = parse_topology(TWO_ENDPOINTS_TOPOLOGY + CLUSTER)
    local = _specs(local_base_resources(t), "Listener")
    assert {name: spec["port"] for name, spec in local.items()} == {
        "model-api-alpha-chat": 9000,
        "model-api-alpha-embed": 9001,
        "model-api-beta": 10000,
    }
    cluster = _specs(base_resources(t), "Listener")
    assert cluster == {
        "model-listener-alpha-chat": {
            "routingKey": "model-api-alpha-chat",
            "host": "model-listener-alpha-chat",
            "port": 8100,
        },
        "model-listener-alpha-embed": {
            "routingKey": "model-api-alpha-embed",
            "host": "model-listener-alpha-embed",
            "port": 8101,
        },
    }


def test_the_single_port_form_asks_for_what_it_did() -> None:
    t = parse_topology(SMALL_TOPOLOGY)
    assert list(_specs(hub_resources(t.providers[0], []), "Connector")) == ["model-api-alpha"]
    assert list(_specs(local_base_resources(t), "Listener")) == [
        "model-api-alpha",
        "model-api-beta",
    ]


def _up(host: str) -> SiteResult:
    return SiteResult(
        host=host, site=f"hub-{host}", role="provider", platform="podman", outcome="up",
        changed=True,
    )  # fmt: skip


def test_each_endpoint_gets_its_own_model_action_with_its_profile() -> None:
    t = parse_topology(TWO_ENDPOINTS_TOPOLOGY)
    served = {"alpha/chat": ["org/alpha-small"], "alpha/embed": None}
    actions = model_actions("up", t, [_up("alpha")], served)
    assert [(a.host, a.endpoint, a.action, a.profile) for a in actions] == [
        ("alpha", "alpha/chat", "start", "a-small"),  # the one it serves
        ("alpha", "alpha/embed", "start", "a-embed"),  # its default
    ]
    # a requested profile starts on its own endpoint only
    asked = model_actions("up", t, [_up("alpha")], served, "a-embed")
    assert [(a.endpoint, a.profile) for a in asked] == [("alpha/embed", "a-embed")]
    stops = model_actions("down", t, [_up("alpha").model_copy(update={"outcome": "down"})], {})
    assert [(a.endpoint, a.profile) for a in stops] == [
        ("alpha/chat", "a-big"),
        ("alpha/embed", "a-embed"),
    ]
    status = status_actions(t, {"alpha": True, "beta": True}, {})
    assert [(a.host, a.endpoint, a.profile) for a in status] == [
        ("alpha", "alpha/chat", "a-big"),
        ("alpha", "alpha/embed", "a-embed"),
        ("beta", None, "b-fast"),
    ]
