"""What a host with several model endpoints asks of the sites and of hosted-model-ctl
(issue 48), decided without any host: a Connector per endpoint on its hub, a Listener per
endpoint on the local site and on the cluster, and a model action per endpoint, each
naming that endpoint's profile."""

from __future__ import annotations

import json
from pathlib import Path

from fake_connector import FakeConnector, framed
from result_parts import podman_result
from skupper_mcp.engine.desired.cluster import base_resources
from skupper_mcp.engine.desired.podman import hub_resources, local_base_resources
from skupper_mcp.engine.model_actions import model_actions, status_actions
from skupper_mcp.engine.operations import catalog
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.results import SiteResult
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
    return podman_result(host, "up")


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
    named = model_actions("up", t, [_up("alpha")], served, None, "alpha/embed")
    assert [(a.endpoint, a.profile) for a in named] == [("alpha/embed", "a-embed")]
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


FOUR_ENDPOINTS = TWO_ENDPOINTS_TOPOLOGY.replace(
    'BETA_MODEL_PORT=10000\nBETA_PROFILES="b-fast=org/beta-fast"\n',
    'BETA_ENDPOINTS="one two"\n'
    "BETA_ONE_MODEL_PORT=10000\n"
    'BETA_ONE_PROFILES="b-fast=org/beta-fast"\n'
    "BETA_TWO_MODEL_PORT=10001\n"
    'BETA_TWO_PROFILES="b-two=org/beta-two"\n',
)


def _models_read(ids: list[str]) -> str:
    """A stopped site's state read whose model endpoints answered ``ids``, one each."""
    lines = ["@@user tester", "@@podman /usr/bin/podman"]
    for i, model_id in enumerate(ids):
        section = "models" if i == 0 else f"models-{i}"
        body = json.dumps({"object": "list", "data": [{"id": model_id}]})
        lines += [f"@@section {section}", body, "@@rc 0"]
    return framed("\n".join([*lines, "@@end"]) + "\n")


class _Recording:
    """Hands each host one FakeConnector, answering its state read, and keeps them."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.connectors: dict[str, FakeConnector] = {}
        self.answers = answers

    async def get(self, name: str, target: object) -> FakeConnector:
        if name not in self.connectors:
            fake = FakeConnector(name)
            fake.on("@@section version", _models_read(self.answers.get(name, [])))
            self.connectors[name] = fake
        return self.connectors[name]


async def test_models_reads_four_endpoints_on_two_hosts_in_one_round_trip_each(
    tmp_path: Path,
) -> None:
    """``models`` with 4 endpoints on 2 hosts: each host's one state read asks all its
    endpoints' /v1/models (issue 48's bench bound, counted here by the commands run)."""
    t = parse_topology(FOUR_ENDPOINTS + f"STATE_DIR={tmp_path}\n", tmp_path / "topology.env")
    pool = _Recording({"alpha": ["org/alpha-big", "org/alpha-embed"], "beta": ["org/beta-fast"]})
    result = await catalog.run(SiteMap(t, pool, None))  # type: ignore[arg-type]
    for host, urls in (("alpha", (9000, 9001)), ("beta", (10000, 10001))):
        [command] = pool.connectors[host].commands
        for port in urls:
            assert f"http://127.0.0.1:{port}/v1/models" in command, host
    rows = {r.host: r for r in result.rows}
    assert list(rows) == ["alpha/chat", "alpha/embed", "beta/one", "beta/two"]
    # stopped routers: no route to prove, each row says so, with each endpoint's profile
    assert {r.state for r in rows.values()} == {"provider-stopped"}, rows
    assert rows["alpha/embed"].profile == "a-embed" and rows["beta/two"].profile == "b-two"
