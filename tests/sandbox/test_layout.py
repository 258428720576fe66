"""Planning a world: addresses, ports and blocks, without starting anything."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from skupper_sandbox import layout
from skupper_sandbox.layout import WorldSpec


def test_example_hosts_keep_their_names_ports_and_profiles(tmp_path: Path) -> None:
    info = layout.plan_world(tmp_path, "127.201.7", WorldSpec(providers=4))
    names = [h.name for h in info.hosts]
    assert names == ["local", "rhel-ai", "rhtevan-work", "provider-3", "provider-4", "crc"]
    rhel, rhtevan, p3 = info.host("rhel-ai"), info.host("rhtevan-work"), info.host("provider-3")
    assert (rhel.address, rhel.ports["inter_router"], rhel.ports["model"]) == (
        "127.201.7.2",
        8000,
        9000,
    )
    assert rhel.default_model_id == "granite-3.3-8b-instruct-fp8" and not rhel.tmp_writable
    assert (rhtevan.ports["model"], rhtevan.default_profile) == (10000, "g3b-16k")
    assert (p3.address, p3.ports["model"], p3.default_profile) == ("127.201.7.4", 10003, "p3-small")
    assert info.host("crc").address == "127.201.7.254"


def test_provider_count_is_bounded(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="between 1 and 200"):
        layout.plan_world(tmp_path, "127.201.7", WorldSpec(providers=201))


def test_a_block_in_use_is_skipped(tmp_path: Path) -> None:
    first = layout.allocate_block(tmp_path)
    assert first == layout.allocate_block(tmp_path)  # stable for one directory
    with socket.socket() as squatter:
        squatter.bind((f"{first}.1", layout.SSH_PORT))
        squatter.listen()
        second = layout.allocate_block(tmp_path)
    assert second != first and second.startswith("127.")


def test_different_directories_get_different_blocks(tmp_path: Path) -> None:
    blocks = {layout.allocate_block(tmp_path / str(i)) for i in range(20)}
    assert len(blocks) == 20


def test_skupper_versions_and_namespace_reach_host_json_and_topology(tmp_path: Path) -> None:
    """`sandbox up --skupper-version HOST=VERSION --namespace NS` (docs/sandbox.md section 5)."""
    info = layout.plan_world(
        tmp_path, "127.250.0", WorldSpec(skupper_versions={"rhel-ai": "2.2.1"}, namespace="models")
    )
    versions = {h.name: h.skupper_version for h in info.hosts if h.role != "kubernetes"}
    assert versions == {"local": "2.1.3", "rhel-ai": "2.2.1", "rhtevan-work": "2.1.3"}
    env = layout.render_topology_env(info)
    assert "RHEL_AI_NAMESPACE=models" in env and "LOCAL_NAMESPACE=models" in env
    # the cluster's release too: its controller, CRDs (MultiKeyListener from 2.2) and router
    cluster = layout.plan_world(tmp_path, "127.250.0", WorldSpec(skupper_versions={"crc": "2.2.1"}))
    assert [h.skupper_version for h in cluster.hosts if h.role == "kubernetes"] == ["2.2.1"]
    with pytest.raises(ValueError, match="no host gpu9"):
        layout.plan_world(tmp_path, "127.250.0", WorldSpec(skupper_versions={"gpu9": "2.2.1"}))


def test_embeddings_hosts_get_a_second_server_and_two_endpoints(tmp_path: Path) -> None:
    """`sandbox up --embeddings HOST` (docs/sandbox.md section 6): the world's topology
    declares the host's chat and embed endpoints, which the product's parse accepts."""
    from skupper_mcp.topology import parse_topology

    spec = WorldSpec(providers=3, embeddings_hosts=frozenset({"rhel-ai", "provider-3"}))
    info = layout.plan_world(tmp_path, "127.250.0", spec)
    embed = {h.name: h.ports.get("embed") for h in info.providers}
    assert embed == {"rhel-ai": 9500, "rhtevan-work": None, "provider-3": 10503}
    topology = parse_topology(layout.render_topology_env(info))
    labels = [e.label for e in topology.model_endpoints()]
    assert labels == ["rhel-ai/chat", "rhel-ai/embed", "rhtevan-work", "provider-3/chat",
                      "provider-3/embed"]  # fmt: skip
    chat, embedding = topology.providers[0].endpoints
    assert (chat.routing_key, chat.local_port) == ("model-api-rhel-ai", 9000)  # kept as it was
    assert embedding.profiles == {"rhel-ai-embed": layout.EMBED_MODEL_ID}
    assert embedding.model_container == layout.EMBED_CONTAINER
    assert topology.kubernetes is not None
    assert topology.kubernetes.listeners == {
        "rhel-ai/chat": 8000,
        "rhtevan-work": 8001,
        "rhel-ai/embed": 8002,
        "provider-3/embed": 8003,
    }
    with pytest.raises(ValueError, match="no provider local for --embeddings"):
        layout.plan_world(tmp_path, "127.250.0", WorldSpec(embeddings_hosts=frozenset({"local"})))
