"""A model pool on the Kubernetes site too (``POOL_<NAME>_CRC_PORT``): a priority pool is a
MultiKeyListener there, whose Service answers from the first provider and fails over; the
cluster's row in status says what the controller writes on it; a change of strategy leaves
nothing of the old one on the cluster (the CRD holds a MultiKeyListener's strategy kind
immutable: priority to weighted is a new object).

A world of its own, every site (the cluster too) on Skupper 2.2.1.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_mcp.results import OperationResult, PoolStatus
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import CRC_NAMESPACE, WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.usefixtures("bounded_mcp_clients")]

CRC_PORT = 8100
VERSIONS = {"rhel-ai": "2.2.1", "rhtevan-work": "2.2.1", "local": "2.2.1", "crc": "2.2.1"}
#: The world of this file: two providers and the cluster, every site on Skupper 2.2.1.
SPEC = WorldSpec(providers=2, kubernetes=True, skupper_versions=VERSIONS)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("pool-cluster"), SPEC) as w:
        yield w


def granite(world: World, strategy: str) -> Path:
    path = world.dir / f"topology-cluster-{strategy}.env"
    weights = "POOL_GRANITE_WEIGHTS=rhel-ai=3\n" if strategy == "weighted" else ""
    path.write_text(
        world.topology.read_text()
        + '\nPOOLS="granite"\nPOOL_GRANITE_PROVIDERS="rhel-ai rhtevan-work"\n'
        + f"POOL_GRANITE_LOCAL_PORT=9100\nPOOL_GRANITE_STRATEGY={strategy}\n"
        + f"POOL_GRANITE_CRC_PORT={CRC_PORT}\nSKUPPER_MIN_VERSION=2.2.0\n{weights}"
    )
    return path


def custom_objects(world: World, plural: str) -> dict[str, dict[str, Any]]:
    api = k8s_config.new_client_from_config(config_file=str(world.dir / "kube" / "kubeconfig"))
    found = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
        "skupper.io", "v2alpha1", CRC_NAMESPACE, plural
    )
    assert isinstance(found, dict)
    return {item["metadata"]["name"]: item for item in found["items"]}


async def cluster_model(world: World) -> str | None:
    try:
        async with httpx.AsyncClient(timeout=2) as http:
            reply = await http.get(f"http://{world.addresses['crc']}:{CRC_PORT}/v1/models")
    except httpx.HTTPError:
        return None
    return str(reply.json()["data"][0]["id"]) if reply.status_code == 200 else None


def model_of(world: World, host: str) -> str:
    model = world.info.host(host).default_model_id
    assert model is not None
    return model


async def cluster_row(engine: Engine) -> PoolStatus:
    [pool] = (await engine.status()).pools
    assert pool.cluster is not None, pool
    return pool.cluster


async def test_a_priority_pool_on_the_cluster_is_a_multikeylistener_that_fails_over(
    world: World,
) -> None:
    first, second = model_of(world, "rhel-ai"), model_of(world, "rhtevan-work")
    async with Engine(load_topology(granite(world, "priority"))) as engine:
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        assert "pool-granite" in custom_objects(world, "multikeylisteners")

        async def from_first() -> bool:
            return await cluster_model(world) == first

        assert await eventually(from_first, timeout=60, what="the cluster's pool from rhel-ai")

        async def reported() -> bool:
            row = await cluster_row(engine)
            return row.reachable_keys == ["model-api-rhel-ai", "model-api-rhtevan-work"]

        assert await eventually(reported, timeout=30, what="both keys reachable on the cluster")
        row = await cluster_row(engine)
        assert (row.state, row.preferred, row.resource, row.bound) == (
            "serving",
            "rhel-ai",
            "Ready",
            True,
        )
        assert row.service == f"model-pool-granite.{CRC_NAMESPACE}:{CRC_PORT}"
        status = await engine.status()
        assert [(s.host, s.drift) for s in status.sites if s.drift] == []
        assert f"pool granite on crc-sandbox :{CRC_PORT} serving" in status.summary
        catalog = await engine.models()
        [model] = [r for r in catalog.rows if r.host == "granite"]
        assert model.cluster_base_url == (
            f"http://model-pool-granite.{CRC_NAMESPACE}.svc:{CRC_PORT}/v1"
        )
        assert model.pool is not None and model.pool.cluster is not None
        assert model.pool.cluster.reachable_keys == ["model-api-rhel-ai", "model-api-rhtevan-work"]

        started = time.monotonic()
        assert (await engine.down("rhel-ai")).ok

        async def from_second() -> bool:
            return await cluster_model(world) == second

        assert await eventually(from_second, timeout=60, what="the cluster's pool failing over")
        print(
            f"cluster pool: from rhtevan-work {time.monotonic() - started:.2f} s after down began"
        )

        async def dropped() -> bool:
            return (await cluster_row(engine)).reachable_keys == ["model-api-rhtevan-work"]

        assert await eventually(dropped, timeout=60, what="the controller to drop rhel-ai's key")
        row = await cluster_row(engine)
        assert (row.state, row.preferred) == ("degraded", "rhtevan-work")
        assert (await engine.up("rhel-ai")).ok
        assert await eventually(from_first, timeout=60, what="the cluster's pool back on rhel-ai")


async def test_a_strategy_change_on_the_cluster_leaves_nothing_of_the_old_one(
    world: World,
) -> None:
    """priority -> weighted (the same MultiKeyListener made anew: the CRD refuses the other
    kind in place) -> any (the MultiKeyListener removed, a Listener on the same Service)."""
    async with Engine(load_topology(granite(world, "priority"))) as engine:
        assert (await engine.setup()).ok
    async with Engine(load_topology(granite(world, "weighted"))) as engine:
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        held = custom_objects(world, "multikeylisteners")["pool-granite"]
        assert held["spec"]["strategy"] == {
            "weighted": {"routingKeys": {"model-api-rhel-ai": 3, "model-api-rhtevan-work": 1}}
        }
    async with Engine(load_topology(granite(world, "any"))) as engine:
        status = await engine.status()
        [crc] = [s for s in status.sites if s.host == "crc"]
        assert any(
            line.startswith("MultiKeyListener/pool-granite: left by") for line in crc.drift or []
        ), crc.drift
        plan = await engine.setup(plan=True)
        assert isinstance(plan, OperationResult)
        [site] = [s for s in plan.sites if s.host == "crc"]
        steps = [s.name for s in site.steps]
        assert steps[:2] == ["remove resources", "apply site and listeners"], steps
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        assert "pool-granite" not in custom_objects(world, "multikeylisteners")
        assert custom_objects(world, "listeners")["pool-granite"]["spec"] == {
            "routingKey": "pool-granite",
            "host": "model-pool-granite",
            "port": CRC_PORT,
        }

        async def answering() -> bool:
            return await cluster_model(world) is not None

        assert await eventually(answering, timeout=60, what="the any pool on the cluster")
        status = await engine.status()
        assert [(s.host, s.drift) for s in status.sites if s.drift] == []
